"""Shapes to draw answers over a puzzle's image, in its natural pixels, by the answer's shape (not
by type): points, point sequences, counts per grid cell; anything else (options, angles, text,
holds) is tallied. The staff's review page draws every answer on a puzzle, quality control one
annotator's. Pure: no Django, no database."""

from __future__ import annotations

import json


def answer_marks(answers: list[dict], grid, size) -> dict:
    """answers: [{"answer": ..., "correct": bool | None}]; grid: [rows, cols] or None; size: [w, h].
    Returns {"points", "paths", "cells", "tally"}."""
    points: list[dict] = []
    paths: list[dict] = []
    cells: dict[int, int] = {}
    tally: dict[str, dict] = {}
    for entry in answers:
        answer, correct = entry["answer"], entry["correct"]
        if grid and isinstance(answer, list) and all(isinstance(c, int) for c in answer):
            for cell in answer:  # selected or swapped cells
                cells[cell] = cells.get(cell, 0) + 1
        elif is_point(answer):
            points.append({"x": answer[0], "y": answer[1], "correct": correct})
        elif isinstance(answer, list) and answer and all(is_point(p) for p in answer):
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


def is_point(value) -> bool:
    """A JSON point: two numbers, booleans not counted."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )
