"""Answer kinds: how an answer of each shape is verified, solved, perturbed and acted out.

A concrete type subclasses one kind and draws its puzzle. Rewards follow base.wrong(): any
readable wrong answer earns between 0.1 and 0.9, more the closer it is.
"""
from __future__ import annotations

import math
import re
from typing import Any, ClassVar

import numpy as np

from puzzles.layout import Layout

from .base import (
    Mode,
    PuzzleType,
    Verdict,
    as_int,
    as_number,
    click,
    drag,
    hold,
    malformed,
    parse_point,
    right,
    type_text,
    wrong,
)


_WHOLE_NUMBER = re.compile(r"-?[0-9]{1,9}")


def _diag(size) -> float:
    return math.hypot(size[0], size[1])


def _natural_click(layout: Layout, x: float, y: float) -> dict:
    return click(*layout.image.to_stage(x, y))


def _outside_points(mask: np.ndarray, rng: np.random.Generator, count: int) -> list[list[int]]:
    ys, xs = np.nonzero(~mask)
    if len(xs) == 0:
        return []
    picks = rng.choice(len(xs), size=min(count, len(xs)), replace=False)
    return [[int(xs[i]), int(ys[i])] for i in picks]


def _box_but_not_mask(mask: np.ndarray, rng: np.random.Generator, count: int) -> list[list[int]]:
    """Points a bounding box would accept and the mask rejects: the cases box judging gets wrong."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return []
    box = np.zeros_like(mask)
    box[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] = True
    return _outside_points(~(box & ~mask), rng, count)


# --- points judged by a mask -------------------------------------------------------------
class MaskPointType(PuzzleType):
    """Click inside the target mask. truth: mask, image_size, point (inside), center."""

    mode = Mode.CLICK
    widget = "point"
    auto_submit = True

    def verify(self, truth, answer, masks=None) -> Verdict:
        point, problem = parse_point(answer, truth["image_size"])
        if problem:
            return malformed(problem)
        mask = (masks or {}).get(truth["mask"])
        if mask is None:
            return malformed("puzzle mask is not loaded")
        x, y = int(point[0]), int(point[1])
        if mask[y, x]:
            return right("inside the target")
        cx, cy = truth["center"]
        return wrong(1 - math.hypot(point[0] - cx, point[1] - cy) / _diag(truth["image_size"]), "outside the target")

    def solution(self, truth):
        return list(truth["point"])

    def perturbations(self, truth, masks, rng):
        mask = masks[truth["mask"]]
        return _box_but_not_mask(mask, rng, 4) + _outside_points(mask, rng, 6)

    def answer_actions(self, truth, layout):
        return [_natural_click(layout, *truth["point"])]

    def cu_answer(self, truth):
        return "single_xy", [int(v) for v in truth["point"]]


class AvoidMaskPointType(MaskPointType):
    """Click anywhere but on the mask. truth: mask, image_size, point (outside), center, radius."""

    def verify(self, truth, answer, masks=None) -> Verdict:
        point, problem = parse_point(answer, truth["image_size"])
        if problem:
            return malformed(problem)
        mask = (masks or {}).get(truth["mask"])
        if mask is None:
            return malformed("puzzle mask is not loaded")
        if not mask[int(point[1]), int(point[0])]:
            return right("clear of the figure to avoid")
        cx, cy = truth["center"]
        return wrong(math.hypot(point[0] - cx, point[1] - cy) / truth["radius"], "on the figure to avoid")

    def perturbations(self, truth, masks, rng):
        return _outside_points(~masks[truth["mask"]], rng, 8)


# --- points judged by distance -----------------------------------------------------------
class TolerancePointType(PuzzleType):
    """Place a point within tolerance of a target. truth: target_position, tolerance, image_size."""

    mode = Mode.CLICK
    widget = "point"

    def verify(self, truth, answer, masks=None) -> Verdict:
        point, problem = parse_point(answer, truth["image_size"])
        if problem:
            return malformed(problem)
        tx, ty = truth["target_position"]
        distance = math.hypot(point[0] - tx, point[1] - ty)
        if distance <= truth["tolerance"]:
            return right(f"{distance:.1f} px from the target (tolerance {truth['tolerance']})")
        miss = distance - truth["tolerance"]
        return wrong(1 - miss / _diag(truth["image_size"]), f"{distance:.1f} px from the target")

    def solution(self, truth):
        return list(truth["target_position"])

    def perturbations(self, truth, masks, rng):
        w, h = truth["image_size"]
        tx, ty = truth["target_position"]
        out = []
        for radius in (truth["tolerance"] + 3, truth["tolerance"] * 3, _diag((w, h)) / 3):
            for angle in rng.uniform(0, 2 * math.pi, size=3):
                x, y = tx + radius * math.cos(angle), ty + radius * math.sin(angle)
                if 0 <= x < w and 0 <= y < h and math.hypot(x - tx, y - ty) > truth["tolerance"]:
                    out.append([round(x, 2), round(y, 2)])
        return out

    def answer_actions(self, truth, layout):
        return [_natural_click(layout, *truth["target_position"])]

    def cu_answer(self, truth):
        return "single_xy", [int(round(v)) for v in truth["target_position"]]


class PointSequenceType(PuzzleType):
    """Click points in order. truth: answer ([[x, y], ...]), tolerance, image_size."""

    mode = Mode.CLICK
    widget = "points"

    def verify(self, truth, answer, masks=None) -> Verdict:
        if not isinstance(answer, (list, tuple)):
            return malformed("expected a list of points [[x, y], ...]")
        if len(answer) > 50:
            return malformed("too many points")
        points = []
        for item in answer:
            point, problem = parse_point(item, truth["image_size"])
            if problem:
                return malformed(problem)
            points.append(point)
        targets = truth["answer"]
        hits = 0
        for (x, y), (tx, ty) in zip(points, targets):
            if math.hypot(x - tx, y - ty) > truth["tolerance"]:
                break
            hits += 1
        if hits == len(targets) == len(points):
            return right(f"all {hits} points in order")
        closeness = hits / len(targets) - abs(len(points) - len(targets)) / (2 * len(targets))
        return wrong(closeness, f"{hits} of {len(targets)} points right in order, {len(points)} given")

    def solution(self, truth):
        return [list(p) for p in truth["answer"]]

    def perturbations(self, truth, masks, rng):
        targets = [list(p) for p in truth["answer"]]
        out = [targets[:-1], targets + [targets[0]], [targets[1], targets[0], *targets[2:]]]
        shifted = [p[:] for p in targets]
        w, h = truth["image_size"]
        shifted[-1] = [(shifted[-1][0] + w / 2) % w, (shifted[-1][1] + h / 2) % h]
        return out + [shifted, []]

    def answer_actions(self, truth, layout):
        return [_natural_click(layout, x, y) for x, y in truth["answer"]]

    def cu_answer(self, truth):
        return "multi_xy", [{"action": "click", "arguments": {"x": int(x), "y": int(y)}} for x, y in truth["answer"]]


# --- grid cells ----------------------------------------------------------------------------
def parse_cells(answer: Any, cell_count: int) -> tuple[set[int] | None, str | None]:
    if not isinstance(answer, (list, tuple)):
        return None, "expected a list of cell indices"
    cells = []
    for item in answer:
        index = as_int(item)
        if index is None:
            return None, f"cell {item!r} is not an integer"
        if not 0 <= index < cell_count:
            return None, f"cell {index} is outside the grid of {cell_count} cells"
        cells.append(index)
    if len(set(cells)) != len(cells):
        return None, "a cell is listed twice"
    return set(cells), None


def _cell_center_natural(index: int, grid, size) -> tuple[float, float]:
    rows, cols = grid
    r, c = divmod(index, cols)
    return ((c + 0.5) * size[0] / cols, (r + 0.5) * size[1] / rows)


class CellSetType(PuzzleType):
    """Select exactly the right cells. truth: correct_patches, grid_size [rows, cols], image_size."""

    mode = Mode.GRID
    widget = "cells"

    def verify(self, truth, answer, masks=None) -> Verdict:
        rows, cols = truth["grid_size"]
        cells, problem = parse_cells(answer, rows * cols)
        if problem:
            return malformed(problem)
        target = set(truth["correct_patches"])
        if cells == target:
            return right(f"all {len(target)} cells and no other")
        union = cells | target
        jaccard = len(cells & target) / len(union) if union else 0.0
        return wrong(jaccard, f"{len(cells & target)} of {len(target)} right cells, {len(cells - target)} wrong")

    def solution(self, truth):
        return sorted(truth["correct_patches"])

    def perturbations(self, truth, masks, rng):
        rows, cols = truth["grid_size"]
        target = sorted(truth["correct_patches"])
        others = [i for i in range(rows * cols) if i not in target]
        out = [[], list(range(rows * cols))]
        if len(target) > 1:
            out.append(target[1:])
        if others:
            extra = int(rng.choice(others))
            out.append(sorted(target + [extra]))
            out.append(sorted(target[1:] + [extra]))
        return [p for p in out if set(p) != set(target)]

    def answer_actions(self, truth, layout):
        return [click(*layout.cell(i).center()) for i in sorted(truth["correct_patches"])]

    def cu_answer(self, truth):
        points = [_cell_center_natural(i, truth["grid_size"], truth["image_size"]) for i in sorted(truth["correct_patches"])]
        return "multi_xy", [{"action": "click", "arguments": {"x": int(x), "y": int(y)}} for x, y in points]


class SwapType(PuzzleType):
    """Swap two tiles. truth: answer (valid pairs), grid_size, image_size."""

    mode = Mode.GRID
    widget = "swap"

    def verify(self, truth, answer, masks=None) -> Verdict:
        rows, cols = truth["grid_size"]
        if not isinstance(answer, (list, tuple)) or len(answer) != 2:
            return malformed("expected a swap [i, j]")
        cells, problem = parse_cells(answer, rows * cols)
        if problem:
            return malformed(problem)
        valid = [set(pair) for pair in truth["answer"]]
        if cells in valid:
            return right("the swap completes a line")
        shares = any(cells & pair for pair in valid)
        return wrong(0.5 if shares else 0.0, "the swap completes no line")

    def solution(self, truth):
        return list(truth["answer"][0])

    def perturbations(self, truth, masks, rng):
        rows, cols = truth["grid_size"]
        valid = [set(pair) for pair in truth["answer"]]
        pairs = [[i, j] for i in range(rows * cols) for j in range(i + 1, rows * cols) if {i, j} not in valid]
        picks = rng.choice(len(pairs), size=min(6, len(pairs)), replace=False)
        return [pairs[i] for i in picks]

    def answer_actions(self, truth, layout):
        i, j = truth["answer"][0]
        return [click(*layout.cell(i).center()), click(*layout.cell(j).center())]

    def cu_answer(self, truth):
        alternatives = []
        for pair in truth["answer"]:
            points = [_cell_center_natural(i, truth["grid_size"], truth["image_size"]) for i in pair]
            alternatives.append([{"action": "click", "arguments": {"x": int(x), "y": int(y)}} for x, y in points])
        return "multi_swap", alternatives


# --- arrow cycling -------------------------------------------------------------------------
class OptionType(PuzzleType):
    """Page through options with arrows. truth: correct_option_index, option_count. Starts at 0."""

    mode = Mode.CYCLE
    widget = "option"
    controls = ("prev", "next")

    def verify(self, truth, answer, masks=None) -> Verdict:
        count = truth["option_count"]
        index = as_int(answer)
        if index is None:
            return malformed("expected an option index")
        if not 0 <= index < count:
            return malformed(f"option {index} is outside 0..{count - 1}")
        correct = truth["correct_option_index"]
        if index == correct:
            return right(f"option {index}")
        steps = min((index - correct) % count, (correct - index) % count)
        return wrong(1 - steps / max(1, count // 2), f"option {index}, {steps} arrow steps away")

    def solution(self, truth):
        return truth["correct_option_index"]

    def perturbations(self, truth, masks, rng):
        return [i for i in range(truth["option_count"]) if i != truth["correct_option_index"]]

    def answer_actions(self, truth, layout):
        return [click(*layout.control("next").center()) for _ in range(truth["correct_option_index"])]

    def cu_answer(self, truth):
        return "option", {"select_option_index": truth["correct_option_index"]}


class AngleType(PuzzleType):
    """Rotate in 45-degree steps. truth: correct_angle (0..315). Starts at 0."""

    mode = Mode.CYCLE
    widget = "rotate"
    controls = ("rotate_left", "rotate_right")
    step = 45

    def verify(self, truth, answer, masks=None) -> Verdict:
        angle = as_int(answer)
        if angle is None:
            return malformed("expected an angle in degrees")
        if angle % self.step:
            return malformed(f"angle {angle} is not a multiple of {self.step}")
        if abs(angle) > 3600:
            return malformed(f"angle {angle} is out of range")
        difference = (angle - truth["correct_angle"]) % 360
        distance = min(difference, 360 - difference)
        if distance == 0:
            return right(f"rotated to {angle % 360} degrees")
        return wrong(1 - distance / 180, f"{distance} degrees off")

    def solution(self, truth):
        return truth["correct_angle"]

    def perturbations(self, truth, masks, rng):
        return [a for a in range(0, 360, self.step) if a != truth["correct_angle"] % 360]

    def answer_actions(self, truth, layout):
        steps = (truth["correct_angle"] % 360) // self.step
        return [click(*layout.control("rotate_right").center()) for _ in range(steps)]

    def cu_answer(self, truth):
        return "rotate", {"rotate_to_angle": truth["correct_angle"]}


# --- text, drag, hold ---------------------------------------------------------------------------
class IntegerTextType(PuzzleType):
    """Type a whole number. truth: sum."""

    mode = Mode.TEXT
    widget = "text"
    controls = ("input",)
    truth_key = "sum"

    def verify(self, truth, answer, masks=None) -> Verdict:
        value = self._parse(answer)
        if value is None:
            return malformed("expected a whole number")
        expected = truth[self.truth_key]
        if value == expected:
            return right(f"{value}")
        return wrong(1 - abs(value - expected) / max(abs(expected), 1), f"{value}, off by {abs(value - expected)}")

    @staticmethod
    def _parse(answer: Any) -> int | None:
        if isinstance(answer, str):
            text = answer.strip()
            return int(text) if _WHOLE_NUMBER.fullmatch(text) else None
        return as_int(answer)

    def solution(self, truth):
        return str(truth[self.truth_key])

    def perturbations(self, truth, masks, rng):
        value = truth[self.truth_key]
        return [str(value + 1), str(value - 1), str(value + 5), "0", value * 2 + 1]

    def answer_actions(self, truth, layout):
        return [click(*layout.control("input").center()), type_text(str(truth[self.truth_key]))]

    def cu_answer(self, truth):
        return "type_text", {"type_text": str(truth[self.truth_key])}


class DragPositionType(PuzzleType):
    """Drag a piece so its top-left lands on a target.

    truth: target_position, tolerance, image_size, start_position, piece_size.
    """

    mode = Mode.REALTIME
    widget = "drag"

    def verify(self, truth, answer, masks=None) -> Verdict:
        point, problem = parse_point(answer, truth["image_size"])
        if problem:
            return malformed(problem)
        tx, ty = truth["target_position"]
        distance = math.hypot(point[0] - tx, point[1] - ty)
        if distance <= truth["tolerance"]:
            return right(f"{distance:.1f} px from the slot (tolerance {truth['tolerance']})")
        miss = distance - truth["tolerance"]
        return wrong(1 - miss / _diag(truth["image_size"]), f"{distance:.1f} px from the slot")

    def solution(self, truth):
        return list(truth["target_position"])

    def perturbations(self, truth, masks, rng):
        w, h = truth["image_size"]
        tx, ty = truth["target_position"]
        tol = truth["tolerance"]
        candidates = [[tx + tol + 4, ty], [tx - tol - 4, ty], list(truth["start_position"]), [tx + 5 * tol, ty]]
        return [p for p in candidates if 0 <= p[0] < w and 0 <= p[1] < h and math.hypot(p[0] - tx, p[1] - ty) > tol]

    def _centers(self, truth):
        pw, ph = truth["piece_size"]
        (sx, sy), (tx, ty) = truth["start_position"], truth["target_position"]
        return (sx + pw / 2, sy + ph / 2), (tx + pw / 2, ty + ph / 2)

    def answer_actions(self, truth, layout):
        start, end = self._centers(truth)
        return [drag(layout.image.to_stage(*start), layout.image.to_stage(*end))]

    def cu_answer(self, truth):
        start, end = self._centers(truth)
        return "drag", {"drag": {"from": [round(v) for v in start], "to": [round(v) for v in end]}}


class HoldType(PuzzleType):
    """Press and hold for at least hold_time seconds. truth: hold_time. Answer: seconds held."""

    mode = Mode.REALTIME
    widget = "hold"
    auto_submit = True
    controls = ("hold",)
    max_hold_seconds = 600
    margin_ms = 400  # the reference hold overshoots a little, as a person would

    def verify(self, truth, answer, masks=None) -> Verdict:
        held = as_number(answer)
        if held is None:
            return malformed("expected the seconds held")
        if not 0 <= held <= self.max_hold_seconds:
            return malformed(f"hold of {held:g} s is outside 0..{self.max_hold_seconds}")
        target = truth["hold_time"]
        if held >= target:
            return right(f"held {held:.2f} s of {target:g} s")
        return wrong(held / target, f"released after {held:.2f} s of {target:g} s")

    def solution(self, truth):
        return float(truth["hold_time"])

    def perturbations(self, truth, masks, rng):
        target = truth["hold_time"]
        return [0, target * 0.5, max(0.0, target - 0.2)]

    def answer_actions(self, truth, layout):
        duration = int(truth["hold_time"] * 1000) + self.margin_ms
        return [hold(*layout.control("hold").center(), duration)]

    def cu_answer(self, truth):
        return "hold", {"duration_ms": int(truth["hold_time"] * 1000) + self.margin_ms}
