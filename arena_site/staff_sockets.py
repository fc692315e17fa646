"""The staff pages' live sockets (the dashboard, the Jobs page): staff only, the page's state sent
at once and again whenever it changes, every interval; the page only listens.

Each socket declares the one frame it sends (`frame_type`, `frame_fields`); a refusal is the
declared error frame (`refused_frame`), as the live page's socket refuses (annotation/live/frames.py),
and so is the database gone (`unavailable_frame`: sent once when the state cannot be read for it,
then the state again as soon as it can). tests/test_staff_sockets.py holds what each socket sends
to its declaration."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar

from channels.generic.websocket import AsyncWebsocketConsumer

from arena_site.errors import DATABASE_UNAVAILABLE, UNAVAILABLE_CODE, database_unreachable

logger = logging.getLogger(__name__)

ERROR_FIELDS = frozenset({"code", "message"})
REFUSED_CODE = "not_allowed"  # the live page's code for the same refusal
ERROR_CODES = frozenset({REFUSED_CODE, UNAVAILABLE_CODE})
_NOTHING_SENT = object()
_UNAVAILABLE_SENT = object()


def refused_frame(message: str) -> dict[str, Any]:
    return {"type": "error", "code": REFUSED_CODE, "message": message}


def unavailable_frame() -> dict[str, Any]:
    return {"type": "error", "code": UNAVAILABLE_CODE, "message": DATABASE_UNAVAILABLE}


class StaffSocket(AsyncWebsocketConsumer):
    """A staff page's socket. A subclass names its frame and says how to read its state."""

    frame_type: ClassVar[str]
    frame_fields: ClassVar[frozenset[str]]
    refusal: ClassVar[str] = "this page is for staff"
    interval_s: ClassVar[float] = 1.0
    # Nothing is broadcast to it: it polls the database itself, so it needs no channel in Redis.
    channel_layer_alias = None

    async def state(self, *, first: bool) -> dict[str, Any]:
        """The page's state now, the frame's fields (first: the socket just opened)."""
        raise NotImplementedError

    def unchanged_key(self, state: dict[str, Any]) -> object:
        """What two states must share to count as the same (by default all of it)."""
        return state

    @classmethod
    def frame_problem(cls, frame: Any) -> str | None:
        """Why a frame this socket sends does not match its declaration, or None when it does."""
        declared = {cls.frame_type: cls.frame_fields, "error": ERROR_FIELDS}
        if not isinstance(frame, dict) or frame.get("type") not in declared:
            return f"undeclared frame {frame!r}"
        fields = set(frame) - {"type"}
        if fields != declared[frame["type"]]:
            return f"{frame['type']} frame with fields {sorted(fields)}, declared {sorted(declared[frame['type']])}"
        if frame["type"] == "error" and frame["code"] not in ERROR_CODES:
            return f"error code {frame['code']!r}"
        return None

    async def connect(self) -> None:
        self.pusher: asyncio.Task[None] | None = None
        await self.accept()  # accepted first, so a refusal can say why before closing
        user = self.scope.get("user")
        if not (user and user.is_staff):
            await self._send(refused_frame(self.refusal))
            await self.close(code=4403)
            return
        self.pusher = asyncio.create_task(self._push_changes())

    async def disconnect(self, code: int) -> None:
        if self.pusher is not None:
            self.pusher.cancel()
            self.pusher = None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """The page only listens; anything it sends is ignored."""

    async def _push_changes(self) -> None:
        last: object = _NOTHING_SENT
        first = True
        while True:
            try:
                state = await self.state(first=first)
            except Exception as error:  # keep the page and try again next tick
                if not database_unreachable(error):
                    logger.exception("%s: reading the state failed", type(self).__name__)
                elif last is not _UNAVAILABLE_SENT:  # said once; the state follows once it is back
                    logger.warning("%s: the database is unavailable (%s)", type(self).__name__, error)
                    await self._send(unavailable_frame())
                    last = _UNAVAILABLE_SENT
            else:
                first = False
                key = self.unchanged_key(state)
                if key != last:
                    await self._send({"type": self.frame_type, **state})
                    last = key
            await asyncio.sleep(self.interval_s)

    async def _send(self, frame: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(frame))
