"""What every puzzle type is: data in, data out. No database, no Django.

A type generates a puzzle from a random generator, verifies an answer against the private
truth, and compiles the truth into the computer-use actions that solve the live page.
Answer-shape logic (points, masks, cells, options, ...) lives in kinds.py; a concrete type
usually only draws its puzzle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np
from PIL import Image

from puzzles.layout import Layout

from .contract import CuAnswer, Masks, PublicData, Widget

# Rewards: nothing submitted or unreadable = 0; any readable wrong answer lies in
# [WRONG_FLOOR, WRONG_CEILING], rising with closeness; correct = 1. So submitting always
# pays more than not submitting, and closer always pays more than farther.
WRONG_FLOOR = 0.1
WRONG_CEILING = 0.9

# Clock granularity and network jitter between the page's clock and the server's receive times:
# how far a page's timestamps may run ahead of what the server saw (holds here, every duration in
# annotation.live.timing).
CLOCK_SLACK_MS = 250.0


class Mode(str, Enum):
    """The five interaction modes of CaptchaArena."""

    CLICK = "click"
    GRID = "grid"  # multi-select or tile swap on a grid
    CYCLE = "cycle"  # arrow cycling through options or rotations
    REALTIME = "realtime"  # drag or press-and-hold
    TEXT = "text"


@dataclass(frozen=True)
class Verdict:
    correct: bool
    reward: float
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"correct": self.correct, "reward": round(self.reward, 6), "reason": self.reason}


def malformed(reason: str) -> Verdict:
    return Verdict(False, 0.0, f"malformed answer: {reason}")


def wrong(closeness: float, reason: str) -> Verdict:
    """A readable but wrong answer; closeness in [0, 1] (1 = as close as a wrong answer gets)."""
    closeness = min(1.0, max(0.0, closeness))
    return Verdict(False, WRONG_FLOOR + (WRONG_CEILING - WRONG_FLOOR) * closeness, reason)


def right(reason: str) -> Verdict:
    return Verdict(True, 1.0, reason)


@dataclass(frozen=True)
class Action:
    """A semantic action logged by the page (docs/events.md): its kind as logged and stored
    ("act.click", the one name of an action everywhere), the client's timestamp and the server's
    receive time (both epoch ms), its fields."""

    kind: str
    t: float
    received: float
    data: dict[str, Any] = field(default_factory=dict)


class Unreadable(ValueError):
    """The logged actions give no answer the verifier could read; the message says why."""


@dataclass
class Generated:
    """One generated puzzle.

    public: everything a page may show (instruction, image keys and sizes, option count...).
    truth: the private answer data, JSON-serialisable, never sent to a browser.
    images: public image assets by key; `public` refers to them by these keys.
    masks: private boolean masks (natural image size) by name; truth refers to them by name.
    """

    public: PublicData
    truth: dict[str, Any]  # the kind's truth (contract.py) and whatever else the type keeps
    images: dict[str, Image.Image]
    masks: Masks = field(default_factory=dict)


class PublishedContext:
    """What an import offers a type while it reads one entry."""

    def __init__(
        self, image_size: tuple[int, int], load_mask: Callable[[str], np.ndarray], public: dict[str, Any]
    ) -> None:
        self.image_size = list(image_size)
        self.load_mask = load_mask  # relative path -> boolean array
        self.public = public  # the page data already read for this entry (not all of it yet)


# The truth a type reads: one of the TypedDicts of contract.py, fixed by each kind.
TruthT = TypeVar("TruthT", bound=Mapping[str, Any])


class PuzzleType(Generic[TruthT]):
    """Base of all types. Subclasses set the class attributes and implement generate().

    The kinds (kinds.py) fix TruthT to their truth's TypedDict; code that looks a type up by name
    (registry.get_type) holds a PuzzleType[Any] and passes it the stored JSON.
    """

    name: ClassVar[str]  # CaptchaArena type name, e.g. "Geometry_Click"
    mode: ClassVar[Mode]
    widget: ClassVar[Widget]  # the page widget
    auto_submit: ClassVar[bool] = False  # submits on the first action, as published
    instruction: ClassVar[str]
    steps: ClassVar[int] = 1  # the published page's "Action Steps" stars, fixed per type
    single_choice: ClassVar[bool] = False  # cells: a click picks one cell and drops the one picked before

    # --- to implement -------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> Generated:
        """A new puzzle, a pure function of the generator's state: public data, truth, images, masks."""
        raise NotImplementedError

    def verify(self, truth: TruthT, answer: Any, masks: Masks | None = None) -> Verdict:
        """The verdict on an answer (any JSON value; unreadable ones are malformed, never raised)."""
        raise NotImplementedError

    def solution(self, truth: TruthT) -> Any:
        """The answer the truth itself gives (verifies correct with reward 1)."""
        raise NotImplementedError

    def perturbations(self, truth: TruthT, masks: Masks, rng: np.random.Generator) -> list[Any]:
        """Readable answers that must verify wrong: near misses and far misses."""
        raise NotImplementedError

    def answer_actions(self, truth: TruthT, layout: Layout) -> list[dict[str, Any]]:
        """The actions that enter the solution on the page, without the final submit."""
        raise NotImplementedError

    def reduce(self, actions: list[Action], public: PublicData) -> Any:
        """The answer that the page's semantic actions (in order, before submit) add up to.

        Raises Unreadable when they give none. The kinds implement this per widget.
        """
        raise NotImplementedError

    def cu_answer(self, truth: TruthT) -> CuAnswer:
        """The published computer-use answer (answer_cu_kind, answer_cu); every kind gives one."""
        raise NotImplementedError(f"{type(self).__name__} has no computer-use answer")

    # --- chance: what a blind guess scores ---------------------------------------------
    # The guess random_answer draws and chance_rate counts, said once for the labels, the report
    # and a release's data card ("a point uniform over the image").
    chance_rule: ClassVar[str]

    def random_answer(self, public: PublicData, rng: np.random.Generator) -> Any:
        """A blind guess: an answer drawn uniformly from what the page lets anyone enter, knowing
        only the public data (never the pictures); None for a type with nothing to guess."""
        raise NotImplementedError

    def chance_rate(self, truth: TruthT, masks: Masks) -> float | None:
        """The share of random_answer's guesses the verifier accepts on this puzzle, worked out
        from its answer space (bench/chance.py checks it against guesses sent through verify);
        None for a type with nothing to guess."""
        raise NotImplementedError

    def hold_progress(self, truth: TruthT, held_ms: float) -> float | None:
        """The hold button's loading bar (0..1) after held_ms; None for types without a hold bar."""
        return None

    # --- the published CaptchaArena layout ----------------------------------------------
    def published_truth(self, truth: TruthT, mask_paths: dict[str, str]) -> dict[str, Any]:
        """ground_truth.json fields for this truth (masks given as file paths)."""
        return dict(truth)

    def truth_from_published(self, entry: dict[str, Any], context: PublishedContext) -> tuple[dict[str, Any], Masks]:
        """Our truth (and masks) from a ground_truth.json entry; raises ValueError if it is unusable.

        The result is read, not typed: the import keeps it only if its own solution verifies."""
        return dict(entry), {}

    def published_answer(self, answer: Any, public: PublicData) -> Any:
        """An answer as the published grader reads it (a release's `answer` column): ours for
        every kind but the drag, whose published target is the hole's corner, not the piece's."""
        return answer

    def published_instruction(self, entry: dict[str, Any]) -> str | None:
        """The instruction the published page shows when it writes its own from an entry's fields
        (over `prompt`); None: it shows `prompt`, else the question."""
        return None

    def stand_in_image(self) -> Image.Image | None:
        """The image to show for a published entry without one (the published page draws the
        hold button itself, with no image); None: an entry of this type needs its image."""
        return None

    def tiles_from_image(self, image: Image.Image) -> list[Image.Image]:
        """The separate tiles the published page shows instead of the main image, row-major;
        empty: it shows the image itself."""
        return []

    def image_from_tiles(self, tiles: list[Image.Image]) -> Image.Image:
        """The main image our page shows for a published entry given as tiles (`images` in a
        `subfolder`); raises ValueError for a type the published page never shows as tiles."""
        raise ValueError(f"{self.name} is never shown as tiles on the published page")

    # --- shared -------------------------------------------------------------------------
    @classmethod
    def slug(cls) -> str:
        """The name as a URL or the command line may give it: "geometry-click"."""
        return cls.name.lower().replace("_", "-")

    def layout(self, public: PublicData) -> Layout:
        """Where everything of this puzzle sits on the stage: the published page's layout for
        its sizes (puzzles/layout.py). The kinds implement it."""
        raise NotImplementedError

    def compile_actions(self, truth: TruthT, layout: Layout) -> list[dict[str, Any]]:
        """The reference answer as computer-use actions in 1280x1080 stage coordinates."""
        actions = self.answer_actions(truth, layout)
        if "submit" in layout.controls:
            actions.append(click(*layout.control("submit").center()))
        return actions

    def describe(self) -> dict[str, Any]:
        """The type as listed by the command line and the review pages."""
        return {
            "name": self.name,
            "mode": self.mode.value,
            "widget": self.widget,
            "auto_submit": self.auto_submit,
            "instruction": self.instruction,
        }


