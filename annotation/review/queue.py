"""The review queue and one puzzle's review page (staff only: these read the truth): the puzzle's
own instruction, every human answer drawn over its image, the truth, and the form that corrects it
(truths.py)."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
from django.db.models import Count, Max
from PIL import Image

from annotation.models import Attempt, AuditLog, Flag
from annotation.review.truths import no_form_reason, truth_form
from puzzles.answer_marks import answer_marks
from puzzles.models import Puzzle
from puzzles.registry import get_type


def review_queue() -> list[dict]:
    """Puzzles with open flags, most flagged first, plus the consensus suspects."""
    rows = (
        Flag.objects.filter(status=Flag.Status.OPEN)
        .values("puzzle_id", "puzzle__uid", "puzzle__type")
        .annotate(flags=Count("id"), latest=Max("created_at"))
        .order_by("-flags", "-latest")
    )
    reasons: dict[int, list[str]] = {}
    for puzzle_id, reason in Flag.objects.filter(status=Flag.Status.OPEN).values_list("puzzle_id", "reason"):
        reasons.setdefault(puzzle_id, []).append(reason)
    return [{**row, "reasons": sorted(set(reasons.get(row["puzzle_id"], [])))} for row in rows]


def puzzle_review(*, puzzle: Puzzle) -> dict:
    """A puzzle with its flags, every human answer and the truth, ready to draw over its image."""
    puzzle_type = get_type(puzzle.type)
    public = puzzle.public
    images = {asset.key: asset.file.url for asset in puzzle.assets.all()}
    form = truth_form(puzzle)
    if form is not None and form.kind == "option":  # each option shown by its image
        for option in form.values["options"]:
            option["url"] = images.get(option["key"])
    attempts = (
        Attempt.objects.filter(puzzle=puzzle, submitted_at__isnull=False, participant__kind="human")
        .select_related("participant__user")
        .order_by("submitted_at")
    )
    answers = [
        {"answer": a.answer, "correct": a.correct, "who": a.participant.user.username, "uid": a.uid, "reason": a.reason}
        for a in attempts
    ]
    masks = {
        name: "data:image/png;base64," + base64.b64encode(_tint(mask)).decode()
        for name, mask in puzzle.load_masks().items()
    }
    return {
        "puzzle": puzzle,
        "type": puzzle_type.describe(),
        # The puzzle's own question ("Click on the torus."), not its type's generic one.
        "instruction": public.get("instruction") or puzzle_type.instruction,
        "image_url": images.get(public.get("image")),
        "reference_url": images.get(public.get("reference")),
        "truth_form": form,
        "no_form_reason": None if form else no_form_reason(puzzle),
        "open_flags": Flag.objects.filter(puzzle=puzzle, status=Flag.Status.OPEN).count(),
        "size": public["image_size"],
        "grid": public.get("grid_size"),
        "answers": answers,
        "solution": puzzle_type.solution(puzzle.truth),
        "truth_json": json.dumps(puzzle.truth, indent=2),
        "masks": masks,
        "flags": list(Flag.objects.filter(puzzle=puzzle).select_related("participant__user")),
        "audit": list(AuditLog.objects.filter(puzzle=puzzle)[:20]),
        "marks": answer_marks(answers, public.get("grid_size"), public["image_size"]),
    }


def _tint(mask: np.ndarray) -> bytes:
    """A mask as a PNG overlay: the masked pixels tinted, the rest transparent."""
    rgba = np.zeros((*mask.shape, 4), dtype=np.uint8)
    rgba[mask] = (250, 204, 21, 120)
    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, "PNG")
    return buffer.getvalue()
