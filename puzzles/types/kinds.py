"""Answer kinds: how an answer of each shape is verified, solved, perturbed and acted out.

A concrete type subclasses one kind and draws its puzzle. Rewards follow base.wrong(): any
readable wrong answer earns between 0.1 and 0.9, more the closer it is.

The published layout hooks read a ground_truth.json entry the way the published grader reads
it: the same field, the same default, the same rounding (docs/captchaarena-layout.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np

from puzzles.answer_marks import is_point
from puzzles.drawing.masks import bbox, centroid, interior_point
from puzzles.layout import (
    CELL_PAGES,
    CellPage,
    Layout,
    arrows_page,
    bingo_page,
    click_page,
    dot_page,
    hold_page,
    order_page,
    slider_page,
    text_page,
)

from .base import (
    CLOCK_SLACK_MS,
    Action,
    Mode,
    PublishedContext,
    PuzzleType,
    Unreadable,
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
from .contract import (
    AngleTruth,
    AvoidMaskTruth,
    CellSetTruth,
    CuAnswer,
    DragTruth,
    HoldTruth,
    IntegerTruth,
    Masks,
    MaskTruth,
    OptionTruth,
    PointSequenceTruth,
    PublicData,
    SwapTruth,
    ToleranceTruth,
    Widget,
)

# The two kinds that a narrower kind extends are generic in their truth.
MaskT = TypeVar("MaskT", bound=MaskTruth)
PointT = TypeVar("PointT", bound=ToleranceTruth)

_WHOLE_NUMBER = re.compile(r"-?[0-9]{1,9}")


def _diag(size: Sequence[float]) -> float:
    return math.hypot(size[0], size[1])


def _pair(values: Sequence[int]) -> tuple[int, int]:
    return (int(values[0]), int(values[1]))


def _natural_click(layout: Layout, x: float, y: float) -> dict[str, Any]:
    return click(*layout.main.to_stage(x, y))


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


# --- reducers: the page's semantic actions to an answer ----------------------------------
def _of(actions: list[Action], kind: str) -> list[Action]:
    return [a for a in actions if a.kind == kind]


def _last_click(actions: list[Action]) -> list[float]:
    clicks = _of(actions, "act.click")
    if not clicks:
        raise Unreadable("no click on the image")
    return [clicks[-1].data["x"], clicks[-1].data["y"]]


def _cycle_total(actions: list[Action]) -> int:
    return sum(a.data["delta"] for a in _of(actions, "act.cycle"))


def _box_mask(size: Sequence[int], box: Sequence[float]) -> np.ndarray:
    """The pixels whose coordinates lie in an inclusive box [x1, y1, x2, y2]."""
    x1, y1, x2, y2 = box
    mask = np.zeros((size[1], size[0]), dtype=bool)
    mask[max(0, math.ceil(y1)) : max(0, math.floor(y2) + 1), max(0, math.ceil(x1)) : max(0, math.floor(x2) + 1)] = True
    return mask


# The published grader's fixed tolerance for the oldest Geometry_Click files, whose answer is the
# target's point [x, y]: a click within 25 px of it passes (its check_answer falls back to this
# when `answer` is not an object with `area`).
OLDEST_POINT_TOLERANCE = 25.0


def _disc_mask(size: Sequence[int], disc: Sequence[float]) -> np.ndarray:
    """The pixels whose coordinates lie within r of (x, y): a disc [x, y, r]."""
    x, y, r = disc
    rows, columns = np.ogrid[: size[1], : size[0]]
    return (columns - x) ** 2 + (rows - y) ** 2 <= r * r


# --- chance: blind guesses and the share of them a verifier accepts ------------------------
def _uniform_point(size: Sequence[int], rng: np.random.Generator) -> list[float]:
    """A point uniform over the image, as parse_point accepts it (0 <= x < w)."""
    return [float(rng.uniform(0, size[0])), float(rng.uniform(0, size[1]))]


def _rounded_share(mask: np.ndarray) -> float:
    """The share of points uniform over the image whose pixel, rounded as _on_target rounds, is on
    the mask: the first row and column take half a pixel each (0 <= x < 0.5), every other pixel a
    whole one, and the last half pixel rounds off the image."""
    weighted = mask.sum() - 0.5 * mask[0, :].sum() - 0.5 * mask[:, 0].sum() + 0.25 * mask[0, 0]
    return float(weighted) / mask.size


def _disc_share(size: Sequence[int], centre: Sequence[float], radius: float, step: float = 0.25) -> float:
    """The share of the image within radius of centre (the disc clipped to the image), counted on
    a grid of about step px over the disc's box: a tolerance's answer space."""
    w, h = size
    x0, x1 = max(0.0, centre[0] - radius), min(float(w), centre[0] + radius)
    y0, y1 = max(0.0, centre[1] - radius), min(float(h), centre[1] + radius)
    if x1 <= x0 or y1 <= y0:
        return 0.0
    nx, ny = math.ceil((x1 - x0) / step), math.ceil((y1 - y0) / step)
    xs = x0 + (np.arange(nx) + 0.5) * (x1 - x0) / nx
    ys = y0 + (np.arange(ny) + 0.5) * (y1 - y0) / ny
    inside = (xs[None, :] - centre[0]) ** 2 + (ys[:, None] - centre[1]) ** 2 <= radius * radius
    return float(inside.mean()) * (x1 - x0) * (y1 - y0) / (w * h)


def _on_target(truth: MaskTruth, mask: np.ndarray, point: tuple[float, float]) -> bool:
    """Whether a point is on the target, as the published grader judges it: an older file's box
    by its inclusive bounds on the point as given, the oldest file's point by the distance to it;
    a mask at the point rounded to the nearest pixel (Python's round, as its int(round(x))), a
    point rounded off the mask's edge being off it."""
    x, y = point
    if "disc" in truth:
        cx, cy, r = truth["disc"]
        return math.hypot(x - cx, y - cy) <= r
    if "box" in truth:
        x1, y1, x2, y2 = truth["box"]
        return x1 <= x <= x2 and y1 <= y <= y2
    ix, iy = int(round(x)), int(round(y))
    return 0 <= iy < mask.shape[0] and 0 <= ix < mask.shape[1] and bool(mask[iy, ix])


def _mask_truth(
    entry: dict[str, Any],
    mask: np.ndarray,
    context: PublishedContext,
    *,
    inside: bool,
    box: list[float] | None = None,
    disc: list[float] | None = None,
) -> dict[str, Any]:
    """Our mask-point truth from a published entry: a sure point, the centre and the bounding box
    (and an older file's box or the oldest file's disc, which then judges: contract.MaskTruth)."""
    if mask.shape != (context.image_size[1], context.image_size[0]):
        raise ValueError(
            f"mask is {mask.shape[1]}x{mask.shape[0]}, image is {context.image_size[0]}x{context.image_size[1]}"
        )
    if not mask.any() or mask.all():
        raise ValueError("mask is empty or covers the whole image")
    truth = {k: v for k, v in entry.items() if k not in ("answer", "mask_path", "avoid_area")}
    truth.update(mask="target" if inside else "avoid", image_size=context.image_size, bbox=bbox(mask))
    if box is not None:
        truth["box"] = box
    if disc is not None:
        truth["disc"] = disc
    truth.setdefault("center", centroid(mask))
    if "point" not in truth:  # a sure click: deep inside the target, or deep in the free area
        truth["point"] = interior_point(mask if inside else ~mask)
    return truth


def _with_defaults(entry: dict[str, Any], context: PublishedContext, **defaults: Any) -> dict[str, Any]:
    truth = {**defaults, **entry}
    truth.setdefault("image_size", context.image_size)
    return truth


# --- points judged by a mask -------------------------------------------------------------
class MaskPointType(PuzzleType[MaskT]):
    """Click inside the target mask. truth: mask, image_size, point (inside), center, bbox."""

    mode = Mode.CLICK
    widget = "point"
    auto_submit = True

    def verify(self, truth: MaskT, answer: Any, masks: Masks | None = None) -> Verdict:
        point, problem = parse_point(answer, truth["image_size"])
        if point is None:
            return malformed(problem or "expected a point [x, y]")
        mask = (masks or {}).get(truth["mask"])
        if mask is None:
            return malformed("puzzle mask is not loaded")
        if _on_target(truth, mask, point):
            return right("inside the target")
        cx, cy = truth["center"]
        return wrong(1 - math.hypot(point[0] - cx, point[1] - cy) / _diag(truth["image_size"]), "outside the target")

    def solution(self, truth: MaskT) -> list[float]:
        return list(truth["point"])

    chance_rule = "a point uniform over the image: the target's share of the image"

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> list[float]:
        return _uniform_point(public["image_size"], rng)

    def chance_rate(self, truth: MaskT, masks: Masks) -> float:
        return _rounded_share(masks[truth["mask"]])

    def reduce(self, actions: list[Action], public: PublicData) -> list[float]:
        return _last_click(actions)

    def perturbations(self, truth: MaskT, masks: Masks, rng: np.random.Generator) -> list[Any]:
        mask = masks[truth["mask"]]
        return _box_but_not_mask(mask, rng, 4) + _outside_points(mask, rng, 6)

    def layout(self, public: PublicData) -> Layout:
        return click_page(_pair(public["image_size"]), self.steps)

    def answer_actions(self, truth: MaskT, layout: Layout) -> list[dict[str, Any]]:
        return [_natural_click(layout, *truth["point"])]

    def cu_answer(self, truth: MaskT) -> CuAnswer:
        return "single_xy", [int(v) for v in truth["point"]]

    def published_truth(self, truth: MaskT, mask_paths: dict[str, str]) -> dict[str, Any]:
        x1, y1, x2, y2 = truth["bbox"]
        out = {k: v for k, v in truth.items() if k != "mask"}
        out["answer"] = {
            "valid_area": {"mask_path": mask_paths[truth["mask"]], "bbox": truth["bbox"]},
            "area": [[x1, y1], [x2, y2]],
        }
        return out

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        answer = entry.get("answer") or {}
        if is_point(answer):  # the oldest files: the target's point, judged within 25 px
            disc = [float(answer[0]), float(answer[1]), OLDEST_POINT_TOLERANCE]
            mask = _disc_mask(context.image_size, disc)
            return _mask_truth(entry, mask, context, inside=True, disc=disc), {"target": mask}
        if not isinstance(answer, dict):
            raise ValueError("answer is neither an object nor a point [x, y]")
        valid = answer.get("valid_area") or {}
        box = None
        if valid.get("mask_path"):
            mask = context.load_mask(valid["mask_path"])
        elif answer.get("area"):  # older files: a box, [[x1, y1], [x2, y2]]
            (x1, y1), (x2, y2) = answer["area"]
            box = [float(x1), float(y1), float(x2), float(y2)]
            mask = _box_mask(context.image_size, box)
        else:
            raise ValueError("no answer.valid_area.mask_path and no answer.area")
        return _mask_truth(entry, mask, context, inside=True, box=box), {"target": mask}


class AvoidMaskPointType(MaskPointType[AvoidMaskTruth]):
    """Click anywhere but on the mask. truth: mask, image_size, point (outside), center, radius, bbox."""

    def verify(self, truth: AvoidMaskTruth, answer: Any, masks: Masks | None = None) -> Verdict:
        point, problem = parse_point(answer, truth["image_size"])
        if point is None:
            return malformed(problem or "expected a point [x, y]")
        mask = (masks or {}).get(truth["mask"])
        if mask is None:
            return malformed("puzzle mask is not loaded")
        if not _on_target(truth, mask, point):
            return right("clear of the figure to avoid")
        cx, cy = truth["center"]
        return wrong(math.hypot(point[0] - cx, point[1] - cy) / truth["radius"], "on the figure to avoid")

    def perturbations(self, truth: AvoidMaskTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        return _outside_points(~masks[truth["mask"]], rng, 8)

    chance_rule = "a point uniform over the image: the share of the image clear of the figure to avoid"

    def chance_rate(self, truth: AvoidMaskTruth, masks: Masks) -> float:
        return 1.0 - _rounded_share(masks[truth["mask"]])

    def published_truth(self, truth: AvoidMaskTruth, mask_paths: dict[str, str]) -> dict[str, Any]:
        x1, y1, x2, y2 = truth["bbox"]
        out = {k: v for k, v in truth.items() if k != "mask"}
        out["mask_path"] = mask_paths[truth["mask"]]
        out["avoid_area"] = {"x": x1, "y": y1, "width": x2 - x1 + 1, "height": y2 - y1 + 1}
        return out

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        box = None
        if entry.get("mask_path"):
            mask = context.load_mask(entry["mask_path"])
        elif entry.get("avoid_area"):  # older files: {x, y, width, height}, both edges inside
            area = entry["avoid_area"]
            x, y = float(area["x"]), float(area["y"])
            box = [x, y, x + float(area["width"]), y + float(area["height"])]
            mask = _box_mask(context.image_size, box)
        else:
            raise ValueError("no mask_path and no avoid_area")
        truth = _mask_truth(entry, mask, context, inside=False, box=box)
        x1, y1, x2, y2 = truth["bbox"]
        truth.setdefault("radius", max(1.0, math.hypot(x2 - x1, y2 - y1) / 2))
        return truth, {"avoid": mask}


# --- points judged by distance -----------------------------------------------------------
class TolerancePointType(PuzzleType[PointT]):
    """Place a point within tolerance of a target. truth: target_position, tolerance, image_size.

    On the page this is the placed dot, then Submit (layout.dot_page)."""

    mode = Mode.CLICK
    widget: ClassVar[Widget] = "point"  # DragPositionType makes it "drag"
    target_word = "target"

    def verify(self, truth: PointT, answer: Any, masks: Masks | None = None) -> Verdict:
        point, problem = parse_point(answer, truth["image_size"])
        if point is None:
            return malformed(problem or "expected a point [x, y]")
        tx, ty = truth["target_position"]
        distance = math.hypot(point[0] - tx, point[1] - ty)
        if distance <= truth["tolerance"]:
            return right(f"{distance:.1f} px from the {self.target_word} (tolerance {truth['tolerance']})")
        miss = distance - truth["tolerance"]
        return wrong(1 - miss / _diag(truth["image_size"]), f"{distance:.1f} px from the {self.target_word}")

    def solution(self, truth: PointT) -> list[float]:
        return list(truth["target_position"])

    chance_rule = "a point uniform over the image: the tolerance's disc (clipped to the image) over the image"

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> list[float]:
        return _uniform_point(public["image_size"], rng)

    def chance_rate(self, truth: PointT, masks: Masks) -> float:
        return _disc_share(truth["image_size"], truth["target_position"], truth["tolerance"])

    def reduce(self, actions: list[Action], public: PublicData) -> list[float]:
        return _last_click(actions)

    def perturbations(self, truth: PointT, masks: Masks, rng: np.random.Generator) -> list[Any]:
        w, h = truth["image_size"]
        tx, ty = truth["target_position"]
        out = []
        for radius in (truth["tolerance"] + 3, truth["tolerance"] * 3, _diag((w, h)) / 3):
            for angle in rng.uniform(0, 2 * math.pi, size=3):
                x, y = tx + radius * math.cos(angle), ty + radius * math.sin(angle)
                if 0 <= x < w and 0 <= y < h and math.hypot(x - tx, y - ty) > truth["tolerance"]:
                    out.append([round(x, 2), round(y, 2)])
        return out

    def layout(self, public: PublicData) -> Layout:
        return dot_page(_pair(public["image_size"]), self.steps)

    def answer_actions(self, truth: PointT, layout: Layout) -> list[dict[str, Any]]:
        return [_natural_click(layout, *truth["target_position"])]

    def cu_answer(self, truth: PointT) -> CuAnswer:
        """Screen coordinates: the dot, then Submit (the published client cannot place a dot from image pixels)."""
        return "tool_calls", self.compile_actions(truth, dot_page(_pair(truth["image_size"]), self.steps))

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        if "target_position" not in entry:
            raise ValueError("no target_position")
        return _with_defaults(entry, context, tolerance=15), {}


class PointSequenceType(PuzzleType[PointSequenceTruth]):
    """Click points in order. truth: answer ([[x, y], ...]), tolerance, image_size."""

    mode = Mode.CLICK
    widget = "points"
    # How many points a blind guess clicks, uniform over this range: the reference picture shows
    # the count, the page data does not.
    guess_points: ClassVar[tuple[int, int]] = (1, 5)
    chance_rule = (
        "a count uniform over the type's range, then that many points uniform over the image: "
        "the chance of the right count times each target's tolerance disc over the image"
    )

    def verify(self, truth: PointSequenceTruth, answer: Any, masks: Masks | None = None) -> Verdict:
        if not isinstance(answer, (list, tuple)):
            return malformed("expected a list of points [[x, y], ...]")
        if len(answer) > 50:
            return malformed("too many points")
        points = []
        for item in answer:
            point, problem = parse_point(item, truth["image_size"])
            if point is None:
                return malformed(problem or "expected a point [x, y]")
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

    def solution(self, truth: PointSequenceTruth) -> list[list[float]]:
        return [list(p) for p in truth["answer"]]

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> list[list[float]]:
        low, high = self.guess_points
        return [_uniform_point(public["image_size"], rng) for _ in range(int(rng.integers(low, high + 1)))]

    def chance_rate(self, truth: PointSequenceTruth, masks: Masks) -> float:
        low, high = self.guess_points
        if not low <= len(truth["answer"]) <= high:
            return 0.0
        rate = 1 / (high - low + 1)
        for target in truth["answer"]:
            rate *= _disc_share(truth["image_size"], target, truth["tolerance"])
        return rate

    def layout(self, public: PublicData) -> Layout:
        return order_page(_pair(public["image_size"]), _pair(public["reference_size"]), self.steps)

    def reduce(self, actions: list[Action], public: PublicData) -> list[list[float]]:
        """The clicks since the last "Reset Clicks"."""
        points: list[list[float]] = []
        for action in actions:
            if action.kind == "act.reset":
                points = []
            elif action.kind == "act.click":
                points.append([action.data["x"], action.data["y"]])
        return points

    def perturbations(self, truth: PointSequenceTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        targets = [list(p) for p in truth["answer"]]
        out = [targets[:-1], targets + [targets[0]], [targets[1], targets[0], *targets[2:]]]
        shifted = [p[:] for p in targets]
        w, h = truth["image_size"]
        shifted[-1] = [(shifted[-1][0] + w / 2) % w, (shifted[-1][1] + h / 2) % h]
        return out + [shifted, []]

    def answer_actions(self, truth: PointSequenceTruth, layout: Layout) -> list[dict[str, Any]]:
        return [_natural_click(layout, x, y) for x, y in truth["answer"]]

    def cu_answer(self, truth: PointSequenceTruth) -> CuAnswer:
        return "multi_xy", [{"action": "click", "arguments": {"x": int(x), "y": int(y)}} for x, y in truth["answer"]]

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        points = [[p["x"], p["y"]] if isinstance(p, dict) else list(p) for p in entry.get("answer") or []]
        if not points:
            raise ValueError("no answer points")
        return _with_defaults({**entry, "answer": points}, context, tolerance=20), {}


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


def _cell_center_natural(index: int, grid: Sequence[int], size: Sequence[int]) -> tuple[float, float]:
    rows, cols = grid
    r, c = divmod(index, cols)
    return ((c + 0.5) * size[0] / cols, (r + 0.5) * size[1] / rows)


SINGLE_CHOICE_CHANCE = "one cell uniform over the grid: 1 over the cells (0 when more than one is right)"


class CellSetType(PuzzleType[CellSetTruth]):
    """Select exactly the right cells. truth: correct_patches, grid_size [rows, cols], image_size."""

    mode = Mode.GRID
    widget = "cells"
    # The published layout: the field its grader reads the cells from, the grid it assumes when
    # an entry gives none (or always, when fixed), and the page's layout for the grid.
    published_answer_key: ClassVar[str] = "correct_patches"
    published_grid: ClassVar[tuple[int, int]] = (2, 3)
    published_grid_fixed: ClassVar[bool] = False
    cell_page: ClassVar[CellPage] = "overlay"

    def verify(self, truth: CellSetTruth, answer: Any, masks: Masks | None = None) -> Verdict:
        rows, cols = truth["grid_size"]
        cells, problem = parse_cells(answer, rows * cols)
        if cells is None:
            return malformed(problem or "expected a list of cell indices")
        target = set(truth["correct_patches"])
        if cells == target:
            return right(f"all {len(target)} cells and no other")
        union = cells | target
        jaccard = len(cells & target) / len(union) if union else 0.0
        return wrong(jaccard, f"{len(cells & target)} of {len(target)} right cells, {len(cells - target)} wrong")

    def solution(self, truth: CellSetTruth) -> list[int]:
        return sorted(truth["correct_patches"])

    chance_rule = "each cell picked with probability 1/2: 1 over 2 to the number of cells"

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> list[int]:
        rows, cols = public["grid_size"]
        if self.single_choice:
            return [int(rng.integers(rows * cols))]
        return [cell for cell in range(rows * cols) if rng.random() < 0.5]

    def chance_rate(self, truth: CellSetTruth, masks: Masks) -> float:
        rows, cols = truth["grid_size"]
        if self.single_choice:
            return 1 / (rows * cols) if len(set(truth["correct_patches"])) == 1 else 0.0
        return 0.5 ** (rows * cols)

    def layout(self, public: PublicData) -> Layout:
        return CELL_PAGES[self.cell_page](_pair(public["image_size"]), _pair(public["grid_size"]), self.steps)

    def reduce(self, actions: list[Action], public: PublicData) -> list[int]:
        """The cells toggled an odd number of times; for a single choice, the cell picked last."""
        toggles = _of(actions, "act.toggle")
        if self.single_choice:
            return [toggles[-1].data["cell"]] if toggles else []
        selected: set[int] = set()
        for action in toggles:
            selected ^= {action.data["cell"]}
        return sorted(selected)

    def perturbations(self, truth: CellSetTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
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

    def answer_actions(self, truth: CellSetTruth, layout: Layout) -> list[dict[str, Any]]:
        return [click(*layout.cell(i).center()) for i in sorted(truth["correct_patches"])]

    def cu_answer(self, truth: CellSetTruth) -> CuAnswer:
        """Screen coordinates: each cell, then Submit (the published page draws the grid itself)."""
        page = CELL_PAGES[self.cell_page](_pair(truth["image_size"]), _pair(truth["grid_size"]), self.steps)
        return "tool_calls", self.compile_actions(truth, page)

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        key = self.published_answer_key
        cells = entry.get(key)
        if not isinstance(cells, list):
            raise ValueError(f"no {key} list (the published grader reads the cells from {key})")
        grid = entry.get("grid_size")
        if self.published_grid_fixed or not grid:
            grid = self.published_grid
        context.public["grid_size"] = list(grid)
        truth = {**entry, "correct_patches": list(cells), "grid_size": list(grid)}
        return _with_defaults(truth, context), {}


class SwapType(PuzzleType[SwapTruth]):
    """Swap two tiles. truth: answer (valid pairs), grid_size, image_size."""

    mode = Mode.GRID
    widget = "swap"

    def verify(self, truth: SwapTruth, answer: Any, masks: Masks | None = None) -> Verdict:
        rows, cols = truth["grid_size"]
        if not isinstance(answer, (list, tuple)) or len(answer) != 2:
            return malformed("expected a swap [i, j]")
        cells, problem = parse_cells(answer, rows * cols)
        if cells is None:
            return malformed(problem or "expected a list of cell indices")
        valid = [set(pair) for pair in truth["answer"]]
        if cells in valid:
            return right("the swap completes a line")
        shares = any(cells & pair for pair in valid)
        return wrong(0.5 if shares else 0.0, "the swap completes no line")

    def solution(self, truth: SwapTruth) -> list[int]:
        return list(truth["answer"][0])

    chance_rule = "two different cells uniform over the grid: the swaps that complete a line over all pairs"

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> list[int]:
        rows, cols = public["grid_size"]
        return sorted(int(cell) for cell in rng.choice(rows * cols, size=2, replace=False))

    def chance_rate(self, truth: SwapTruth, masks: Masks) -> float:
        rows, cols = truth["grid_size"]
        cells = rows * cols
        valid = {frozenset(pair) for pair in truth["answer"] if len(set(pair)) == 2 and set(pair) <= set(range(cells))}
        return len(valid) / math.comb(cells, 2)

    def layout(self, public: PublicData) -> Layout:
        return bingo_page(_pair(public["image_size"]), _pair(public["grid_size"]), self.steps)

    def reduce(self, actions: list[Action], public: PublicData) -> list[int]:
        """The two cells picked when "Swap and Submit" was pressed, as the page keeps them: a click
        picks a cell (a third pick drops the first), a click on a picked cell drops it.

        Attempts recorded on the earlier page logged swaps instead: the cells their net
        arrangement moved."""
        if _of(actions, "act.swap"):
            return self._moved_by_swaps(actions, public)
        picked: list[int] = []
        for action in _of(actions, "act.toggle"):
            cell = action.data["cell"]
            if cell in picked:
                picked.remove(cell)
            else:
                picked = [*picked[-1:], cell]
        if len(picked) != 2:
            raise Unreadable(f"{len(picked)} cells picked, a swap needs two")
        return sorted(picked)

    @staticmethod
    def _moved_by_swaps(actions: list[Action], public: PublicData) -> list[int]:
        rows, cols = public["grid_size"]
        tiles = list(range(rows * cols))
        for action in _of(actions, "act.swap"):
            a, b = action.data["a"], action.data["b"]
            tiles[a], tiles[b] = tiles[b], tiles[a]
        moved = [cell for cell, tile in enumerate(tiles) if cell != tile]
        if not moved:
            raise Unreadable("no tiles swapped")
        return moved

    def perturbations(self, truth: SwapTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        rows, cols = truth["grid_size"]
        valid = [set(pair) for pair in truth["answer"]]
        pairs = [[i, j] for i in range(rows * cols) for j in range(i + 1, rows * cols) if {i, j} not in valid]
        picks = rng.choice(len(pairs), size=min(6, len(pairs)), replace=False)
        return [pairs[i] for i in picks]

    def answer_actions(self, truth: SwapTruth, layout: Layout) -> list[dict[str, Any]]:
        i, j = truth["answer"][0]
        return [click(*layout.cell(i).center()), click(*layout.cell(j).center())]

    def cu_answer(self, truth: SwapTruth) -> CuAnswer:
        alternatives = []
        for pair in truth["answer"]:
            points = [_cell_center_natural(i, truth["grid_size"], truth["image_size"]) for i in pair]
            alternatives.append([{"action": "click", "arguments": {"x": int(x), "y": int(y)}} for x, y in points])
        return "multi_swap", alternatives

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        if not entry.get("answer"):
            raise ValueError("no answer swap pairs")
        truth = _with_defaults(entry, context, grid_size=[3, 3])
        context.public["grid_size"] = list(truth["grid_size"])
        return truth, {}


# --- arrow cycling -------------------------------------------------------------------------
class OptionType(PuzzleType[OptionTruth]):
    """Page through options with arrows. truth: correct_option_index, option_count. Starts at 0."""

    mode = Mode.CYCLE
    widget = "option"
    published_answer_key: ClassVar[str] = "correct_option_index"  # the field the published grader reads
    # The page's labels over the reference and the option ("" keeps the place, shows nothing).
    column_labels: ClassVar[tuple[str, str]] = ("Reference", "Match This")
    dot_pitch: ClassVar[float] = 19  # px from one option dot to the next

    def verify(self, truth: OptionTruth, answer: Any, masks: Masks | None = None) -> Verdict:
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
        plural = "" if steps == 1 else "s"
        return wrong(1 - steps / max(1, count // 2), f"option {index}, {steps} arrow step{plural} away")

    def solution(self, truth: OptionTruth) -> int:
        return truth["correct_option_index"]

    chance_rule = "one option uniform over the options: 1 over the option count"

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> int:
        return int(rng.integers(public["option_count"]))

    def chance_rate(self, truth: OptionTruth, masks: Masks) -> float:
        return 1 / truth["option_count"]

    def layout(self, public: PublicData) -> Layout:
        return arrows_page(
            _pair(public["image_size"]),
            _pair(public["reference_size"]),
            self.steps,
            self.column_labels,
            public["option_count"],
            self.dot_pitch,
        )

    def reduce(self, actions: list[Action], public: PublicData) -> int:
        return _cycle_total(actions) % public["option_count"]

    def perturbations(self, truth: OptionTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        return [i for i in range(truth["option_count"]) if i != truth["correct_option_index"]]

    def answer_actions(self, truth: OptionTruth, layout: Layout) -> list[dict[str, Any]]:
        return [click(*layout.control("next").center()) for _ in range(truth["correct_option_index"])]

    def cu_answer(self, truth: OptionTruth) -> CuAnswer:
        return "option", {"select_option_index": truth["correct_option_index"]}

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        key = self.published_answer_key
        given = entry.get(key)
        index = as_int(given)
        if index is None:
            raise ValueError(f"no whole number in {key} (the published grader reads it)")
        count = context.public.get("option_count") or entry.get("option_count")
        if not count or not 0 <= index < count:
            raise ValueError(f"correct option {given} is not among {count} options")
        return _with_defaults({**entry, "correct_option_index": index, "option_count": count}, context), {}


class AngleType(PuzzleType[AngleTruth]):
    """Rotate in 45-degree steps. truth: correct_angle (0..315). Starts at 0."""

    mode = Mode.CYCLE
    widget = "rotate"
    step = 45

    def verify(self, truth: AngleTruth, answer: Any, masks: Masks | None = None) -> Verdict:
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

    def solution(self, truth: AngleTruth) -> int:
        return truth["correct_angle"]

    chance_rule = "one rotation uniform over the steps of a turn: the step over 360 degrees"

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> int:
        return int(rng.integers(360 // self.step)) * self.step

    def chance_rate(self, truth: AngleTruth, masks: Masks) -> float:
        return self.step / 360

    def layout(self, public: PublicData) -> Layout:
        labels = ("Reference", "Rotate to match")
        sizes = _pair(public["image_size"]), _pair(public["reference_size"])
        return arrows_page(*sizes, self.steps, labels, 360 // self.step)

    def reduce(self, actions: list[Action], public: PublicData) -> int:
        return (_cycle_total(actions) * self.step) % 360

    def perturbations(self, truth: AngleTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        return [a for a in range(0, 360, self.step) if a != truth["correct_angle"] % 360]

    def answer_actions(self, truth: AngleTruth, layout: Layout) -> list[dict[str, Any]]:
        steps = (truth["correct_angle"] % 360) // self.step
        return [click(*layout.control("next").center()) for _ in range(steps)]

    def cu_answer(self, truth: AngleTruth) -> CuAnswer:
        return "rotate", {"rotate_to_angle": truth["correct_angle"]}

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        angle = as_int(entry.get("correct_angle"))
        if angle is None or angle % self.step:
            raise ValueError(f"correct_angle {entry.get('correct_angle')!r} is not a multiple of {self.step}")
        return _with_defaults({**entry, "correct_angle": angle % 360}, context), {}


# --- text, drag, hold ---------------------------------------------------------------------------
class IntegerTextType(PuzzleType[IntegerTruth]):
    """Type a whole number. truth: sum."""

    mode = Mode.TEXT
    widget = "text"
    truth_key: ClassVar[Literal["sum"]] = "sum"  # the truth's key of the number (IntegerTruth)
    # The whole numbers a blind guess types, uniform, both ends included: the type's possible answers.
    guess_range: ClassVar[tuple[int, int]]
    chance_rule = "a whole number uniform over the type's possible answers: 1 over their count"

    def verify(self, truth: IntegerTruth, answer: Any, masks: Masks | None = None) -> Verdict:
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

    def solution(self, truth: IntegerTruth) -> str:
        return str(truth[self.truth_key])

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> str:
        low, high = self.guess_range
        return str(int(rng.integers(low, high + 1)))

    def chance_rate(self, truth: IntegerTruth, masks: Masks) -> float:
        low, high = self.guess_range
        return 1 / (high - low + 1) if low <= truth[self.truth_key] <= high else 0.0

    def layout(self, public: PublicData) -> Layout:
        return text_page(_pair(public["image_size"]), self.steps)

    def reduce(self, actions: list[Action], public: PublicData) -> str:
        typed = _of(actions, "act.type")
        if not typed:
            raise Unreadable("nothing typed")
        return typed[-1].data["text"]

    def perturbations(self, truth: IntegerTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        value = truth[self.truth_key]
        return [str(value + 1), str(value - 1), str(value + 5), "0", value * 2 + 1]

    def answer_actions(self, truth: IntegerTruth, layout: Layout) -> list[dict[str, Any]]:
        return [click(*layout.control("text").center()), type_text(str(truth[self.truth_key]))]

    def cu_answer(self, truth: IntegerTruth) -> CuAnswer:
        return "type_text", {"type_text": str(truth[self.truth_key])}

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        value = self._parse(entry.get(self.truth_key))
        if value is None:
            raise ValueError(f"no whole number in {self.truth_key}")
        return _with_defaults({**entry, self.truth_key: value}, context), {}


class DragPositionType(TolerancePointType[DragTruth]):
    """Drag a piece so its top-left lands on a target: judged like a point within tolerance.

    truth: target_position, tolerance, image_size, start_position, piece_size.
    """

    mode = Mode.REALTIME
    widget = "drag"
    target_word = "slot"

    def perturbations(self, truth: DragTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        w, h = truth["image_size"]
        tx, ty = truth["target_position"]
        tol = truth["tolerance"]
        candidates = [[tx + tol + 4, ty], [tx - tol - 4, ty], list(truth["start_position"]), [tx + 5 * tol, ty]]
        return [p for p in candidates if 0 <= p[0] < w and 0 <= p[1] < h and math.hypot(p[0] - tx, p[1] - ty) > tol]

    def layout(self, public: PublicData) -> Layout:
        start = public["start_position"]
        return slider_page(_pair(public["image_size"]), _pair(public["piece_size"]), (start[0], start[1]), self.steps)

    chance_rule = (
        "the piece dropped uniformly along its track (it moves along its row only): "
        "the part of the track within tolerance of the slot over the track"
    )

    def _track(self, image_size: Sequence[int], piece_size: Sequence[int], start: Sequence[float]) -> float:
        """How far the piece's corner can travel from its start, natural px (the page's slider)."""
        page = slider_page(_pair(image_size), _pair(piece_size), (start[0], start[1]), self.steps)
        assert page.slider is not None, "the drag widget's layout has a slider"
        return page.slider.piece_range / page.slider.scale

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> list[float]:
        start = public["start_position"]
        track = self._track(public["image_size"], public["piece_size"], start)
        return [start[0] + float(rng.uniform(0, track)), float(start[1])]

    def chance_rate(self, truth: DragTruth, masks: Masks) -> float:
        start, (tx, ty), tolerance = truth["start_position"], truth["target_position"], truth["tolerance"]
        track = self._track(truth["image_size"], truth["piece_size"], start)
        rise = abs(ty - start[1])
        if rise > tolerance or track <= 0:
            return 0.0
        half = math.sqrt(tolerance**2 - rise**2)  # the slot's tolerance along the piece's row
        overlap = min(tx + half, start[0] + track) - max(tx - half, start[0])
        return max(0.0, overlap) / track

    def reduce(self, actions: list[Action], public: PublicData) -> list[float]:
        drops = _of(actions, "act.drag_end")
        if not drops:
            raise Unreadable("the piece was not dragged")
        return [drops[-1].data["x"], drops[-1].data["y"]]

    def answer_actions(self, truth: DragTruth, layout: Layout) -> list[dict[str, Any]]:
        """The slider's handle dragged along its track until the piece is over its target (the
        piece moves along its row only; our page reads the piece's unrounded corner)."""
        slider = layout.slider
        assert slider is not None, "the drag widget's layout has a slider"
        shift = (truth["target_position"][0] - truth["start_position"][0]) * layout.main.scale
        start = slider.handle.center()
        return [drag(start, (start[0] + slider.handle_shift(shift), start[1]))]

    def cu_answer(self, truth: DragTruth) -> CuAnswer:
        """The handle dragged under the piece's target, then Submit.

        The published page submits the piece's left edge over the background's scale; its piece
        is drawn at a rounded width, centred on the hole, so the edge sought is offset by half the
        rounding."""
        start_at = truth["start_position"]
        page = slider_page(
            _pair(truth["image_size"]), _pair(truth["piece_size"]), (start_at[0], start_at[1]), self.steps
        )
        slider, scale = page.slider, page.main.scale
        assert slider is not None
        piece_w = truth["piece_size"][0]
        left = truth["target_position"][0] * scale - (round(piece_w * scale) - piece_w * scale) / 2
        start = slider.handle.center()
        end = (start[0] + slider.handle_shift(left), start[1])
        return "tool_calls", [drag(start, end), click(*page.control("submit").center())]

    @staticmethod
    def _hole_offset(truth: DragTruth) -> list[float]:
        """From the piece's top left to the hole's: the published page centres a larger piece on the hole."""
        piece = truth["piece_size"]
        return [(p - h) / 2 for p, h in zip(piece, truth.get("hole_size", piece))]

    def published_answer(self, answer: Any, public: PublicData) -> Any:
        """The piece's corner moved to the hole's, as published_truth moves the target."""
        point, _ = parse_point(answer, public["image_size"])
        if point is None:
            return answer
        piece = public["piece_size"]
        offset = [(p - h) / 2 for p, h in zip(piece, public.get("hole_size", piece))]
        return [point[0] + offset[0], point[1] + offset[1]]

    def published_truth(self, truth: DragTruth, mask_paths: dict[str, str]) -> dict[str, Any]:
        """The published target_position is the hole's top left (ours is the piece's)."""
        hole = [t + o for t, o in zip(truth["target_position"], self._hole_offset(truth))]
        return {**truth, "target_position": hole}

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        hole_at, _ = parse_point(entry.get("target_position"), context.image_size)
        if hole_at is None:
            raise ValueError("no target_position inside the image")
        piece = context.public.get("piece_size") or entry.get("hole_size")
        if not piece:
            raise ValueError("no component image or hole_size")
        hole = list(entry.get("hole_size") or piece)
        # The published page starts the piece at the left edge, level with the hole.
        start = context.public.get("start_position") or [0, hole_at[1] - (piece[1] - hole[1]) / 2]
        context.public.setdefault("start_position", list(start))
        context.public.setdefault("hole_size", hole)
        truth = _with_defaults(
            {**entry, "hole_size": hole}, context, tolerance=10, piece_size=list(piece), start_position=list(start)
        )
        offset = [(p - h) / 2 for p, h in zip(piece, hole)]
        truth["target_position"] = [hole_at[0] - offset[0], hole_at[1] - offset[1]]
        return truth, {}


class HoldType(PuzzleType[HoldTruth]):
    """Press and hold for at least hold_time seconds. truth: hold_time. Answer: seconds held."""

    mode = Mode.REALTIME
    widget = "hold"
    auto_submit = True
    max_hold_seconds = 600
    margin_ms = 400  # the reference hold overshoots a little, as a person would
    # A hold may claim CLOCK_SLACK_MS longer than the server saw between receiving its start and
    # its end: the page sends each the moment it happens, so only jitter separates the two clocks.
    # (A hold begun while the socket is down reaches the server late and counts short.)

    def reduce(self, actions: list[Action], public: PublicData) -> float:
        """Seconds of the last complete hold, as far as the server can confirm it.

        The page's clock measures the hold precisely, but the page could claim anything: a claim
        longer than the server saw between receiving the hold's start and its end (plus slack
        for jitter) is refused, and the hold counts for what the server saw."""
        start = None
        held = None
        for action in actions:
            if action.kind == "act.hold_start":
                start = action
            elif action.kind == "act.hold_end" and start is not None:
                held = (start, action)
                start = None
        if held is None:
            raise Unreadable("no complete hold")
        begin, end = held
        claimed = end.t - begin.t
        if claimed < 0:
            raise Unreadable("the hold ends before it starts")
        confirmed = max(0.0, end.received - begin.received) + CLOCK_SLACK_MS
        return round(min(claimed, confirmed) / 1000, 4)

    def layout(self, public: PublicData) -> Layout:
        return hold_page(self.steps)

    chance_rule = "none: any hold long enough passes, so there is nothing to guess (not chance-able)"

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> None:
        return None

    def chance_rate(self, truth: HoldTruth, masks: Masks) -> None:
        return None

    def hold_progress(self, truth: HoldTruth, held_ms: float) -> float:
        """How far the button's loading bar is after held_ms, 0..1 (shown while holding)."""
        return min(1.0, max(0.0, held_ms / (truth["hold_time"] * 1000)))

    def verify(self, truth: HoldTruth, answer: Any, masks: Masks | None = None) -> Verdict:
        held = as_number(answer)
        if held is None:
            return malformed("expected the seconds held")
        if not 0 <= held <= self.max_hold_seconds:
            return malformed(f"hold of {held:g} s is outside 0..{self.max_hold_seconds}")
        target = truth["hold_time"]
        if held >= target:
            return right(f"held {held:.2f} s of {target:g} s")
        return wrong(held / target, f"released after {held:.2f} s of {target:g} s")

    def solution(self, truth: HoldTruth) -> float:
        return float(truth["hold_time"])

    def perturbations(self, truth: HoldTruth, masks: Masks, rng: np.random.Generator) -> list[Any]:
        target = truth["hold_time"]
        return [0, target * 0.5, max(0.0, target - 0.2)]

    def answer_actions(self, truth: HoldTruth, layout: Layout) -> list[dict[str, Any]]:
        duration = int(truth["hold_time"] * 1000) + self.margin_ms
        return [hold(*layout.control("hold").center(), duration)]

    def cu_answer(self, truth: HoldTruth) -> CuAnswer:
        return "hold", {"duration_ms": int(truth["hold_time"] * 1000) + self.margin_ms}

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        held = as_number(entry.get("hold_time", 3))
        if held is None or held <= 0:
            raise ValueError(f"hold_time {entry.get('hold_time')!r} is not a positive number")
        return _with_defaults({**entry, "hold_time": held}, context), {}
