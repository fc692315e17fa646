"""Durations of an attempt, measured from its logged events. Pure: no database.

The page's timestamps are precise but the page could lie; the server's receive times are honest
but coarse. A duration is taken from the page's clock only when the receive times allow it: no
event can have happened before the attempt was opened or after the server received it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

from puzzles.types.base import CLOCK_SLACK_MS

# The submit goes out at once, so it reaches the server soon after it happened; a page that
# claims much less time than the server saw pass before its submit squeezed its clock.
SUBMIT_DELAY_MS = 1000.0


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


def measure(events: Sequence[LoggedEvent], *, opened_ms: float) -> Timing:
    """Timing of events from the first one through submit (the last one)."""
    start, end = events[0], events[-1]
    clock_ok = _clock_agrees(events, opened_ms)
    wall = max(0.0, end.t - start.t if clock_ok else end.received - opened_ms)
    hidden = min(wall, _hidden_ms(events, end.t)) if clock_ok else 0.0
    actions = [e for e in events if e.kind.startswith("act.")]
    return Timing(
        wall_ms=wall,
        active_ms=wall - hidden,
        first_action_ms=max(0.0, actions[0].t - start.t) if actions and clock_ok else None,
        action_count=sum(1 for e in actions if e.kind != "act.submit"),
        clock_ok=clock_ok,
    )


def _clock_agrees(events: Sequence[LoggedEvent], opened_ms: float) -> bool:
    """The page's clock runs forward, claims no more time than the server could have seen pass,
    and no less than it saw pass before the submit."""
    start, end = events[0], events[-1]
    forward = all(later.t >= earlier.t - CLOCK_SLACK_MS for earlier, later in pairwise(events))
    not_longer = all(e.t - start.t <= e.received - opened_ms + CLOCK_SLACK_MS for e in events)
    not_shorter = end.t - start.t >= end.received - start.received - SUBMIT_DELAY_MS
    return forward and not_longer and not_shorter


def _hidden_ms(events: Sequence[LoggedEvent], end_t: float) -> float:
    """Time the page spent hidden (another tab, minimised): from the visibility state at load
    and every visibilitychange."""
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
