"""The study report rendered as CSV, Markdown and one self-contained HTML page. No database."""

import copy
import csv
import io
import random
import re
from html.parser import HTMLParser

import pytest

from annotation.reporting.render import CSV_TYPE_COLUMNS, MEAN_ROW_LABEL, to_csv, to_html, to_markdown

TYPE_NAMES = [
    "Bingo",
    "Click_Order",
    "Coordinates",
    "Connect_icon",
    "Dart_Count",
    "Dice_Count",
    "Geometry_Click",
    "Hold_Button",
    "Image_Matching",
    "Image_Recognition",
    "Misleading_Click",
    "Object_Match",
    "Patch_Select",
    "Path_Finder",
    "Pick_Area",
    "Place_Dot",
    "Rotation_Match",
    "Select_Animal",
    "Slide_Puzzle",
    "Unusual_Detection",
]


def sample_report() -> dict:
    """The report from the brief: one type, one agent."""
    return {
        "study": {"id": 3, "name": "Pilot", "split": "test", "overlap": 2, "attempts_per_puzzle": 1},
        "generated_at": "2026-11-30T04:00:00+00:00",
        "annotators": 12,
        "excluded_annotators": 1,
        "types": [
            {
                "type": "Bingo",
                "attempts": 40,
                "puzzles": 20,
                "correct": 35,
                "pass1": 0.875,
                "ci_low": 0.739,
                "ci_high": 0.946,
                "submitted": 40,
                "started": 41,
                "submission_rate": 0.9756,
                "wall_median_ms": 5200.0,
                "wall_q1_ms": 3900.0,
                "wall_q3_ms": 7100.0,
                "active_median_ms": 5000.0,
                "active_q1_ms": 3800.0,
                "active_q3_ms": 6900.0,
                "mean_actions": 3.2,
                "pass_k": None,
            },
        ],
        "overall": {
            "mean_pass1_over_types": 0.875,
            "attempts": 40,
            "puzzles": 20,
            "correct": 35,
            "pass1_pooled": 0.875,
            "ci_low": 0.739,
            "ci_high": 0.946,
        },
        "agreement": {"fleiss_kappa": 0.41, "fleiss_n": 20, "krippendorff_alpha": 0.42, "alpha_n": 20},
        "agents": [
            {
                "name": "openai:gpt-x",
                "source": "harness",
                "model": "gpt-x",
                "rollouts_per_puzzle": 5,
                "types": [{"type": "Bingo", "puzzles": 20, "pass1": 0.35, "pass_k": {"5": 0.6}}],
                "mean_pass1_over_types": 0.35,
                "pass_at": {"1": 0.35, "5": 0.6},
            },
        ],
        "times": {"Bingo": {"wall_ms": [5200.0, 3900.0], "active_ms": [5000.0, 3800.0]}},
    }


