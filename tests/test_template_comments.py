"""Django's {# ... #} comment ends on its own line: one left open runs on as text on the page (it
did at the foot of the study form). Longer notes go in {% comment %} blocks."""

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def test_every_one_line_comment_closes_on_its_line():
    open_comments = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.count("{#") > line.count("#}")
    ]
    assert open_comments == []
