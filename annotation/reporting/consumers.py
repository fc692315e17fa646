"""The live admin dashboard's socket: a summary on connect, then a new one whenever it changes."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from annotation.reporting.dashboard import dashboard_summary, summary_key

logger = logging.getLogger(__name__)
DASHBOARD_INTERVAL_S = 1.0
# A thread of its own, off both the single shared thread (sessions, attempt lookups) and the pool
# that stores annotators' batches: a summary neither holds up their writes nor queues behind them
# when the server is busy. One thread is enough: at most one summary runs at a time.
_summarise = database_sync_to_async(
    dashboard_summary,
    thread_sensitive=False,
    executor=ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard"),
)
# One summary serves every dashboard open in this process within half an interval, so five staff
# watching cost about what one does.
_shared: dict[str, Any] = {"at": float("-inf"), "summary": None}


async def shared_summary(*, max_age_s: float) -> dict:
    """A summary no older than max_age_s, computed afresh only when the last one is older."""
    if time.monotonic() - _shared["at"] > max_age_s:
        summary = await _summarise()
        _shared.update(at=time.monotonic(), summary=summary)
    return _shared["summary"]


class DashboardConsumer(AsyncWebsocketConsumer):
    """Staff only. Sends {"type": "summary", ...}: once at once, then only when it changed."""

    # Nothing is broadcast to it: it polls the database itself, so it needs no channel in Redis.
    channel_layer_alias = None

    async def connect(self) -> None:
        self.pusher: asyncio.Task[None] | None = None
        await self.accept()  # accepted first, so a refusal can say why before closing
        user = self.scope.get("user")
        if not (user and user.is_staff):
            await self._send({"type": "error", "code": "not_allowed", "message": "the dashboard is for staff"})
            await self.close(code=4403)
            return
        summary = await _summarise()  # fresh on connect, never a neighbour's older copy
        await self._push(summary)
        self.pusher = asyncio.create_task(self._push_changes(summary_key(summary)))

    async def disconnect(self, code: int) -> None:
        if self.pusher is not None:
            self.pusher.cancel()
            self.pusher = None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """The page only listens; anything it sends is ignored."""

    async def _push_changes(self, last_key: str) -> None:
        """Every interval: recompute, and send only what differs from what the page has."""
        while True:
            await asyncio.sleep(DASHBOARD_INTERVAL_S)
            try:
                summary = await shared_summary(max_age_s=DASHBOARD_INTERVAL_S / 2)
            except Exception:  # a database hiccup: keep the page and try again next tick
                logger.exception("dashboard summary failed")
                continue
            key = summary_key(summary)
            if key != last_key:
                await self._push(summary)
                last_key = key

    async def _push(self, summary: dict) -> None:
        await self._send({"type": "summary", **summary})

    async def _send(self, frame: dict) -> None:
        await self.send(text_data=json.dumps(frame))
