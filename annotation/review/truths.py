"""A puzzle's truth as a form: what staff fill in to correct it, by the type's answer kind rather
than as JSON. Cells are ticked on the grid, an option picked among its images, a number, an
angle or a hold time typed, a point (or points in order) typed or clicked on the image. Kinds
whose truth is a pixel mask (click inside a figure) or a set of swaps have no form: staff retire
such a puzzle, or edit its JSON.

`truth_form` describes the form for the page; `truth_from_form` reads a submitted form back into
a new truth (the other keys of the truth kept), or raises ValueError saying what is wrong. Either
way labels.puzzle_correct_truth then checks the truth verifies its own solution.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from puzzles.models import Puzzle
from puzzles.registry import get_type
from puzzles.types.kinds import (
    AngleType,
    CellSetType,
    HoldType,
    IntegerTextType,
    MaskPointType,
    OptionType,
    PointSequenceType,
    SwapType,
    TolerancePointType,
)


@dataclass(frozen=True)
class TruthForm:
    """kind: cells, option, number, angle, point, points, hold; values: what the inputs show."""

    kind: str
    values: dict[str, Any] = field(default_factory=dict)


# Why a kind has no form, for the page.
NO_FORM = {
    MaskPointType: "Its truth is a region of the image (a mask): it cannot be redrawn here. "
    "Retire the puzzle if the region is wrong.",
    SwapType: "Its truth is the set of swaps that line up a row: edit it as JSON below, or retire the puzzle.",
}


def truth_form(puzzle: Puzzle) -> TruthForm | None:
    """The form that corrects this puzzle's truth, or None when its kind has none (see no_form_reason)."""
    kind, truth, public = get_type(puzzle.type), puzzle.truth, puzzle.public
    if isinstance(kind, CellSetType):
        rows, cols = truth["grid_size"]
        chosen = set(truth["correct_patches"])
        w, h = public["image_size"]
        cells = [
            {"index": i, "chosen": i in chosen, "x": (i % cols) * w / cols, "y": (i // cols) * h / rows}
            for i in range(rows * cols)
        ]
        return TruthForm("cells", {"rows": rows, "cols": cols, "cells": cells, "w": w / cols, "h": h / rows})
    if isinstance(kind, OptionType):
        count = truth["option_count"]
        keys = public.get("options") or []
        options = [{"index": i, "key": keys[i] if i < len(keys) else None} for i in range(count)]
        return TruthForm("option", {"options": options, "chosen": truth["correct_option_index"]})
    if isinstance(kind, IntegerTextType):
        return TruthForm("number", {"value": truth[kind.truth_key], "key": kind.truth_key})
    if isinstance(kind, AngleType):
        return TruthForm("angle", {"value": truth["correct_angle"] % 360, "choices": list(range(0, 360, kind.step))})
    if isinstance(kind, TolerancePointType):  # a dot's place, a slider piece's (its top-left)
        x, y = truth["target_position"]
        return TruthForm("point", {"x": x, "y": y, "tolerance": truth.get("tolerance")})
    if isinstance(kind, PointSequenceType):
        return TruthForm("points", {"points": [{"x": x, "y": y} for x, y in truth["answer"]]})
    if isinstance(kind, HoldType):
        return TruthForm("hold", {"value": truth["hold_time"]})
    return None


def no_form_reason(puzzle: Puzzle) -> str:
    kind = get_type(puzzle.type)
    return next((why for cls, why in NO_FORM.items() if isinstance(kind, cls)), "Edit its truth as JSON below.")


def truth_from_form(puzzle: Puzzle, data: Mapping[str, Any]) -> dict:
    """The truth the submitted form describes (QueryDict or dict of strings; getlist for cells)."""
    form = truth_form(puzzle)
    if form is None:
        raise ValueError("this type's truth has no form: edit it as JSON")
    truth = dict(puzzle.truth)
    if form.kind == "cells":
        picked = data.getlist("cell") if hasattr(data, "getlist") else data.get("cell", [])
        cells = sorted({_int(v, "cell") for v in picked})
        count = form.values["rows"] * form.values["cols"]
        if not cells:
            raise ValueError("tick at least one cell")
        if any(not 0 <= c < count for c in cells):
            raise ValueError(f"cells are numbered 0 to {count - 1}")
        old = sorted(truth["correct_patches"])
        for key in ("correct_patches", "correct_selections", "answer"):  # the copies some types keep
            if key == "correct_patches" or (key in truth and sorted(truth[key]) == old):
                truth[key] = cells
    elif form.kind == "option":
        index = _int(data.get("option"), "option")
        if not 0 <= index < len(form.values["options"]):
            raise ValueError(f"options are numbered 0 to {len(form.values['options']) - 1}")
        if truth.get("correct_option") == truth["correct_option_index"]:
            truth["correct_option"] = index
        truth["correct_option_index"] = index
    elif form.kind == "number":
        truth[form.values["key"]] = _int(data.get("value"), "the number")
    elif form.kind == "angle":
        angle = _int(data.get("angle"), "the angle")
        if angle not in form.values["choices"]:
            raise ValueError(f"the angle is one of {', '.join(map(str, form.values['choices']))}")
        truth["correct_angle"] = angle
    elif form.kind == "point":
        truth["target_position"] = _point(data.get("x"), data.get("y"), puzzle.public["image_size"])
    elif form.kind == "points":
        count = len(form.values["points"])
        truth["answer"] = [
            _point(data.get(f"x{i}"), data.get(f"y{i}"), puzzle.public["image_size"]) for i in range(count)
        ]
    elif form.kind == "hold":
        seconds = _number(data.get("value"), "the hold time")
        if not 0 < seconds <= 60:
            raise ValueError("the hold time is between 0 and 60 seconds")
        truth["hold_time"] = seconds
    return truth


def _int(value: object, what: str) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a whole number, not {value!r}") from None


def _number(value: object, what: str) -> float:
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number")
    return number


def _point(x: object, y: object, size: Sequence[float]) -> list[float]:
    px, py = _number(x, "x"), _number(y, "y")
    if not (0 <= px <= size[0] and 0 <= py <= size[1]):
        raise ValueError(f"({px:g}, {py:g}) is outside the {size[0]}x{size[1]} image")
    return [px, py]
