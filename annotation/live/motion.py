"""Pointer motion of an attempt, from its logged raw events: the continuous path as arrays, a few
features per attempt, and a small human-likeness score with its rule written down.

Measured once, when the attempt is scored (live/scoring.py keeps the features on the attempt,
`Attempt.motion`), so reports and the datasets read a few numbers per attempt, never the events.

The path: every pointer sample (pointermove, one per coalesced sample, and the presses and
releases) in time order, in stage pixels (x, y as the page logged them), with the buttons held
(the DOM's bit mask: 1 left, 2 right, 4 middle) and the pointer type.

Features of one attempt (None when it has no pointer sample):
- path_px: the length of the whole path, stage pixels;
- straightness: of the movements towards each press (from the previous press, or the first
  sample, to the pointerdown), straight-line distance over path length, summed over movements of
  at least MIN_MOVE_PX of path: 1.0 is a ruler-straight line, a hand's curved reach is lower;
- peak_speed: the fastest stretch of at least SPEED_WINDOW_MS, path length over time (px/s);
- pause_ms: before the first action, how long the pointer stood still: from the last sample that
  moved to the press (a pointerdown, or the key) that made the first semantic action;
- density: pointer samples per 100 px of path.

Human-likeness (written into every table that shows it): a quarter for each of
  curved: straightness under 0.99;
  dense: at least 2 samples per 100 px of path;
  settled: a pause before the first action of at least 40 ms;
  aimed: a peak speed between 300 and 15,000 px/s.
A hand at 60 Hz or more curves, samples densely, settles before it presses and moves at aimed
speeds; a scripted pointer that jumps to a point and presses in the same instant (one sample
per action, a straight line, no pause) scores 0 or 0.25. The score describes motion; it proves
nothing about who moved.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

RULE = (
    "a quarter each for: curved (straightness under 0.99), dense (at least 2 samples per 100 px of path), "
    "settled (a pause of at least 40 ms before the first action), aimed (peak speed 300 to 15,000 px/s)"
)
MIN_MOVE_PX = 20.0
SPEED_WINDOW_MS = 16.0
CURVED_BELOW = 0.99
DENSE_PER_100PX = 2.0
SETTLED_MS = 40.0
AIMED_PX_S = (300.0, 15_000.0)
MOVED_PX = 0.5  # a sample this close to the one before is the pointer standing still

POINTER_KINDS = ("pointermove", "pointerdown", "pointerup", "pointercancel")
KIND_CODES = {"pointermove": 0, "pointerdown": 1, "pointerup": 2, "pointercancel": 3}
POINTER_TYPES = ("mouse", "pen", "touch")
BUTTON_BITS = {0: 1, 1: 4, 2: 2, 3: 8, 4: 16}  # event.button -> event.buttons bit, as the DOM has them


@dataclass(frozen=True)
class Path:
    """The continuous pointer path: one entry per sample, in time order."""

    t: np.ndarray  # float64, epoch ms (the page's clock)
    x: np.ndarray  # float32, stage pixels
    y: np.ndarray  # float32
    buttons: np.ndarray  # uint8, bit mask held after the sample
    pointer: np.ndarray  # uint8, index in POINTER_TYPES
    kind: np.ndarray  # uint8, KIND_CODES

    def __len__(self) -> int:
        return len(self.t)


def pointer_path(events: Iterable[tuple[str, float, dict]]) -> Path:
    """The path from stored events (kind, t, data), in stored order; samples sorted by time
    (stable, so samples of one instant keep the page's order)."""
    samples = sorted(
        ((float(t), kind, data) for kind, t, data in events if kind in KIND_CODES and "x" in data),
        key=lambda sample: sample[0],
    )
    rows = []
    held = 0
    for t, kind, data in samples:
        bit = BUTTON_BITS.get(int(data.get("button", 0)), 0)
        if kind == "pointerdown":
            held |= bit
        elif kind in ("pointerup", "pointercancel"):
            held &= ~bit
        pointer = POINTER_TYPES.index(data["pointer"]) if data.get("pointer") in POINTER_TYPES else 0
        rows.append((t, float(data["x"]), float(data["y"]), held, pointer, KIND_CODES[kind]))
    if not rows:
        empty = np.zeros(0)
        return Path(empty, empty.astype(np.float32), empty.astype(np.float32), *(empty.astype(np.uint8),) * 3)
    times, xs, ys, buttons, pointers, kinds = zip(*rows)
    return Path(
        np.array(times, dtype=np.float64),
        np.array(xs, dtype=np.float32),
        np.array(ys, dtype=np.float32),
        np.array(buttons, dtype=np.uint8),
        np.array(pointers, dtype=np.uint8),
        np.array(kinds, dtype=np.uint8),
    )


def first_action_press(events: Sequence[tuple[str, float, dict]]) -> float | None:
    """The time of the press (pointerdown or keydown) behind the first semantic action."""
    acted = next((t for kind, t, _ in events if kind.startswith("act.")), None)
    if acted is None:
        return None
    presses = [t for kind, t, _ in events if kind in ("pointerdown", "keydown") and t <= acted + 1.0]
    return max(presses) if presses else None


def features(path: Path, first_press: float | None) -> dict[str, Any]:
    """The motion features of one attempt and its human-likeness score (see the module's rule)."""
    if len(path) == 0:
        return {
            "samples": 0,
            **dict.fromkeys(("path_px", "straightness", "peak_speed", "pause_ms", "density")),
            "human_likeness": None,
        }
    xy = np.stack([path.x, path.y], axis=1).astype(np.float64)
    steps = np.hypot(*np.diff(xy, axis=0).T) if len(path) > 1 else np.zeros(0)
    cumulative = np.concatenate([[0.0], np.cumsum(steps)])
    length = float(cumulative[-1])
    found = {
        "samples": len(path),
        "path_px": length,
        "straightness": _straightness(path, xy, cumulative),
        "peak_speed": _peak_speed(path.t, cumulative),
        "pause_ms": _pause(path.t, steps, path.kind, first_press),
        "density": 100.0 * len(path) / length if length > 0 else None,
    }
    found["human_likeness"] = human_likeness(found)
    return found


def _straightness(path: Path, xy: np.ndarray, cumulative: np.ndarray) -> float | None:
    presses = np.flatnonzero(path.kind == KIND_CODES["pointerdown"])
    chords = lengths = 0.0
    start = 0
    for press in presses:
        travelled = float(cumulative[press] - cumulative[start])
        if travelled >= MIN_MOVE_PX:
            chords += float(np.hypot(*(xy[press] - xy[start])))
            lengths += travelled
        start = int(press)
    return chords / lengths if lengths else None


def _peak_speed(t: np.ndarray, cumulative: np.ndarray) -> float | None:
    ends = np.searchsorted(t, t + SPEED_WINDOW_MS)
    usable = ends < len(t)
    if not usable.any():
        return None
    starts = np.flatnonzero(usable)
    dt = t[ends[usable]] - t[starts]
    return float(np.max((cumulative[ends[usable]] - cumulative[starts]) / dt) * 1000.0)


def _pause(t: np.ndarray, steps: np.ndarray, kind: np.ndarray, press: float | None) -> float | None:
    if press is None:
        return None
    # The samples that arrived somewhere new (the first one arrived from nowhere)...
    moved = np.concatenate([[0], np.flatnonzero(steps > MOVED_PX) + 1])
    moved = moved[kind[moved] == KIND_CODES["pointermove"]]  # ...by moving (a press lands where it is)
    before = moved[t[moved] < press]
    if len(before) == 0:
        return None
    return max(0.0, press - float(t[before[-1]]))


def human_likeness(found: dict[str, Any]) -> float | None:
    """A quarter for each check passed (RULE); None without a path to judge."""
    if not found.get("samples") or not found.get("path_px"):
        return None
    speed = found["peak_speed"]
    checks = [
        found["straightness"] is not None and found["straightness"] < CURVED_BELOW,
        found["density"] is not None and found["density"] >= DENSE_PER_100PX,
        found["pause_ms"] is not None and found["pause_ms"] >= SETTLED_MS,
        speed is not None and AIMED_PX_S[0] <= speed <= AIMED_PX_S[1],
    ]
    return sum(checks) / len(checks)


class Logged(Protocol):
    kind: str
    t: float
    data: dict


# Rounding of the kept features: finer than any figure a report shows.
KEPT_DIGITS = {"path_px": 1, "straightness": 4, "peak_speed": 1, "pause_ms": 1, "density": 2}


def attempt_motion(events: Sequence[Logged]) -> dict[str, Any]:
    """The features an attempt keeps (`Attempt.motion`): those of its events through the submit,
    rounded (KEPT_DIGITS); `samples` 0 and the rest None for an attempt made without a pointer."""
    logged = [(e.kind, e.t, e.data) for e in events]
    found = features(pointer_path(logged), first_action_press(logged))
    return {
        name: round(value, KEPT_DIGITS[name]) if name in KEPT_DIGITS and value is not None else value
        for name, value in found.items()
    }
