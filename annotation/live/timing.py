"""Durations of an attempt, measured from its logged events and bounded by the server's clock.
Pure: no database.

The page's timestamps are precise but the page could lie; the server's receive times are honest
but coarse. The server knows when it served the puzzle (`opened_ms`, Attempt.served_at) and when
each batch arrived. A duration is taken from the page's clock only when the receive times allow
it: no event can have happened before the puzzle was served or after the server received it, the
first events must arrive soon after serving, and no duration is longer than the server saw pass
from serving to submit. Otherwise the attempt is timed by the server (`clock_ok` false).

Hidden time comes from the page's visibility events and, since a page can leave those out, from
gaps in arrival: a visible page beats every BEAT_MS (live/frames.py), so a longer silence means it
was hidden, throttled or not telling.

On screen (a study's time limit): the limit counts the time the puzzle was on screen, by the
server's clock alone: serving to the submit's arrival, less the spells the server saw it away.
A hidden spell runs from the arrival of the page's "hidden" to the arrival of its "visible",
started as far back as the arrival before it (the page flushes a second late at most while
hidden) and never longer than the page itself says it was hidden. A pause runs from the Pause
page's serving to the puzzle's next serving (Attempt.pauses), and counts only when the page
itself said it left: a hidden spell of its own that began at the pause's start or before it (or
within LEAVE_MS after it: the page leaves once the Pause page answers), and only while that
spell lasts. A pause the page never said it left for is no pause: a tab kept open offline while
another shows the Pause page says nothing, and the puzzle was on its screen. Either counts only
where the server heard nothing from the page (a pause: but for what the page sends in the
LEAVE_MS it takes to go): a tab that keeps the puzzle open and beating while another shows the
Pause page is on screen, and so is a page that flips hidden and visible between its beats (a
hidden spell is cut to the silences, so it never takes off more than the server heard nothing
for). Only a page built to lie (that says "hidden" and goes quiet while showing the puzzle) gains
time this way, and its hidden time shows in quality control.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

from annotation.live.frames import BEAT_MS
from puzzles.types.base import CLOCK_SLACK_MS

# The submit goes out at once, so it reaches the server soon after it happened; a page that
# claims much less time than the server saw pass before its submit squeezed its clock.
SUBMIT_DELAY_MS = 1000.0
# A page sends its first batch once its socket opens, or over HTTP after three failed tries: a
# first event that arrives later than this after serving means the puzzle was looked at before its
# events began (or the network hid it), and the page's clock cannot say how long.
FIRST_EVENT_MS = 10_000.0
# A silence in arrival this long counts as hidden, all but the one beat it should have taken.
ARRIVAL_GAP_MS = 3 * BEAT_MS
# The page says "hidden" (and sends its beacons) as it leaves for the Pause page, once that page's
# response has come: a little after the server served it and began the pause.
LEAVE_MS = 5000.0


class LoggedEvent(Protocol):
    kind: str
    t: float  # the page's timestamp, epoch ms
    received: float  # server receive time, epoch ms
    data: dict


@dataclass(frozen=True)
class Timing:
    wall_ms: float
    active_ms: float
    first_action_ms: float | None
    action_count: int
    clock_ok: bool
    server_ms: float  # serving to the submit's arrival, by the server's clock: the time limit's measure


def measure(events: Sequence[LoggedEvent], *, opened_ms: float) -> Timing:
    """Timing of events from the first one through submit (the last one); opened_ms is when the
    server served the puzzle."""
    start, end = events[0], events[-1]
    server = max(0.0, end.received - opened_ms)
    clock_ok = _clock_agrees(events, opened_ms)
    wall = min(max(0.0, end.t - start.t), server) if clock_ok else server
    hidden = max(_hidden_ms(events, end.t) if clock_ok else 0.0, silent_ms(events))
    actions = [e for e in events if e.kind.startswith("act.")]
    return Timing(
        wall_ms=wall,
        active_ms=wall - min(wall, hidden),
        first_action_ms=_first_action_ms(actions[0], start, opened_ms, clock_ok) if actions else None,
        action_count=sum(1 for e in actions if e.kind != "act.submit"),
        clock_ok=clock_ok,
        server_ms=server,
    )


def _clock_agrees(events: Sequence[LoggedEvent], opened_ms: float) -> bool:
    """The page's events began soon after serving, and its clock runs forward, claims no more
    time than the server could have seen pass, and no less than it saw pass before the submit."""
    start, end = events[0], events[-1]
    prompt = start.received - opened_ms <= FIRST_EVENT_MS
    forward = all(later.t >= earlier.t - CLOCK_SLACK_MS for earlier, later in pairwise(events))
    not_longer = all(e.t - start.t <= e.received - opened_ms + CLOCK_SLACK_MS for e in events)
    not_shorter = end.t - start.t >= end.received - start.received - SUBMIT_DELAY_MS
    return prompt and forward and not_longer and not_shorter


def _first_action_ms(action: LoggedEvent, start: LoggedEvent, opened_ms: float, clock_ok: bool) -> float:
    """Page shown to first action: by the page's clock when it agrees, never more than the server
    saw from serving to the action's arrival."""
    seen = max(0.0, action.received - opened_ms)
    return min(max(0.0, action.t - start.t), seen) if clock_ok else seen


def _hidden_ms(events: Sequence[LoggedEvent], end_t: float) -> float:
    """Time the page says it spent hidden (another tab, minimised): from the visibility state at
    load and every visibilitychange."""
    hidden, since = 0.0, None
    for event in events:
        state = event.data.get("state") if event.kind in ("load", "visibilitychange") else None
        if state == "hidden" and since is None:
            since = event.t
        elif state == "visible" and since is not None:
            hidden += max(0.0, event.t - since)
            since = None
    if since is not None:
        hidden += end_t - since
    return hidden