def realistic_report(seed: int = 4) -> dict:
    """Twenty types, two agents, skewed times with slow outliers: what a real study looks like."""
    rng = random.Random(seed)
    types, times = [], {}
    for name in TYPE_NAMES:
        attempts = rng.randint(30, 60)
        correct = rng.randint(attempts // 2, attempts)
        p = correct / attempts
        half = 1.96 * (p * (1 - p) / attempts) ** 0.5 + 0.02
        wall = sorted(rng.lognormvariate(rng.uniform(1.2, 2.8), 0.5) * 1000 for _ in range(attempts))
        wall[-1] *= 6  # someone walked away
        active = [w * rng.uniform(0.8, 1.0) for w in wall]
        times[name] = {"wall_ms": wall, "active_ms": active}
        types.append(
            {
                "type": name,
                "attempts": attempts,
                "puzzles": attempts // 2,
                "correct": correct,
                "pass1": p,
                "ci_low": max(0.0, p - half),
                "ci_high": min(1.0, p + half),
                "submitted": attempts,
                "started": attempts + rng.randint(0, 3),
                "submission_rate": attempts / (attempts + 1),
                "wall_median_ms": _quantile(wall, 0.5),
                "wall_q1_ms": _quantile(wall, 0.25),
                "wall_q3_ms": _quantile(wall, 0.75),
                "active_median_ms": _quantile(active, 0.5),
                "active_q1_ms": _quantile(active, 0.25),
                "active_q3_ms": _quantile(active, 0.75),
                "mean_actions": rng.uniform(1, 12),
                "pass_k": None,
            }
        )
    agents = []
    for name, skill in (("openai:gpt-x", 0.45), ("anthropic:claude-y <b>beta</b>", 0.65)):
        rows = [
            {
                "type": t,
                "puzzles": 20,
                "pass1": min(1.0, max(0.0, rng.gauss(skill, 0.2))),
                "pass_k": {"5": min(1.0, skill + 0.2)},
            }
            for t in TYPE_NAMES
        ]
        rows[3]["pass1"] = None  # the agent skipped a type
        known = [r["pass1"] for r in rows if r["pass1"] is not None]
        agents.append(
            {
                "name": name,
                "source": "harness",
                "model": name.split(":")[1],
                "rollouts_per_puzzle": 5,
                "types": rows,
                "mean_pass1_over_types": sum(known) / len(known),
                "pass_at": {"1": sum(known) / len(known), "5": min(1.0, skill + 0.2)},
            }
        )
    mean = sum(t["pass1"] for t in types) / len(types)
    attempts = sum(t["attempts"] for t in types)
    correct = sum(t["correct"] for t in types)
    return {
        "study": {"id": 7, "name": "Main study — winter 2026", "split": "test", "overlap": 3, "attempts_per_puzzle": 1},
        "generated_at": "2026-11-30T04:00:00+00:00",
        "annotators": 64,
        "excluded_annotators": 3,
        "types": types,
        "overall": {
            "mean_pass1_over_types": mean,
            "attempts": attempts,
            "puzzles": sum(t["puzzles"] for t in types),
            "correct": correct,
            "pass1_pooled": correct / attempts,
            "ci_low": correct / attempts - 0.015,
            "ci_high": correct / attempts + 0.015,
        },
        "agreement": {"fleiss_kappa": 0.38, "fleiss_n": 310, "krippendorff_alpha": 0.39, "alpha_n": 400},
        "agents": agents,
        "times": times,
    }


def _quantile(values, q):
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def sparse_report() -> dict:
    """Agreement None, no agents, no times, and Nones in the numbers."""
    report = sample_report()
    report["study"]["overlap"] = 1
    report["agreement"] = None
    report["agents"] = []
    report["times"] = {}
    row = report["types"][0]
    for key in (
        "ci_low",
        "ci_high",
        "submission_rate",
        "wall_median_ms",
        "wall_q1_ms",
        "wall_q3_ms",
        "active_median_ms",
        "active_q1_ms",
        "active_q3_ms",
        "mean_actions",
    ):
        row[key] = None
    return report


def class_count(html: str, cls: str) -> int:
    return len(re.findall(rf'class="{re.escape(cls)}"', html))


class Tags(HTMLParser):
    """Collects start tags and checks that every opened element is closed in order."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "line", "rect", "circle", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.errors = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def parse(html: str) -> Tags:
    parser = Tags()
    parser.feed(html)
    parser.close()
    return parser


# --- CSV ----------------------------------------------------------------------------------------


def test_csv_parses_back_with_the_header_values_agent_column_and_mean_row():
    rows = list(csv.DictReader(io.StringIO(to_csv(sample_report()))))
    reader = csv.DictReader(io.StringIO(to_csv(sample_report())))
    assert reader.fieldnames == [*CSV_TYPE_COLUMNS, "agent:openai:gpt-x:pass1"]
    assert reader.fieldnames[:5] == ["type", "attempts", "puzzles", "correct", "pass1"]
    assert len(rows) == 2
    bingo, mean = rows
    assert bingo["type"] == "Bingo"
    assert bingo["attempts"] == "40" and bingo["puzzles"] == "20" and bingo["correct"] == "35"
    assert float(bingo["pass1"]) == 0.875
    assert float(bingo["ci_low"]) == 0.739 and float(bingo["ci_high"]) == 0.946
    assert bingo["submission_rate"] == "0.9756"  # unrounded
    assert float(bingo["wall_q3_ms"]) == 7100.0 and float(bingo["active_median_ms"]) == 5000.0
    assert float(bingo["mean_actions"]) == 3.2
    assert float(bingo["agent:openai:gpt-x:pass1"]) == 0.35
    assert mean["type"] == MEAN_ROW_LABEL == "MEAN OVER TYPES"
    assert float(mean["pass1"]) == 0.875
    assert float(mean["agent:openai:gpt-x:pass1"]) == 0.35
    assert mean["attempts"] == "" and mean["wall_median_ms"] == ""


def test_csv_keeps_floats_unrounded_and_writes_none_as_empty():
    report = sparse_report()
    report["types"][0]["pass1"] = 2 / 3
    bingo, mean = csv.DictReader(io.StringIO(to_csv(report)))
    assert float(bingo["pass1"]) == 2 / 3
    assert bingo["ci_low"] == "" and bingo["wall_median_ms"] == "" and bingo["mean_actions"] == ""
    assert mean["type"] == "MEAN OVER TYPES"


def test_csv_puts_an_agent_that_misses_a_type_as_an_empty_cell_and_quotes_awkward_names():
    report = realistic_report()
    report["agents"][0]["name"] = 'odd, "quoted" name'
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    assert len(rows) == 21
    assert [r["type"] for r in rows[:-1]] == TYPE_NAMES
    column = 'agent:odd, "quoted" name:pass1'
    assert rows[3][column] == ""  # skipped type
    assert float(rows[-1][column]) == report["agents"][0]["mean_pass1_over_types"]


def test_csv_of_an_empty_report_is_a_header_and_the_mean_row():
    rows = list(csv.reader(io.StringIO(to_csv({"types": [], "agents": []}))))
    assert rows[0] == list(CSV_TYPE_COLUMNS)
    assert rows[1][0] == "MEAN OVER TYPES" and set(rows[1][1:]) == {""}


# --- Markdown -----------------------------------------------------------------------------------


def test_markdown_has_the_title_annotators_interval_times_and_agreement():
    md = to_markdown(sample_report())
    assert md.startswith("# Human baseline: Pilot\n")
    assert "12 annotators (1 excluded)" in md
    assert "87.5% [73.9, 94.6]" in md
    assert "40 / 20" in md  # attempts / puzzles
    assert "97.6% (40/41)" in md  # submission rate
    assert "5.2 (3.9–7.1)" in md and "5.0 (3.8–6.9)" in md  # seconds, median (IQR)
    assert "| 3.2 |" in md
    assert "Mean Pass@1 over types: 87.5%" in md
    assert "Fleiss' κ = 0.41 (n = 20 puzzles)" in md
    assert "Krippendorff's α = 0.42 (n = 20 puzzles)" in md


def test_markdown_agents_table_sets_people_against_each_agent_with_pass_k_lines():
    md = to_markdown(sample_report())
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| Type | People |"))
    assert "openai:gpt-x" in header
    assert "| Bingo | 87.5% | 35.0% · pass@5 60.0% |" in lines
    assert "| Mean over types | 87.5% | 35.0% |" in lines
    assert any(line.startswith("- **openai:gpt-x**") and "Pass@1 35.0% · Pass@5 60.0%" in line for line in lines)
    assert "5 rollouts per puzzle" in md


def test_markdown_tables_have_one_row_per_type_and_consistent_columns():
    md = to_markdown(realistic_report())
    tables, current = [], []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    assert len(tables) == 2  # per type, agents
    for table in tables:
        assert len(table) == 2 + 20 + 1  # header, rule, types, mean over types
        assert len({len(re.split(r"(?<!\\)\|", line)) for line in table}) == 1
    assert all(re.search(rf"^\| {name} \| \d+\.\d% \[", md, re.M) for name in TYPE_NAMES)
    assert "&lt;b&gt;beta&lt;/b&gt;" in md and "<b>" not in md  # agent name escaped


def test_markdown_without_agreement_agents_or_numbers_shows_dashes():
    md = to_markdown(sparse_report())
    assert "n/a (overlap 1)" in md
    assert "No agents" in md
    bingo = next(line for line in md.splitlines() if line.startswith("| Bingo |"))
    assert "| 87.5% |" in bingo  # no interval when the CI is missing
    assert bingo.count("–") >= 4


def test_markdown_escapes_markup_and_table_pipes():
    report = sample_report()
    report["study"]["name"] = "<script>alert(1)</script>"
    report["agents"][0]["name"] = "a|b"
    md = to_markdown(report)
    assert "<script" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "a\\|b" in md


# --- HTML ---------------------------------------------------------------------------------------


def test_html_is_one_self_contained_page_with_charts_and_the_numbers():
    html = to_html(sample_report())
    assert html.startswith("<!DOCTYPE html>")
    assert html.count("<svg") == 2 and "<style>" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html.lower()
    assert "<link" not in html and "src=" not in html and "url(" not in html
    assert "87.5% [73.9, 94.6]" in html
    assert "Fleiss&#x27; κ = 0.41 (n = 20 puzzles)" in html
    assert "openai:gpt-x" in html and "Pass@5 60.0%" in html
    assert class_count(html, "bar-people") == 1
    assert class_count(html, "bar-agent") == 2  # the type and the mean over types
    assert class_count(html, "box-wall") == 1 and class_count(html, "box-active") == 1
    tags = parse(html)
    assert tags.errors == [] and tags.stack == []


def test_html_escapes_a_hostile_study_name_and_agent_name():
    report = sample_report()
    report["study"]["name"] = "<script>alert(1)</script>"
    report["agents"][0]["name"] = '"><script>alert(2)</script>'
    html = to_html(report)
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert parse(html).errors == []


def test_html_draws_one_people_bar_and_two_boxes_per_type_for_twenty_types():
    report = realistic_report()
    html = to_html(report)
    assert class_count(html, "bar-people") == 20
    assert class_count(html, "bar-mean") == 1
    assert class_count(html, "bar-agent") == 2 * 20 - 2 + 2  # one skipped type each, plus the means
    assert class_count(html, "box-wall") == 20 and class_count(html, "box-active") == 20
    assert html.count('class="ci"') == 20
    assert "0%" in html and "100%" in html and "log scale" in html
    for name in TYPE_NAMES:
        assert f">{name}<" in html
    assert "&lt;b&gt;beta&lt;/b&gt;" in html and "<b>beta" not in html
    tags = parse(html)
    assert tags.errors == [] and tags.stack == []


def test_html_bars_scale_with_pass1():
    report = sample_report()
    wide = re.search(r'class="bar-people"[^>]*width="([\d.]+)"', to_html(report))
    report["types"][0]["pass1"] = 0.4375
    narrow = re.search(r'class="bar-people"[^>]*width="([\d.]+)"', to_html(report))
    assert float(narrow.group(1)) == pytest.approx(float(wide.group(1)) / 2, abs=0.2)


def test_html_renders_without_agreement_agents_or_times():
    html = to_html(sparse_report())
    assert "<svg" in html
    assert "n/a (overlap 1)" in html
    assert "No agents" in html
    assert "No times recorded" in html
    assert class_count(html, "bar-people") == 1 and class_count(html, "bar-agent") == 0
    assert "–" in html
    assert parse(html).errors == []


def test_html_box_plot_falls_back_to_the_recorded_times_and_to_the_report_quartiles():
    report = sample_report()
    row = report["types"][0]
    row["wall_median_ms"] = row["wall_q1_ms"] = row["wall_q3_ms"] = None  # computed from times
    report["times"]["Bingo"]["active_ms"] = []  # box from the report, no whiskers
    html = to_html(report)
    assert class_count(html, "box-wall") == 1 and class_count(html, "box-active") == 1


@pytest.mark.parametrize(
    "report",
    [
        {},
        {"study": None, "types": [], "overall": None, "agreement": None, "agents": [], "times": {}},
        {"types": [{"type": "Bingo"}], "agents": [{"types": []}], "times": {"Bingo": {}}},
    ],
)
def test_every_format_survives_a_nearly_empty_report(report):
    for render in (to_csv, to_markdown, to_html):
        assert render(copy.deepcopy(report))
    html = to_html(copy.deepcopy(report))
    assert "<svg" in html or "nothing to chart" in html
    assert parse(html).errors == []
