"""Evidence of a human hand: whether an attempt's semantic actions are backed by raw input. Pure:
no database.

The page logs the raw pointer, key and focus events that cause each semantic action
(docs/events.md), with the same timestamp, so a person's attempt shows for every action the press
that made it, at its place, by the page's own pointer or keyboard path. A client that sends only
semantic actions, or adds one key at each action's time, or times a hold by the server's own
progress frames, shows none. The rules, action by action:

- a pointer press is a pointerdown on the element the action names (its cell or button; the
  picture for a click) followed by a pointerup at the action's place and time; a touch or pen
  pointerdown may lie TOUCH_SLOP_CSS_PX (at the logged scale) off the element, as a finger
  slides before it lifts and the browser clicks where it lifts;
- a key press is the key the page's keyboard path uses, at the action's time, on the control the
  action names, which took the focus (a `focusin` naming it, the latest before the key): Enter or
  Space on a focused cell or button (a button clicks on Enter's keydown or Space's keyup);
- act.click: a pointer press, or Enter or Space on the focused picture with enough arrow keys
  (on the focused picture, since the page loaded) to have moved the keyboard crosshair from its
  start, the picture's centre, to the clicked point. Each arrow moves it at most
  CROSSHAIR_STEP_PX (Shift + arrow) and the keys do not say whether Shift was down, so this is
  the bound: ceil(distance / step) presses towards the point on each axis, never fewer;
- act.toggle, act.swap, act.cycle, act.reset: a press on its cell, arrow or "Reset Clicks"
  button; a swap also an earlier press on its first cell;
- act.submit: a press on the submit button, or Enter in the focused text box (the text types);
  a submit without a submit button (the types that submit by themselves) shares its time with
  the action that made it;
- act.type: an `input` event at its time in the focused text box, and for typed text
  (`insertText`) a keydown just before it; a paste or dictation needs no key;
- act.drag_start / act.drag_end: a pointerdown on the slider's handle (where the piece's place
  puts it), a pointer path (PATH_SAMPLES moves or more) between, a release at the drop; or an
  arrow key down on the focused handle at the start and an arrow let go at the drop;
- act.hold_start / act.hold_end: a pointerdown on the hold button, or Enter or Space on the
  focused hold button, at the start; not released before the end; and let go at the end as the
  page lets go: the key's own keyup; a pointerup or pointercancel, or the pointermove that
  left the button (the page ends a hold on pointerleave, which it does not log). Not a window
  blur, which one line of script sends: a person whose hold ends by the focus leaving (a Tab
  or a click elsewhere during a key hold, switching windows mid-hold) is marked;
- and some movement before the first action: a pointer move, a touch or pen pointerdown (no
  hover), or the focus reaching a control (`focusin`: a Tab, or the page focusing the text
  box). Keys alone never count.

Semantic coordinates are natural image pixels, raw pointer coordinates stage pixels: the puzzle
type's layout (puzzles/layout.py) maps one to the other, as the page does. What this catches: a
script that sends semantic actions without synthesizing the raw stream around them. What it
cannot catch: a client that synthesizes the whole raw stream (the focus events, the presses, the
paths), e.g. a real browser driven with CDP or OS input events; the report says so. Nor does
it take much: the control names are in events.js, so a bot that adds a focusin and an Enter at
each action passes. It stops scripts that send semantic actions without raw input, no more.

Marked though a person: assistive technology that activates a control with a bare `click` and
no key or pointer events (a screen reader in browse mode, Switch Access, voice control).

A hosted benchmark's page (docs/hosted.md) has no controls of ours to name: its one semantic
action is the recorder's act.submit, pushed once the proxy answered the page's final check_answer.
`page_input_evidence` asks of it what the page's own answer needs: a press on the page (a
pointerdown with its pointerup, or a key down) before the submit, and movement before the first
press, as above.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from annotation.live.timing import LoggedEvent
from puzzles.layout import Layout, Rect

# The page stamps an action with the DOM event that caused it and logs that event with the same
# stamp; a pointerup or a key comes a few milliseconds before the click it causes.
TIME_MS = 50.0
# Stage pixels between a pointer event and the place of its action: rounding, and the clamp that
# keeps a click on the image's last pixel inside it.
PLACE_PX = 6.0
# Chromium sends a tap's click where the finger lifts and lets it slide about 15 dp first: a
# touch or pen pointerdown may lie this far (CSS px, divided by the logged stage scale) off its
# element, so a tap that slides across a cell's edge stays a press on the cell it ends on.
TOUCH_SLOP_CSS_PX = 20.0
PATH_SAMPLES = 2  # pointer samples a drag's path needs between its start and its drop
CROSSHAIR_STEP_PX = 25.0  # the longest step of the page's keyboard crosshair (widgets.js, Shift)

RELEASES = frozenset({"pointerup", "pointercancel"})
KEYS = frozenset({"keydown", "keyup"})
KEY_DOWN = frozenset({"keydown"})
KEY_UP = frozenset({"keyup"})
PRESS_KEYS = frozenset({"Enter", " "})  # what presses a focused button or cell (widgets.js)
SLIDE_KEYS = frozenset({"ArrowLeft", "ArrowRight"})
ARROWS = ("ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown")
NO_HOVER = frozenset({"touch", "pen"})  # pointers that do not move before they press
MOVES = frozenset({"pointermove", "pointerdown", "focusin"})
SCALED = frozenset({"load", "resize"})  # the events that log the stage's scale
CYCLE_BUTTONS = {1: "next", -1: "prev"}
PICTURE = "image"  # the focus target of the keyboard crosshair (the picture's overlay)
TEXT = "text"


@dataclass(frozen=True)
class Evidence:
    ok: bool
    problem: str = ""  # the first thing found without input behind it, in a few words


class _Raw:
    """The raw (non-semantic) events by page time, for lookups around an action."""

    def __init__(self, events: Sequence[LoggedEvent]) -> None:
        self.events = sorted((e for e in events if not e.kind.startswith("act.")), key=lambda e: e.t)
        self.times = [e.t for e in self.events]
        focus = [e for e in self.events if e.kind == "focusin"]
        self.focus_times, self.focus_targets = [e.t for e in focus], [e.data.get("target") for e in focus]

    def within(self, start: float, end: float, kinds: frozenset[str]) -> list[LoggedEvent]:
        low, high = bisect.bisect_left(self.times, start), bisect.bisect_right(self.times, end)
        return [e for e in self.events[low:high] if e.kind in kinds]

    def near(self, t: float, kinds: frozenset[str]) -> list[LoggedEvent]:
        return self.within(t - TIME_MS, t + TIME_MS, kinds)

    def last_before(self, t: float, kinds: frozenset[str]) -> LoggedEvent | None:
        before = range(bisect.bisect_right(self.times, t) - 1, -1, -1)  # walked back, not copied
        return next((self.events[i] for i in before if self.events[i].kind in kinds), None)

    def first_after(self, t: float, test: Callable[[LoggedEvent], bool]) -> LoggedEvent | None:
        return next((e for e in self.events[bisect.bisect_right(self.times, t) :] if test(e)), None)

    def focused(self, t: float) -> str | None:
        """The control the latest focus event at or before t names (None: no focus event yet)."""
        index = bisect.bisect_right(self.focus_times, t) - 1
        return self.focus_targets[index] if index >= 0 else None


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
        return Evidence(False, "no pointer movement or focus before the first action")
    origin = events[0].t
    check = _Checks(raw, layout)
    for index, action in enumerate(actions):
        problem = check.action(action, actions[:index])
        if problem:
            return Evidence(False, f"{action.kind} at {(action.t - origin) / 1000:.1f} s: {problem}"[:200])
    return Evidence(True)


PAGE_PRESSES = frozenset({"pointerdown", "keydown"})


def page_input_evidence(events: Sequence[LoggedEvent], *, free_submit: bool = False) -> Evidence:
    """Whether a hosted page's submit has a hand behind it (module docstring, last paragraph)."""
    submits = [e for e in events if e.kind == "act.submit"]
    if free_submit or not submits:
        return Evidence(True) if free_submit else Evidence(False, "the page sent no submit")
    raw = _Raw(events)
    presses = raw.within(-math.inf, submits[-1].t, PAGE_PRESSES)
    if not presses:
        return Evidence(False, "no press or key on the page before its answer was sent")
    if not _moved_before(raw, presses[0].t):
        return Evidence(False, "no pointer movement or focus before the first press")
    if presses[-1].kind == "pointerdown" and not raw.within(presses[-1].t, math.inf, RELEASES):  # the same t counts
        return Evidence(False, "the last press on the page was never released")
    return Evidence(True)