# --- computer-use actions, in the published tool-call shape ------------------------------
def click(x: float, y: float) -> dict[str, Any]:
    return {"action": "click", "arguments": {"x": round(x), "y": round(y)}}


def drag(start: tuple[float, float], end: tuple[float, float]) -> dict[str, Any]:
    return {
        "action": "drag",
        "arguments": {
            "start_x": round(start[0]),
            "start_y": round(start[1]),
            "end_x": round(end[0]),
            "end_y": round(end[1]),
        },
    }


def hold(x: float, y: float, duration_ms: int) -> dict[str, Any]:
    return {"action": "hold", "arguments": {"x": round(x), "y": round(y), "duration_ms": int(duration_ms)}}


def type_text(text: str) -> dict[str, Any]:
    return {"action": "type_text", "arguments": {"text": text}}


# --- answer parsing: never raises, returns (value, None) or (None, reason) ---------------
def as_number(value: Any) -> float | None:
    """A finite real number, or None. Booleans are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def as_int(value: Any) -> int | None:
    """An integral number (7 or 7.0), or None."""
    number = as_number(value)
    if number is None or number != int(number):
        return None
    return int(number)


def parse_point(answer: Any, size: Sequence[int]) -> tuple[tuple[float, float] | None, str | None]:
    if isinstance(answer, dict) and set(answer) >= {"x", "y"}:
        answer = [answer["x"], answer["y"]]
    if not isinstance(answer, (list, tuple)) or len(answer) != 2:
        return None, "expected a point [x, y]"
    x, y = as_number(answer[0]), as_number(answer[1])
    if x is None or y is None:
        return None, "point coordinates must be finite numbers"
    w, h = size
    if not (0 <= x < w and 0 <= y < h):
        return None, f"point ({x:g}, {y:g}) is outside the {w}x{h} image"
    return (x, y), None
