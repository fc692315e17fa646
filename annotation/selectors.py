"""Read paths of the annotation side."""
from __future__ import annotations

from django.urls import reverse

from annotation.models import Attempt
from annotation.studies import study_progress
from puzzles.registry import get_type


def attempt_page_data(*, attempt: Attempt, csrf_token: str) -> dict:
    """Everything the live page needs, and nothing of the truth: public fields and asset URLs only."""
    puzzle = attempt.puzzle
    puzzle_type = get_type(puzzle.type)
    public = puzzle.public
    data = {
        "attempt": attempt.uid,
        "widget": puzzle_type.widget,
        "auto_submit": puzzle_type.auto_submit,
        "instruction": public["instruction"],
        "layout": puzzle_type.layout(public).as_dict(),
        "images": _image_urls(attempt),
        "socket": f"/ws/attempts/{attempt.uid}/",
        "events_url": reverse("annotation:events", args=[attempt.uid]),
        "csrf": csrf_token,
        "submitted": attempt.is_closed,
        # After every batch the server holds, gaps or not: a reloaded page never reuses a number.
        "next_seq": attempt.max_seq + 1,
        "acked": attempt.acked_seq,
    }
    progress = study_progress(attempt=attempt)
    if progress:
        data["study"] = progress
    if "piece_size" in public:
        data["piece"] = {"size": public["piece_size"], "start": public["start_position"]}
    return data


def _image_urls(attempt: Attempt) -> dict:
    """Asset URLs by their role in the public data (every asset has a random file name)."""
    public = attempt.puzzle.public
    url = {asset.key: asset.file.url for asset in attempt.puzzle.assets.all()}
    images = {"image": url[public["image"]], "reference": url.get(public.get("reference"))}
    if "options" in public:
        images["options"] = [url[key] for key in public["options"]]
    if "rotations" in public:
        images["rotations"] = {angle: url[key] for angle, key in public["rotations"].items()}
    if "piece" in public:
        images["piece"] = url[public["piece"]]
    return images
