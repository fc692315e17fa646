"""The Jobs page's socket: the shown jobs' progress on connect, then again whenever it changes.
The page (static jobs/jobs.js) moves each bar in place, and reloads for what it cannot draw: a
new job, a job that ended, a new failure."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from arena_site.staff_sockets import StaffSocket
from puzzles.jobs.models import Job
from puzzles.jobs.views import SHOWN  # the jobs the page shows

PROGRESS_FIELDS = ("pk", "state", "done", "total", "failed", "cancel_requested", "error")


def jobs_progress() -> dict[str, Any]:
    """The "jobs" frame's fields: each shown job's progress."""
    rows = Job.objects.values_list(*PROGRESS_FIELDS)[:SHOWN]
    return {"jobs": [dict(zip(PROGRESS_FIELDS, row, strict=True)) for row in rows]}


_progress = database_sync_to_async(jobs_progress, thread_sensitive=False)


class JobsConsumer(StaffSocket):
    """Staff only. Sends {"type": "jobs", "jobs": [...]}: at once, then only when it changed."""

    frame_type = "jobs"
    frame_fields = frozenset({"jobs"})
    refusal = "the Jobs page is for staff"

    async def state(self, *, first: bool) -> dict[str, Any]:
        return await _progress()