def _moved_before(raw: _Raw, t: float) -> bool:
    """A pointer moved, a touch or pen pressed, or the focus reached a control: keys alone never count."""

    def counts(e: LoggedEvent) -> bool:
        return e.kind != "pointerdown" or e.data.get("pointer") in NO_HOVER

    return any(counts(e) for e in raw.within(-math.inf, t + TIME_MS, MOVES))


def _inside(rect: Rect, e: LoggedEvent, slack: float = PLACE_PX) -> bool:
    x, y = e.data["x"], e.data["y"]
    return rect.x - slack <= x <= rect.x + rect.w + slack and rect.y - slack <= y <= rect.y + rect.h + slack


def cell_target(index: int) -> str:
    """The focus target the page names a grid cell by (events.js)."""
    return f"cell:{index}"


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

    # --- presses: the pointer's or the keyboard's --------------------------------------------
    def _pointer_pressed(self, t: float, place: Rect, area: Rect) -> bool:
        """A pointerup at the place and time, after a pointerdown on the element (area); a touch
        or pen pointerdown may lie a finger's slop off it (TOUCH_SLOP_CSS_PX)."""
        for up in self.raw.near(t, frozenset({"pointerup"})):
            down = self.raw.last_before(up.t, frozenset({"pointerdown"}))
            if _inside(place, up) and down is not None and _inside(area, down, self._slop(down)):
                return True
        return False

    def _slop(self, down: LoggedEvent) -> float:
        """Stage px a pointerdown may lie off its element: a finger's slop in CSS px at the
        logged stage scale (a phone's stage is about 0.45 of its size), else PLACE_PX."""
        if down.data.get("pointer") not in NO_HOVER:
            return PLACE_PX
        fitted = self.raw.last_before(down.t, SCALED)
        scale = fitted.data.get("scale") if fitted is not None else None
        scale = scale if isinstance(scale, (int, float)) and scale > 0 else 1.0
        return max(PLACE_PX, TOUCH_SLOP_CSS_PX / scale)

    def _key_on(
        self, t: float, control: str, *, keys: frozenset[str], kinds: frozenset[str] = KEYS
    ) -> LoggedEvent | None:
        """A key among `keys` at t, pressed while `control` had the focus (its focusin first)."""
        found = (e for e in self.raw.near(t, kinds) if e.data.get("key") in keys and self.raw.focused(e.t) == control)
        return next(found, None)

    def _pressed(self, t: float, rect: Rect, control: str) -> bool:
        return self._pointer_pressed(t, rect, rect) or self._key_on(t, control, keys=PRESS_KEYS) is not None

    def _crosshair_reaches(self, t: float, point: tuple[float, float]) -> bool:
        """Enough arrow keys on the focused picture since the page loaded to move the crosshair
        from the picture's centre to the point (module docstring)."""
        load = self.raw.last_before(t, frozenset({"load"}))
        keys = self.raw.within(load.t if load else -math.inf, t, KEY_DOWN)
        count = dict.fromkeys(ARROWS, 0)
        for e in keys:
            if e.data.get("key") in count and self.raw.focused(e.t) == PICTURE:
                count[e.data["key"]] += 1
        reach = {key: n * CROSSHAIR_STEP_PX + PLACE_PX for key, n in count.items()}
        cx, cy = self.layout.main.rect.center()
        dx, dy = point[0] - cx, point[1] - cy
        return -reach["ArrowLeft"] <= dx <= reach["ArrowRight"] and -reach["ArrowUp"] <= dy <= reach["ArrowDown"]

    def click(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        image = self.layout.main
        sx, sy = image.to_stage(action.data["x"], action.data["y"])
        if self._pointer_pressed(action.t, Rect(sx, sy, 0, 0), image.rect):
            return ""
        if self._key_on(action.t, PICTURE, keys=PRESS_KEYS, kinds=KEY_DOWN) is None:
            return "no pointer press at its place and time"
        return "" if self._crosshair_reaches(action.t, (sx, sy)) else "the arrow keys never moved the crosshair there"

    def toggle(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        cell = action.data["cell"]
        return "" if self._pressed(action.t, self.layout.cell(cell), cell_target(cell)) else "no press on its cell"

    def swap(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        a, b = action.data["a"], action.data["b"]
        if not self._pressed(action.t, self.layout.cell(b), cell_target(b)):
            return "no press on its second cell"
        first, target = self.layout.cell(a), cell_target(a)
        ups = self.raw.within(-math.inf, action.t, frozenset({"pointerup"}))
        keys = self.raw.within(-math.inf, action.t, KEY_DOWN)
        by_key = any(e.data.get("key") in PRESS_KEYS and self.raw.focused(e.t) == target for e in keys)
        return "" if by_key or any(_inside(first, e) for e in ups) else "its first cell was never pressed"

    def _button(self, action: LoggedEvent, name: str, missing: str) -> str:
        button = self.layout.controls.get(name)
        return "" if button is not None and self._pressed(action.t, button, name) else missing

    def cycle(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        return self._button(action, CYCLE_BUTTONS[action.data["delta"]], "no press on its arrow button")

    def reset(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        return self._button(action, "reset", "no press on the reset button")

    def submit(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        if "submit" not in self.layout.controls:
            # Submitted by the page with the action that made it (a click, a hold's release).
            return "" if earlier and abs(earlier[-1].t - action.t) <= TIME_MS else "no action at its time"
        if TEXT in self.layout.controls and self._key_on(action.t, TEXT, keys=frozenset({"Enter"}), kinds=KEY_DOWN):
            return ""
        return self._button(action, "submit", "no press on the submit button")

    def typed(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        for e in self.raw.near(action.t, frozenset({"input"})):
            keyed = e.data.get("input_type") != "insertText" or self.raw.within(e.t - TIME_MS, e.t, KEY_DOWN)
            if self.raw.focused(e.t) == TEXT and keyed:
                return ""
        return "no keystroke or input event in the focused text box at its time"

    # --- drags and holds ------------------------------------------------------------------
    def drag_start(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        slider = self.layout.slider
        if slider is None:
            return "a drag on a page without a slider"
        handle = slider.handle_at(action.data["x"])
        downs = self.raw.near(action.t, frozenset({"pointerdown"}))
        if any(_inside(handle, e) for e in downs) or self._key_on(action.t, "slider", keys=SLIDE_KEYS, kinds=KEY_DOWN):
            return ""
        return "no pointer press on the handle"

    def drag_end(self, action: LoggedEvent, earlier: list[LoggedEvent]) -> str:
        start = next((e for e in reversed(earlier) if e.kind in ("act.drag_start", "act.drag_end")), None)
        if start is None or start.kind != "act.drag_start":
            return "a drop without a drag"
        if self._key_on(start.t, "slider", keys=SLIDE_KEYS, kinds=KEY_DOWN):  # slid with the arrow keys
            let_go = self._key_on(action.t, "slider", keys=SLIDE_KEYS, kinds=KEY_UP)
            return "" if let_go else "no key let go at the drop"
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
        return "" if self._let_go(press, action.t) else "the press was not let go when the hold ended"

    def _hold_press(self, start: LoggedEvent) -> LoggedEvent | None:
        button = self.layout.controls.get("hold")
        downs = self.raw.near(start.t, frozenset({"pointerdown"}))
        down = next((e for e in downs if button is None or _inside(button, e)), None)
        return down or self._key_on(start.t, "hold", keys=PRESS_KEYS, kinds=KEY_DOWN)

    def _let_go(self, press: LoggedEvent, t: float) -> bool:
        """The press ends at the hold's end as the page ends it (widgets.js, hold): the key's own
        keyup; a pointer's pointerup or pointercancel, or its leaving the button, which the page
        does not log but the pointermove that crossed the button's edge shows. A window blur
        does not count: one line of script sends it (the hold ended by the focus leaving is
        marked; docs/events.md)."""
        if press.kind == "keydown":
            return any(_release_of(press)(e) for e in self.raw.near(t, KEY_UP))
        return bool(self.raw.near(t, RELEASES)) or self._left_button(press, t)

    def _left_button(self, press: LoggedEvent, t: float) -> bool:
        """A pointermove at t off the hold button whose sample before it (since the press) was on it."""
        button = self.layout.controls.get("hold")
        if button is None:
            return False
        samples = self.raw.within(press.t, t + TIME_MS, frozenset({"pointermove", "pointerdown"}))
        for before, move in pairwise(samples):
            crossed = _inside(button, before, 0.0) and not _inside(button, move, 0.0)
            if move.kind == "pointermove" and abs(move.t - t) <= TIME_MS and crossed:
                return True
        return False


def _release_of(press: LoggedEvent) -> Callable[[LoggedEvent], bool]:
    """What ends a press: a pointer's release, or the key's own keyup."""
    if press.kind == "keydown":
        return lambda e: e.kind == "keyup" and e.data.get("code") == press.data.get("code")
    return lambda e: e.kind in RELEASES
