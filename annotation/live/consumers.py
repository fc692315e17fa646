"""The WebSocket end of the live page: thin, every batch goes through intake.batch_receive."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from annotation.live.attempts import attempt_for
from annotation.live.intake import batch_receive
from annotation.live.scoring import hold_progress

logger = logging.getLogger(__name__)
HOLD_TICK_S = 0.1
DRAIN_S = 5.0
MAX_INBOX = 200  # batches waiting for their write; a page sends about ten a second
# Writes run in a thread pool, not the single shared thread: sockets must not queue behind
# each other's database round trips. One writer per socket keeps each attempt's batches in order.
_receive_batch = database_sync_to_async(batch_receive, thread_sensitive=False)


class AttemptConsumer(AsyncWebsocketConsumer):
    # No channel layer: events go point to point with acknowledgements, never through groups
    # (which drop silently when full), so a socket need not hold a channel open in Redis.
    channel_layer_alias = None

    async def connect(self):
        await self.accept()
        uid = self.scope["url_route"]["kwargs"]["uid"]
        self.attempt = await database_sync_to_async(attempt_for)(uid=uid, user=self.scope["user"])
        self.hold_task: asyncio.Task | None = None
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.writer = asyncio.create_task(self._write_all())
        if self.attempt is None:
            await self._send(
                {
                    "type": "error",
                    "code": "not_allowed",
                    "message": "no such attempt of yours; sign in as its participant",
                }
            )
            await self.close(code=4403)
        elif self.attempt.is_closed:
            await self._send({"type": "error", "code": "closed", "message": "this attempt is closed"})
            await self.close(code=4409)
            self.attempt = None

    async def disconnect(self, code):
        self._stop_hold()
        with contextlib.suppress(TimeoutError):  # what was received is stored, even if the page is gone before its ack
            await asyncio.wait_for(self.inbox.join(), DRAIN_S)
        self.writer.cancel()

    async def receive(self, text_data=None, bytes_data=None):
        if self.attempt is None:
            return
        if self.inbox.qsize() >= MAX_INBOX:  # a page that floods: it may resend once it reconnects
            await self.close(code=1013)
            return
        # Stamped on arrival, not when the write gets its turn: hold durations are checked against it.
        self.inbox.put_nowait((time.time() * 1000, text_data if text_data is not None else bytes_data))

    async def _write_all(self) -> None:
        while True:
            received_ms, raw = await self.inbox.get()
            try:
                replies, batch = await _receive_batch(attempt=self.attempt, raw=raw, received_ms=received_ms)
                for reply in replies:
                    await self._send(reply)
                if batch is not None:
                    self._follow_hold(batch.events, received_ms)
            except Exception:
                # Not acknowledged: closing makes the page reconnect and send it again.
                logger.exception("batch of attempt %s not stored", self.attempt.uid)
                await self.close(code=1011)
            finally:
                self.inbox.task_done()

    def _follow_hold(self, events: list[dict], received_ms: float) -> None:
        """Start or stop the hold widget's progress frames as holds begin and end."""
        for event in events:
            if event["k"] == "act.hold_start":
                self._stop_hold()
                self.hold_task = asyncio.create_task(self._hold_ticks(received_ms))
            elif event["k"] in ("act.hold_end", "act.submit"):
                self._stop_hold()

    async def _hold_ticks(self, started_ms: float) -> None:
        # Progress is the server's own measure from when it received the hold's start, so the
        # page never needs to know the hold time.
        while True:
            progress = hold_progress(puzzle=self.attempt.puzzle, held_ms=time.time() * 1000 - started_ms)
            if progress is None:
                return
            await self._send({"type": "hold", "progress": round(progress, 3)})
            if progress >= 1:
                return
            await asyncio.sleep(HOLD_TICK_S)

    def _stop_hold(self) -> None:
        if self.hold_task is not None:
            self.hold_task.cancel()
            self.hold_task = None

    async def _send(self, frame: dict) -> None:
        await self.send(text_data=json.dumps(frame))
