"""The puzzle contract: the shapes of a puzzle's `public` and `truth` dicts.

Both are stored as JSON (Puzzle.public, Puzzle.truth) and read by the kinds, the live scoring
path, interop and the page's JS, so they are TypedDicts: plain dicts at runtime, checked by mypy.
Sizes and positions are lists because that is what JSON gives back.

`public` is what a page may see; `truth` is the private answer data, one shape per answer kind
(kinds.py). A concrete type may store more truth than its kind reads (the question, the objects
drawn...); those extra keys are not part of the contract.

No `from __future__ import annotations` here: on Python 3.11 a TypedDict tells its NotRequired
keys apart at runtime (__required_keys__) only from real annotations, not strings.
"""

from typing import Any, Literal, NotRequired, TypedDict

import numpy as np

Masks = dict[str, np.ndarray]  # private boolean masks (natural image size) by name

# The page widget a type is answered with (the page's JS switches on it).
Widget = Literal["point", "points", "cells", "swap", "option", "rotate", "drag", "hold", "text"]


class PublicData(TypedDict):
    """What a page may show. Image fields hold asset keys, never URLs or file names."""

    instruction: str
    image: str  # the main image's asset key
    image_size: list[int]  # [w, h] of the main image, natural pixels
    reference: NotRequired[str]  # a reference image shown on the left
    reference_size: NotRequired[list[int]]
    grid_size: NotRequired[list[int]]  # [rows, cols] laid over the main image (cells, swap)
    options: NotRequired[list[str]]  # option images in arrow order (option widget); options[0] is `image`
    option_count: NotRequired[int]
    rotations: NotRequired[dict[str, str]]  # {"0": key, ..., "315": key} (rotate widget)
    piece: NotRequired[str]  # the piece to drag (drag widget)
    piece_size: NotRequired[list[int]]
    start_position: NotRequired[list[float]]  # the piece's top-left at the start, natural pixels
    hole_size: NotRequired[list[int]]


# --- truth, one shape per answer kind ----------------------------------------------------------
class MaskTruth(TypedDict):
    """Click inside a mask (MaskPointType)."""

    mask: str  # the name of the mask in Generated.masks / Puzzle.masks
    image_size: list[int]
    point: list[float]  # a sure click: deep inside the mask
    center: list[float]  # the mask's centroid (closeness of a miss)
    bbox: list[int]  # [x1, y1, x2, y2] inclusive
    # An older published file's box instead of a mask: [x1, y1, x2, y2], judged as the published
    # grader judges it (x1 <= x <= x2 on the answer as given); the mask is then the box's pixels.
    box: NotRequired[list[float]]
    # The oldest published files' answer, a point [x, y]: [x, y, r] with the published grader's fixed
    # r (25 px), judged by distance <= r on the answer as given; the mask is the disc's pixels.
    disc: NotRequired[list[float]]


class AvoidMaskTruth(MaskTruth):
    """Click anywhere but on a mask (AvoidMaskPointType); `point` lies outside the mask."""

    radius: float  # half the box's diagonal: how deep into the figure a click counts as close


class ToleranceTruth(TypedDict):
    """A point within tolerance of a target (TolerancePointType)."""

    target_position: list[float]
    tolerance: float  # pixels
    image_size: list[int]


class DragTruth(ToleranceTruth):
    """Drag a piece so its top-left lands within tolerance of target_position (DragPositionType)."""

    start_position: list[float]
    piece_size: list[int]
    hole_size: NotRequired[list[int]]  # the published hole, when the piece is larger: centred on it


class PointSequenceTruth(TypedDict):
    """Points clicked in order (PointSequenceType)."""

    answer: list[list[float]]  # [[x, y], ...] in order
    tolerance: float
    image_size: list[int]


class CellSetTruth(TypedDict):
    """Exactly the right cells of a grid (CellSetType)."""

    correct_patches: list[int]  # row-major cell indices
    grid_size: list[int]  # [rows, cols]
    image_size: list[int]


class SwapTruth(TypedDict):
    """One swap of two tiles (SwapType)."""

    answer: list[list[int]]  # every valid pair [i, j]
    grid_size: list[int]
    image_size: list[int]


class OptionTruth(TypedDict):
    """The right option, paged through with arrows from option 0 (OptionType)."""

    correct_option_index: int
    option_count: int


class AngleTruth(TypedDict):
    """The right rotation, from 0 (AngleType)."""

    correct_angle: int  # degrees, a multiple of the type's step


class IntegerTruth(TypedDict):
    """A whole number typed in (IntegerTextType)."""

    sum: int


class HoldTruth(TypedDict):
    """A press held long enough (HoldType)."""

    hold_time: float  # seconds


# --- the published computer-use answer (ground_truth_cu.json) ---------------------------------
# "tool_calls": clicks and drags in the published page's screen coordinates, Submit included
# (puzzles/layout.py), for widgets the published client cannot map from image pixels.
CuKind = Literal["single_xy", "multi_xy", "multi_swap", "option", "rotate", "type_text", "drag", "hold", "tool_calls"]
CuAnswer = tuple[CuKind, Any]  # answer_cu_kind and answer_cu; the answer's shape depends on the kind
