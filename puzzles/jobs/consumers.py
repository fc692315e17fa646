"""The Jobs page's socket: the shown jobs' progress on connect, then again whenever it changes.
The page (static jobs/jobs.js) moves each bar in place, and reloads for what it cannot draw: a
new job, a job that ended, a new failure."""

from __future__ import annotations

import asyncio
import json
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from puzzles.jobs.models import Job
from puzzles.jobs.views import SHOWN  # the jobs the page shows

logger = logging.getLogger(__name__)
INTERVAL_S = 1.0


def jobs_progress() -> dict:
    fields = ("pk", "state", "done", "total", "failed", "cancel_requested", "error")
    jobs = [dict(zip(fields, row, strict=True)) for row in Job.objects.values_list(*fields)[:SHOWN]]
    return {"type": "jobs", "jobs": jobs}


_progress = database_sync_to_async(jobs_progress, thread_sensitive=False)


class JobsConsumer(AsyncWebsocketConsumer):
    """Staff only. Sends {"type": "jobs", "jobs": [...]}: at once, then only when it changed."""

    channel_layer_alias = None  # it polls the database itself: no channel in Redis

    async def connect(self):
        self.pusher: asyncio.Task | None = None
        await self.accept()  # accepted first, so a refusal can say why before closing
        user = self.scope.get("user")
        if not (user and user.is_staff):
            await self.send(text_data=json.dumps({"type": "error", "code": "not_allowed"}))
            await self.close(code=4403)
            return
        self.pusher = asyncio.create_task(self._push_changes())

    async def disconnect(self, code):
        if self.pusher is not None:
            self.pusher.cancel()
            self.pusher = None

    async def receive(self, text_data=None, bytes_data=None):
        """The page only listens."""

    async def _push_changes(self) -> None:
        last = None
        while True:
            try:
                frame = await _progress()
            except Exception:  # a database hiccup: keep the page and try again next tick
                logger.exception("jobs progress failed")
            else:
                if frame != last:
                    await self.send(text_data=json.dumps(frame))
                    last = frame
            await asyncio.sleep(INTERVAL_S)
