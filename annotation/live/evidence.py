"""Evidence of a human hand: whether an attempt's semantic actions are backed by raw input. Pure:
no database.

The page logs the raw pointer and key events that cause each semantic action (docs/events.md),
with the same timestamp, so a person's attempt shows for every action the press that made it, at
its place. A client that sends only semantic actions, or that times a hold by the server's own
progress frames, shows none. The rules, action by action:

- act.click, act.toggle, act.swap: a pointer press (pointerdown, pointerup or click) at the
  action's place and time, or a key at its time (the page's keyboard crosshair, a focused cell);
  for a swap also an earlier press on the first cell;
- act.cycle, act.reset, act.submit: the same on the arrow, "Reset Clicks" or submit button, or a
  key at the same time (a focused button is pressed with Enter or Space); a submit without a
  submit button (the types that submit by themselves) shares its time with the action that
  made it;
- act.type: a keydown, or a raw input event (paste, dictation), at the same time;
- act.drag_start / act.drag_end: a pointerdown on the slider's handle (where the piece's place
  puts it), a pointer path (PATH_SAMPLES moves or more) between, a release at the drop; or from
  the keyboard, an arrow key down at the start, held or pressed between, and let go at the drop;
- act.hold_start / act.hold_end: a pointer press on the hold button (or a key) at the start,
  not released before the end;
- and some pointer movement before the first action (a touch or pen pointerdown counts, having
  no hover, and so does a key for someone on the keyboard).

Semantic coordinates are natural image pixels, raw pointer coordinates stage pixels: the puzzle
type's layout (puzzles/layout.py) maps one to the other, as the page does. A client can forge
raw events too; this catches the cheap scripts, and the report names what it catches.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from annotation.live.timing import LoggedEvent
from puzzles.layout import Layout, Rect

# The page stamps an action with the DOM event that caused it and logs that event with the same
# stamp; a key that presses a button, or types, comes a few milliseconds before its effect.
TIME_MS = 50.0
# Stage pixels between a pointer event and the place of its action: rounding, and the clamp that
# keeps a click on the image's last pixel inside it.
PLACE_PX = 6.0
PATH_SAMPLES = 2  # pointer samples a drag's path needs between its start and its drop

PRESSES = frozenset({"pointerdown", "pointerup", "click"})
RELEASES = frozenset({"pointerup", "pointercancel"})
KEYS = frozenset({"keydown", "keyup"})
KEY_DOWN = frozenset({"keydown"})
NO_HOVER = frozenset({"touch", "pen"})  # pointers that do not move before they press
MOVES = frozenset({"pointermove", "pointerdown", "keydown"})
CYCLE_BUTTONS = {1: "next", -1: "prev"}


@dataclass(frozen=True)
class Evidence:
    ok: bool
    problem: str = ""  # the first thing found without input behind it, in a few words


class _Raw:
    """The raw (non-semantic) events by page time, for lookups around an action."""

    def __init__(self, events: Sequence[LoggedEvent]) -> None:
        self.events = sorted((e for e in events if not e.kind.startswith("act.")), key=lambda e: e.t)
        self.times = [e.t for e in self.events]

    def within(self, start: float, end: float, kinds: frozenset[str]) -> list[LoggedEvent]:
        low, high = bisect.bisect_left(self.times, start), bisect.bisect_right(self.times, end)
        return [e for e in self.events[low:high] if e.kind in kinds]

    def near(self, t: float, kinds: frozenset[str]) -> list[LoggedEvent]:
        return self.within(t - TIME_MS, t + TIME_MS, kinds)

    def first_after(self, t: float, test: Callable[[LoggedEvent], bool]) -> LoggedEvent | None:
        return next((e for e in self.events[bisect.bisect_right(self.times, t) :] if test(e)), None)


def input_evidence(
    events: Sequence[LoggedEvent],
    *,
    layout: Layout,
    free_submit: bool = False,
) -> Evidence:
    """Whether every semantic action among the events has raw input behind it.

    free_submit: the submit needs no input (the page submitted by itself when the time limit ran
    out)."""
    raw = _Raw(events)
    actions = [e for e in events if e.kind.startswith("act.") and not (free_submit and e.kind == "act.submit")]
    if not actions:
        return Evidence(True)
    if not _moved_before(raw, min(a.t for a in actions)):
        return Evidence(False, "no pointer movement before the first action")
    origin = events[0].t
    check = _Checks(raw, layout)
    for index, action in enumerate(actions):
        problem = check.action(action, actions[:index])
        if problem:
            return Evidence(False, f"{action.kind} at {(action.t - origin) / 1000:.1f} s: {problem}"[:200])
    return Evidence(True)


def _moved_before(raw: _Raw, t: float) -> bool:
    def counts(e: LoggedEvent) -> bool:
        return e.kind in ("pointermove", "keydown") or e.data.get("pointer") in NO_HOVER

    return any(counts(e) for e in raw.within(-math.inf, t + TIME_MS, MOVES))


def _inside(rect: Rect, x: float, y: float) -> bool:
    return rect.x - PLACE_PX <= x <= rect.x + rect.w + PLACE_PX and rect.y - PLACE_PX <= y <= rect.y + rect.h + PLACE_PX


class _Checks:
    """One check per kind of semantic action: "" when input backs it, else what is missing."""

    def __init__(self, raw: _Raw, layout: Layout) -> None:
        self.raw, self.layout = raw, layout
        self.by_kind: dict[str, Callable[[LoggedEvent, list[LoggedEvent]], str]] = {
            "act.click": self.click,
            "act.toggle": self.toggle,
            "act.swap": self.swap,
            "act.cycle": self.cycle,
            "act.reset": self.reset,
            "act.submit": self.submit,
            "act.type": self.typed,
            "act.drag_start": self.drag_start,
            "act.drag_end": self.drag_end,
            "act.hold_start": self.hold_start,
            "act.hold_end": self.hold_end,
        }

    def action(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        check = self.by_kind.get(action.kind)
        return check(action, earlier) if check else "an action of no known kind"

    # --- presses at a place ---------------------------------------------------------------
    def _pressed(self, t: float, rects: list[Rect], *, keys: bool) -> bool:
        presses = self.raw.near(t, PRESSES)
        if any(_inside(r, e.data["x"], e.data["y"]) for e in presses for r in rects):
            return True
        return keys and bool(self.raw.near(t, KEYS))

    def _point(self, x: float, y: float) -> Rect:
        sx, sy = self.layout.main.to_stage(x, y)
        return Rect(sx, sy, 0, 0)

    def click(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        place = self._point(action.data["x"], action.data["y"])
        return "" if self._pressed(action.t, [place], keys=True) else "no pointer press at its place and time"

    def toggle(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        cell = self.layout.cell(action.data["cell"])
        return "" if self._pressed(action.t, [cell], keys=True) else "no pointer press on its cell"

    def swap(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        first, second = self.layout.cell(action.data["a"]), self.layout.cell(action.data["b"])
        if not self._pressed(action.t, [second], keys=False):
            return "no pointer press on its second cell"
        picked = self.raw.within(-math.inf, action.t, PRESSES)
        return (
            "" if any(_inside(first, e.data["x"], e.data["y"]) for e in picked) else "its first cell was never pressed"
        )

    def cycle(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        button = self.layout.controls.get(CYCLE_BUTTONS[action.data["delta"]])
        pressed = button is not None and self._pressed(action.t, [button], keys=True)
        return "" if pressed else "no press on its arrow button"

    def reset(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        button = self.layout.controls.get("reset")
        pressed = button is not None and self._pressed(action.t, [button], keys=True)
        return "" if pressed else "no press on the reset button"

    def submit(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        button = self.layout.controls.get("submit")
        if button is not None:
            return "" if self._pressed(action.t, [button], keys=True) else "no press on the submit button"
        # Submitted by the page with the action that made it (a click, a hold's release).
        if earlier and abs(earlier[-1].t - action.t) <= TIME_MS:
            return ""
        return "" if self.raw.near(action.t, PRESSES | RELEASES | KEYS) else "no input at its time"

    def typed(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        typed = self.raw.near(action.t, frozenset({"keydown", "input"}))
        return "" if typed else "no keystroke or input event at its time"

    # --- drags and holds ------------------------------------------------------------------
    def drag_start(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        slider = self.layout.slider
        if slider is None:
            return "a drag on a page without a slider"
        handle = slider.handle_at(action.data["x"])
        downs = self.raw.near(action.t, frozenset({"pointerdown"}))
        if any(_inside(handle, e.data["x"], e.data["y"]) for e in downs) or self.raw.near(action.t, KEY_DOWN):
            return ""
        return "no pointer press on the handle"

    def drag_end(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        start = next((e for e in reversed(earlier) if e.kind in ("act.drag_start", "act.drag_end")), None)
        if start is None or start.kind != "act.drag_start":
            return "a drop without a drag"
        if self.raw.near(start.t, KEY_DOWN):  # slid with the arrow keys
            return "" if self.raw.near(action.t, frozenset({"keyup"})) else "no key let go at the drop"
        if len(self.raw.within(start.t, action.t, frozenset({"pointermove"}))) < PATH_SAMPLES:
            return "no pointer path from the drag's start"
        return "" if self.raw.near(action.t, RELEASES) else "no pointer release at the drop"

    def hold_start(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        return "" if self._hold_press(action) else "no press on the hold button"

    def hold_end(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        start = next((e for e in reversed(earlier) if e.kind in ("act.hold_start", "act.hold_end")), None)
        if start is None or start.kind != "act.hold_start":
            return "a release without a hold"
        press = self._hold_press(start)
        if press is None:
            return ""  # reported at its start
        release = self.raw.first_after(press.t, _release_of(press))
        if release is not None and release.t < action.t - TIME_MS:
            return f"the press was released {(action.t - release.t) / 1000:.2f} s before the hold ended"
        return ""

    def _hold_press(self, start: LoggedEvent) -> LoggedEvent | None:
        button = self.layout.controls.get("hold")
        downs = self.raw.near(start.t, frozenset({"pointerdown"}))
        down = next((e for e in downs if button is None or _inside(button, e.data["x"], e.data["y"])), None)
        keys = self.raw.near(start.t, KEY_DOWN)  # the key that started it has its stamp: the nearest
        return down or min(keys, key=lambda e: abs(e.t - start.t), default=None)


def _release_of(press: LoggedEvent) -> Callable[[LoggedEvent], bool]:
    """What ends a press: a pointer's release, or the key's own keyup."""
    if press.kind == "keydown":
        return lambda e: e.kind == "keyup" and e.data.get("code") == press.data.get("code")
    return lambda e: e.kind in RELEASES
