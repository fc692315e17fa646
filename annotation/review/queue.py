"""The review queue and one puzzle's review page (staff only: these read the truth)."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
from django.db.models import Count, Max
from PIL import Image

from annotation.models import Attempt, AuditLog, Flag
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


def puzzle_review(*, puzzle) -> dict:
    """A puzzle with its flags, every human answer and the truth, ready to draw over its image."""
    puzzle_type = get_type(puzzle.type)
    public = puzzle.public
    image = puzzle.assets.filter(key=public["image"]).first()
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
        "image_url": image.file.url if image else None,
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


def _tint(mask) -> bytes:
    """A mask as a PNG overlay: the masked pixels tinted, the rest transparent."""
    rgba = np.zeros((*mask.shape, 4), dtype=np.uint8)
    rgba[mask] = (250, 204, 21, 120)
    buffer = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buffer, "PNG")
    return buffer.getvalue()


def answer_marks(answers: list[dict], grid, size) -> dict:
    """Shapes to draw for the answers, by their shape (not by type): points, point sequences, cell
    counts; anything else (options, angles, text, holds) is tallied instead."""
    points, paths, cells, tally = [], [], {}, {}
    for entry in answers:
        answer, correct = entry["answer"], entry["correct"]
        if grid and isinstance(answer, list) and all(isinstance(c, int) for c in answer):
            for cell in answer:  # selected or swapped cells
                cells[cell] = cells.get(cell, 0) + 1
        elif _is_point(answer):
            points.append({"x": answer[0], "y": answer[1], "correct": correct})
        elif isinstance(answer, list) and answer and all(_is_point(p) for p in answer):
            paths.append({"points": answer, "correct": correct})
        else:
            key = json.dumps(answer)
            tally.setdefault(key, {"answer": answer, "count": 0, "correct": correct})["count"] += 1
    cell_boxes = []
    if grid:
        rows, cols = grid
        w, h = size[0] / cols, size[1] / rows
        cell_boxes = [{"x": (c % cols) * w, "y": (c // cols) * h, "w": w, "h": h, "count": n} for c, n in cells.items()]
    return {"points": points, "paths": paths, "cells": cell_boxes, "tally": list(tally.values())}


def _is_point(value) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )
