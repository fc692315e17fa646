"""The live admin dashboard's socket: a summary on connect, then a new one whenever it changes."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import database_sync_to_async
from django.db import connection

from annotation.reporting.dashboard import DATABASE_WAIT_S, DashboardSummary, dashboard_summary, summary_key
from arena_site.postgresql.base import pool_wait
from arena_site.staff_sockets import StaffSocket

DASHBOARD_INTERVAL_S = 1.0


def _summary_on_a_checked_connection() -> DashboardSummary:
    """A summary, its connection given back to the pool after it (where the next one is checked
    before use). database_sync_to_async gives it back too, but not under channels' test
    communicator, and this thread outlives every socket: a connection it kept and the database
    then ended failed every later summary (tests/faults/test_socket_faults.py). With the database
    down it fails within DATABASE_WAIT_S, and the socket says the database is unavailable."""
    try:
        with pool_wait(DATABASE_WAIT_S):
            return dashboard_summary()
    finally:
        connection.close()


# A thread of its own, off both the single shared thread (sessions, attempt lookups) and the pool
# that stores annotators' batches: a summary neither holds up their writes nor queues behind them
# when the server is busy. One thread is enough: at most one summary runs at a time.
_summarise = database_sync_to_async(
    _summary_on_a_checked_connection,
    thread_sensitive=False,
    executor=ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard"),
)
# One summary serves every dashboard open in this process within half an interval, so five staff
# watching cost about what one does; and one failure, so during an outage they do not queue one
# wait for a connection each on the dashboard's one thread.
_shared: dict[str, Any] = {"at": float("-inf"), "summary": None, "error": None}


async def shared_summary(*, max_age_s: float) -> DashboardSummary:
    """A summary no older than max_age_s, computed afresh only when the last one is older (or the
    failure of that try, raised again)."""
    if time.monotonic() - _shared["at"] > max_age_s:
        try:
            _shared.update(summary=await _summarise(), error=None)
        except Exception as error:
            _shared.update(summary=None, error=error)
        _shared["at"] = time.monotonic()
    if _shared["error"] is not None:
        raise _shared["error"]
    return _shared["summary"]


class DashboardConsumer(StaffSocket):
    """Staff only. Sends {"type": "summary", ...}: once at once, then only when it changed."""

    frame_type = "summary"
    frame_fields = frozenset(DashboardSummary.__annotations__)
    refusal = "the dashboard is for staff"
    interval_s = DASHBOARD_INTERVAL_S

    async def state(self, *, first: bool) -> dict[str, Any]:
        # Fresh on connect, never a neighbour's older copy; after that, shared.
        summary = await (_summarise() if first else shared_summary(max_age_s=DASHBOARD_INTERVAL_S / 2))
        return dict(summary)

    def unchanged_key(self, state: dict[str, Any]) -> object:
        return summary_key(state)  # when it was made is no change
