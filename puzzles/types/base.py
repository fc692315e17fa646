"""What every puzzle type is: data in, data out. No database, no Django.

A type generates a puzzle from a random generator, verifies an answer against the private
truth, and compiles the truth into the computer-use actions that solve the live page.
Answer-shape logic (points, masks, cells, options, ...) lives in kinds.py; a concrete type
usually only draws its puzzle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

import numpy as np
from PIL import Image

from puzzles.layout import Layout, build_layout

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

    def as_dict(self) -> dict:
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
    """A semantic action logged by the page (docs/events.md): its kind without the "act."
    prefix, the client's timestamp and the server's receive time (both epoch ms), its fields."""

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

    public: dict[str, Any]
    truth: dict[str, Any]
    images: dict[str, Image.Image]
    masks: dict[str, np.ndarray] = field(default_factory=dict)


class PublishedContext:
    """What an import offers a type while it reads one entry."""

    def __init__(self, image_size: tuple[int, int], load_mask, public: dict):
        self.image_size = list(image_size)
        self.load_mask = load_mask  # relative path -> boolean array
        self.public = public  # the page data already read for this entry


class PuzzleType:
    """Base of all types. Subclasses set the class attributes and implement generate()."""

    name: ClassVar[str]  # CaptchaArena type name, e.g. "Geometry_Click"
    mode: ClassVar[Mode]
    widget: ClassVar[str]  # the page widget: point, points, cells, swap, option, rotate, drag, hold, text
    auto_submit: ClassVar[bool] = False  # submits on the first action, as published
    instruction: ClassVar[str]
    controls: ClassVar[tuple[str, ...]] = ()  # buttons other than submit, e.g. ("prev", "next")

    # --- to implement -------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> Generated:
        raise NotImplementedError

    def verify(self, truth: dict, answer: Any, masks: dict[str, np.ndarray] | None = None) -> Verdict:
        raise NotImplementedError

    def solution(self, truth: dict) -> Any:
        """The answer the truth itself gives (verifies correct with reward 1)."""
        raise NotImplementedError

    def perturbations(self, truth: dict, masks: dict[str, np.ndarray], rng: np.random.Generator) -> list[Any]:
        """Readable answers that must verify wrong: near misses and far misses."""
        raise NotImplementedError

    def answer_actions(self, truth: dict, layout: Layout) -> list[dict]:
        """The actions that enter the solution on the page, without the final submit."""
        raise NotImplementedError

    def reduce(self, actions: list[Action], public: dict) -> Any:
        """The answer that the page's semantic actions (in order, before submit) add up to.

        Raises Unreadable when they give none. The kinds implement this per widget.
        """
        raise NotImplementedError

    # --- the published CaptchaArena layout ----------------------------------------------
    def published_truth(self, truth: dict, mask_paths: dict[str, str]) -> dict:
        """ground_truth.json fields for this truth (masks given as file paths)."""
        return dict(truth)

    def truth_from_published(self, entry: dict, context: PublishedContext) -> tuple[dict, dict[str, np.ndarray]]:
        """Our truth (and masks) from a ground_truth.json entry; raises ValueError if it is unusable."""
        return dict(entry), {}

    # --- shared -------------------------------------------------------------------------
    @classmethod
    def slug(cls) -> str:
        return cls.name.lower().replace("_", "-")

    def layout(self, public: dict) -> Layout:
        ref = public.get("reference_size")
        grid = public.get("grid_size")
        return build_layout(
            image_size=tuple(public["image_size"]),
            reference_size=tuple(ref) if ref else None,
            grid=tuple(grid) if grid else None,
            controls=self.controls,
            submit=not self.auto_submit,
        )

    def compile_actions(self, truth: dict, layout: Layout) -> list[dict]:
        """The reference answer as computer-use actions in 1280x1080 stage coordinates."""
        actions = self.answer_actions(truth, layout)
        if not self.auto_submit:
            actions.append(click(*layout.control("submit").center()))
        return actions

    def describe(self) -> dict:
        return {
            "name": self.name,
            "mode": self.mode.value,
            "widget": self.widget,
            "auto_submit": self.auto_submit,
            "instruction": self.instruction,
        }


# --- computer-use actions, in the published tool-call shape ------------------------------
def click(x: float, y: float) -> dict:
    return {"action": "click", "arguments": {"x": round(x), "y": round(y)}}


def drag(start: tuple[float, float], end: tuple[float, float]) -> dict:
    return {
        "action": "drag",
        "arguments": {
            "start_x": round(start[0]),
            "start_y": round(start[1]),
            "end_x": round(end[0]),
            "end_y": round(end[1]),
        },
    }


def hold(x: float, y: float, duration_ms: int) -> dict:
    return {"action": "hold", "arguments": {"x": round(x), "y": round(y), "duration_ms": int(duration_ms)}}


def type_text(text: str) -> dict:
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


def parse_point(answer: Any, size: tuple[int, int]) -> tuple[tuple[float, float] | None, str | None]:
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
