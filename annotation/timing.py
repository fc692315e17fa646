"""Durations of an attempt, measured from its logged events. Pure: no database.

The page's timestamps are precise but the page could lie; the server's receive times are honest
but coarse. A duration is taken from the page's clock only when the receive times allow it: no
event can have happened before the attempt was opened or after the server received it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

CLOCK_SLACK_MS = 250.0  # clock granularity and network jitter between the page and the server


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
    clock_ok = all(e.t - start.t <= e.received - opened_ms + CLOCK_SLACK_MS for e in events)
    wall = end.t - start.t if clock_ok else end.received - opened_ms
    hidden = _hidden_ms(events, end.t) if clock_ok else 0.0
    actions = [e for e in events if e.kind.startswith("act.")]
    return Timing(
        wall_ms=max(0.0, wall),
        active_ms=max(0.0, wall - hidden),
        first_action_ms=(actions[0].t - start.t) if actions and clock_ok else None,
        action_count=sum(1 for e in actions if e.kind != "act.submit"),
        clock_ok=clock_ok,
    )


def _hidden_ms(events: Sequence[LoggedEvent], end_t: float) -> float:
    """Time the page spent hidden (another tab, minimised), from its visibilitychange events."""
    hidden, since = 0.0, None
    for event in events:
        if event.kind != "visibilitychange":
            continue
        if event.data.get("state") == "hidden" and since is None:
            since = event.t
        elif event.data.get("state") == "visible" and since is not None:
            hidden += event.t - since
            since = None
    if since is not None:
        hidden += end_t - since
    return hidden