def silent_ms(events: Sequence[LoggedEvent]) -> float:
    """Time the server heard nothing from a page that beats while visible: every gap in arrival
    over ARRIVAL_GAP_MS, less the beat it should have taken. A hidden page is silent too, so this
    and the visibility events measure the same time twice over: the larger of the two counts, not
    their sum."""
    arrivals = sorted({e.received for e in events})
    return sum(later - earlier - BEAT_MS for earlier, later in pairwise(arrivals) if later - earlier > ARRIVAL_GAP_MS)


# The page events that say whether the puzzle is shown: the visibility at load and each change.
STATE_KINDS = ("load", "visibilitychange")
Spell = tuple[float, float]  # [start, end) epoch ms by the server's clock


def on_screen_ms(
    states: Sequence[LoggedEvent], arrivals: Sequence[float], *, opened_ms: float, until_ms: float, pauses: Sequence
) -> float:
    """Serving (opened_ms) to until_ms by the server's clock, less the spells it saw the puzzle off
    screen: the time limit's measure. `states`: the page's STATE_KINDS events in order; `arrivals`:
    every batch's receive time; `pauses`: Attempt.pauses."""
    hidden = _hidden_spells(states, arrivals)
    left = [*hidden, *_still_hidden(states, until_ms=until_ms)]
    silences = _silences(arrivals, until_ms=until_ms)
    paused = _paused(_pause_spells(pauses, until_ms=until_ms, left=left), arrivals, until_ms=until_ms)
    # Hidden time takes off no more than the server heard as silence: a page that flips hidden and
    # visible between its beats is heard all along, and stays on screen.
    away = [*paused, *_clipped(hidden, silences)]
    return max(0.0, until_ms - opened_ms - _covered_ms(away, start=opened_ms, end=until_ms))


def _silences(arrivals: Sequence[float], *, until_ms: float) -> list[Spell]:
    """Gaps in arrival longer than a beating page leaves, through until_ms (now, or the submit)."""
    times = sorted({*arrivals, until_ms})
    return [(earlier, later) for earlier, later in pairwise(times) if later - earlier > ARRIVAL_GAP_MS]


def _pause_spells(pauses: Sequence, *, until_ms: float, left: Sequence[Spell]) -> list[Spell]:
    """Closed pauses as far as the page said it was away for them: from the pause's start while
    one of its hidden spells (`left`) that began by then (LEAVE_MS late at most) lasts. A page
    that hid for a moment as the pause began and then showed the puzzle again (offline, so
    silent) gets that moment, not the pause. One still open when the page submits was never left
    (the submit came from a page that kept the puzzle)."""
    return [
        (start, min(end, b, until_ms))
        for start, end in pauses
        if end is not None
        for a, b in left
        if a <= start + LEAVE_MS and b > start
    ]


def _paused(pauses: Sequence[Spell], arrivals: Sequence[float], *, until_ms: float) -> list[Spell]:
    """The parts of pauses in which the server heard nothing from the page, but for its leaving:
    what it sends in the LEAVE_MS after a pause began (its "hidden", its beacons) is the page
    going, not the page shown."""
    parts: list[Spell] = []
    for start, end in pauses:
        heard = [t for t in arrivals if not start < t <= start + LEAVE_MS]
        parts += _clipped([(start, end)], _silences(heard, until_ms=until_ms))
    return parts


def _clipped(spells: Sequence[Spell], silences: Sequence[Spell]) -> list[Spell]:
    """The parts of spells that fall in silences; both sorted and each disjoint (one pass)."""
    parts, first = [], 0
    for start, end in sorted(spells):
        while first < len(silences) and silences[first][1] <= start:
            first += 1
        at = first
        while at < len(silences) and silences[at][0] < end:
            parts.append((max(start, silences[at][0]), min(end, silences[at][1])))
            at += 1
    return parts


def _hidden_spells(states: Sequence[LoggedEvent], arrivals: Sequence[float]) -> list[Spell]:
    """Each "hidden" to the next "visible", by the server's clock: the longest silence from the
    arrival before the hidden's to the visible's arrival, the hidden's own batch aside (the whole
    of it when the page said nothing meanwhile), no longer than the page says it was hidden."""
    times = sorted(set(arrivals))
    spells, hidden = [], None
    for event in states:
        state = event.data.get("state")
        if state == "hidden" and hidden is None:
            hidden = event
        elif state == "visible" and hidden is not None:
            left = bisect_left(times, hidden.received)
            before = times[left - 1] if left else hidden.received
            heard = times[bisect_right(times, hidden.received) : bisect_left(times, event.received)]
            start, end = max(pairwise([before, *heard, event.received]), key=lambda gap: gap[1] - gap[0])
            length = min(event.t - hidden.t, end - start)
            if length > 0:
                spells.append((end - length, end))
            hidden = None
    return spells


def _still_hidden(states: Sequence[LoggedEvent], *, until_ms: float) -> list[Spell]:
    """The page's last word, when it is "hidden": from its arrival to until_ms (the puzzle served
    again after a pause, before the new page's load arrived)."""
    last = None
    for event in states:
        state = event.data.get("state")
        if state == "hidden" and last is None:
            last = event
        elif state == "visible":
            last = None
    return [(last.received, until_ms)] if last is not None and last.received < until_ms else []


def _covered_ms(spells: Sequence[Spell], *, start: float, end: float) -> float:
    """How much of [start, end) the spells cover, overlaps counted once."""
    covered, reached = 0.0, start
    for a, b in sorted(spells):
        a, b = max(a, reached), min(b, end)
        if b > a:
            covered += b - a
            reached = b
    return covered
