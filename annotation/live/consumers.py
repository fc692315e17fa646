"""The WebSocket end of the live page: thin, every frame goes through intake's one entry
(batch_receive; the usual batches of many sockets together through frames_store_next) and the
socket acts on the decision it returns: answer, follow a hold, resolve a gap later."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import InterfaceError, OperationalError, connection

from annotation.live.attempts import attempt_for, attempt_of_host
from annotation.live.frames import ack_frame, error_frame, frame_text, page_of
from annotation.live.intake import (
    GAP_WAIT_S,
    Decision,
    Parsed,
    Receipt,
    batch_receive,
    frames_store_next,
    gap_resolve,
    hold_frame,
)
from annotation.models import Attempt

logger = logging.getLogger(__name__)
HOLD_TICK_S = 0.1
DRAIN_S = 5.0
# Bytes of frames waiting for their write. A page keeps a window of 32 batches in flight (static/
# arena/events.js), at most 256 KiB each; an older page resends its whole backlog at once, and a
# minute of a moving pointer (600 batches of about 700 bytes) is under 1 MiB.
MAX_INBOX_BYTES = 8 * 2**20
# The number of a batch as the page writes it (JSON.stringify keeps this order): read without
# parsing, so a resend of what is already held is answered at once, never queued for a write.
_SEQ_AT_START = re.compile(rb'\{"type":\s*"batch",\s*"seq":\s*([1-9]\d{0,8})[,}]')
# A socket remembers a digest of each batch it stored, the newest this many, so a resend is
# answered from memory only when it is byte for byte what was stored.
REMEMBERED = 1024
# Close codes the WebSocket library accepts from an application (1000 or 3000-4999; 1011 and
# 1013 raise inside daphne and leave the socket open and silent). The page reconnects on both.
RETRY_LATER = 4011  # the server could not store a batch or look the attempt up: try again
TOO_FAST = 4013  # more batches waiting than the server keeps: reconnect and resend
POSTGRESQL = connection.vendor == "postgresql"
T = TypeVar("T")
Frame = dict[str, Any]


def on_a_live_connection(write: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """write(...), once more on a new connection if the database dropped the one this thread kept
    (a restart, a failover): the failed try stored nothing, and storing is idempotent (a read, as
    the handshake's lookups, is safe to repeat too)."""
    try:
        return write(*args, **kwargs)
    except (OperationalError, InterfaceError):
        logger.warning("the database connection was lost; reconnecting")
        connection.close()  # this thread's own; the next query opens a fresh one
        return write(*args, **kwargs)


def _receive_on_a_live_connection(**frame: Any) -> Receipt:
    return on_a_live_connection(batch_receive, **frame)


def _store_next_round(items: list[tuple[Attempt, str | bytes, float]]) -> list[Receipt | Parsed]:
    """A round of usual batches, its connection given back to the pool after it (as
    database_sync_to_async would), so an outage or a restart never leaves a dead one kept."""
    try:
        return on_a_live_connection(frames_store_next, items)
    finally:
        connection.close()


# The rounds of usual batches (_Coalesced) run one at a time per process, in a thread of their own,
# handed over by the event loop's executor call: asgiref's SyncToAsync, with channels' connection
# checks before and after, cost about 100 us of CPU a call against 40 (timed alone), and a round is
# one to three batches in a process with 50 sockets. CPU a batch at 50, 100 and 200 sockets went
# from 0.40, 0.33 and 0.31 ms to 0.28, 0.25 and 0.27 (bench/event_path.py, idle).
_ROUNDS_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batch-rounds")


async def _store_usual(items: list[tuple[Attempt, str | bytes, float]]) -> list[Receipt | Parsed]:
    return await asyncio.get_running_loop().run_in_executor(_ROUNDS_THREAD, _store_next_round, items)


# Other writes run in a thread pool, not the single shared thread: sockets must not queue behind
# each other's database round trips. One writer per socket keeps each attempt's batches in order.
_receive_batch = database_sync_to_async(_receive_on_a_live_connection, thread_sensitive=False)
_gap_resolve = database_sync_to_async(gap_resolve, thread_sensitive=False)
# The handshake's own lookup too: on the one shared thread it queued behind the session lookups
# of every other handshake (channels' AuthMiddleware runs those there), and daphne drops a
# handshake not accepted within 5 s.
# Like the writes, once more on a fresh connection if the database dropped the one this thread kept.
_attempt_for = database_sync_to_async(partial(on_a_live_connection, attempt_for), thread_sensitive=False)
_attempt_of_host = database_sync_to_async(partial(on_a_live_connection, attempt_of_host), thread_sensitive=False)


def _digest(raw: str | bytes) -> bytes:
    return hashlib.blake2b(raw.encode() if isinstance(raw, str) else raw, digest_size=16).digest()


class _Coalesced:
    """The usual batches of every socket of this process, stored together: while one write is in
    flight, the batches that arrive wait and go in the next, one statement for all of them. A busy
    process then pays for a thread, a connection and a commit per round instead of per batch (they
    were most of a batch's cost, with the threads fighting over the interpreter); an idle one writes
    each batch at once, as before. Each socket still writes its batches one at a time, in order, and
    acknowledges only what is committed."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Attempt, str | bytes, float, asyncio.Future[Receipt | Parsed]]] = []
        self.task: asyncio.Task[None] | None = None

    async def store(self, attempt: Attempt, raw: str | bytes, received_ms: float) -> Receipt | Parsed:
        future: asyncio.Future[Receipt | Parsed] = asyncio.get_running_loop().create_future()
        self.waiting.append((attempt, raw, received_ms, future))
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._write_rounds())
        return await future

    async def _write_rounds(self) -> None:
        while self.waiting:
            taken, self.waiting = self.waiting, []
            try:
                outcomes = await _store_usual([(a, raw, r) for a, raw, r, _ in taken])
            except Exception as error:  # every socket of the round closes and resends
                for *_, future in taken:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (*_, future), outcome in zip(taken, outcomes):
                if not future.done():
                    future.set_result(outcome)


_rounds: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Coalesced] = (
    weakref.WeakKeyDictionary()
)  # one per event loop


def _coalesced() -> _Coalesced:
    loop = asyncio.get_running_loop()
    if loop not in _rounds:
        _rounds[loop] = _Coalesced()
    return _rounds[loop]


class AttemptConsumer(AsyncWebsocketConsumer):
    # No channel layer: events go point to point with acknowledgements, never through groups
    # (which drop silently when full), so a socket need not hold a channel open in Redis.
    channel_layer_alias = None
    # On a hosted attempt's own host (docs/hosted.md, annotation/routing.py): the attempt is the one
    # its host names (scope["hosted_uid"], set by the proxy once the host's MAC checked out), no
    # session comes with the socket, and the recorder of the peer's page is what speaks.
    by_host = False

    def __init__(self, *args: Any, by_host: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # channels' as_asgi(**kwargs) passes them here, and it keeps none
        self.by_host = by_host

    @property
    def _open(self) -> Attempt:
        """The attempt this socket stores for: every use follows a receive, which an attempt not
        found open at the handshake never gets past."""
        if self.attempt is None:
            raise RuntimeError("no open attempt on this socket")
        return self.attempt

    async def connect(self) -> None:
        await self.accept()  # accepted first, so a refusal can say why before closing
        self.attempt: Attempt | None = None  # set once the handshake found it open
        self.hold_task: asyncio.Task[None] | None = None
        self.gap_task: asyncio.Task[None] | None = None  # kept referenced while it waits
        self.inbox: asyncio.Queue[tuple[float, str | bytes]] = asyncio.Queue()
        self.inbox_bytes = 0
        # Each page's acknowledged seq (a page's range, frames.SEQ_BLOCK), as this socket last heard
        # or said it: one socket carries its page's batches and those an earlier load left.
        self.acked: dict[int, int] = {}
        self.submitted: Frame | None = None  # the submitted frame, once this socket sent one
        self.stored: dict[int, bytes] = {}  # seq -> digest of the batch as this socket stored it
        self.writer = asyncio.create_task(self._write_all())
        uid = self.scope["url_route"]["kwargs"]["uid"]
        try:
            self.attempt = await self._find(uid)
        except Exception:  # the database blinked: the page's next try gets a fresh connection
            logger.exception("attempt %s not looked up", uid)
            await self.close(code=RETRY_LATER)
            return
        if self.attempt is None:
            await self._send(error_frame("not_allowed", "no such attempt of yours; sign in as its participant"))
            await self.close(code=4403)
        elif self.attempt.is_closed:
            await self._send(error_frame("closed", "this attempt is closed"))
            await self.close(code=4409)
            self.attempt = None
        else:
            self.acked[page_of(self.attempt.max_seq)] = self.attempt.acked_seq
            if self.attempt.max_seq > self.attempt.acked_seq:  # a submit may wait behind a gap: resolve it now
                try:
                    await self._resolve_gap()
                except Exception:  # the sweep or the next connection does it
                    logger.exception("gap of attempt %s not resolved on connect", uid)

    async def _find(self, uid: str) -> Attempt | None:
        """The attempt this socket may store for: the signed-in participant's own, or on a hosted
        attempt's host the one that host names (and no other uid in the path)."""
        if not self.by_host:
            return await _attempt_for(uid=uid, user=self.scope["user"])
        if uid != self.scope.get("hosted_uid"):
            return None
        return await _attempt_of_host(uid=uid)

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[..., Any]) -> None:
        """As channels' AsyncConsumer.__call__ for a consumer without a channel layer, without its
        per-message machinery (await_many_dispatch wraps every receive in a new task and an
        asyncio.wait, some five turns of the event loop per received batch where this takes one):
        each message is dispatched in turn, as there, until a handler raises StopConsumer."""
        self.scope = scope
        self.channel_layer = None
        self.base_send = send
        with contextlib.suppress(StopConsumer):
            while True:
                await self.dispatch(await receive())

    async def dispatch(self, message: dict[str, Any]) -> None:
        """As channels' own, without its hop to the shared sync thread before every message
        (sync_to_async(close_old_connections)): a thread switch per received batch, the largest cost
        of a busy socket after the write, and before the handshake's accept a place in the one queue
        every other handshake waits in (daphne drops a handshake not accepted within 5 s). This
        consumer never queries on that thread's connection; every database call runs in
        database_sync_to_async, which closes its own connection (returns it to the pool) before
        and after."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)

    async def disconnect(self, code: int) -> None:
        self._stop_hold()
        with contextlib.suppress(TimeoutError):  # what was received is stored, even if the page is gone before its ack
            await asyncio.wait_for(self.inbox.join(), DRAIN_S)
        self.writer.cancel()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        raw = text_data if text_data is not None else bytes_data
        if self.attempt is None or raw is None:
            return
        if await self._answered_from_memory(raw):
            return
        size = len(raw)
        if self.inbox_bytes + size > MAX_INBOX_BYTES:  # a flood: say what is held, then go
            for acked in self.acked.values():
                await self._send(ack_frame(acked))
            await self.close(code=TOO_FAST)
            return
        # Stamped on arrival, not when the write gets its turn: hold durations are checked against it.
        self.inbox_bytes += size
        self.inbox.put_nowait((time.time() * 1000, raw))

    async def _answered_from_memory(self, raw: str | bytes) -> bool:
        """A resend at or below the acknowledged seq of exactly a batch this socket stored (a page
        catching up resends what the server stored but could not acknowledge): answered with the
        current ack, and the verdict once sent, without a write or a place in the inbox. Anything
        else at that number (other events: two tabs; a batch another socket stored) takes the
        usual path, which compares it with what is stored and sees whether the attempt is open."""
        head = raw[:64].encode() if isinstance(raw, str) else raw  # a new batch is not encoded whole here
        found = _SEQ_AT_START.match(head, 0, 64)
        if found is None:
            return False
        seq = int(found[1])
        acked = self.acked.get(page_of(seq), 0)
        if seq > acked or self.stored.get(seq) != _digest(raw):
            return False
        await self._send(ack_frame(acked))
        if self.submitted is not None:
            await self._send(self.submitted)
        return True

    async def _write_all(self) -> None:
        while True:
            received_ms, raw = await self.inbox.get()
            try:
                await self._write(received_ms, raw)
            finally:
                self.inbox_bytes -= len(raw)
                self.inbox.task_done()

    async def _write(self, received_ms: float, raw: str | bytes) -> None:
        """Store one batch and answer it; on a failed write, close so the page resends it."""
        try:
            receipt = await self._receive(received_ms, raw)
        except Exception:
            logger.exception("batch of attempt %s not stored", self._open.uid)
            await self.close(code=RETRY_LATER)  # the page reconnects and sends it again
            return
        self._note(receipt.replies)
        if receipt.batch is not None and receipt.decision in (Decision.STORED, Decision.GAP):
            self._remember(receipt.batch.seq, raw)
        try:
            for reply in receipt.replies:
                await self._send(reply)
        except Exception:  # stored; the page learns it from the ack of its resend
            logger.warning("batch of attempt %s stored, its answer not sent", self._open.uid, exc_info=True)
            return
        self._follow_hold(receipt.hold, received_ms)
        if receipt.decision == Decision.GAP and receipt.batch is not None:
            self.gap_task = asyncio.create_task(self._resolve_gap_later(page_of(receipt.batch.seq)))

    def _remember(self, seq: int, raw: str | bytes) -> None:
        self.stored[seq] = _digest(raw)
        if len(self.stored) > REMEMBERED:
            del self.stored[next(iter(self.stored))]  # the oldest: a resend of it takes the usual path

    def _note(self, replies: list[Frame]) -> None:
        """What the socket knows from its answers: the acknowledged seq, and the verdict."""
        for reply in replies:
            if reply["type"] == "ack":
                page = page_of(reply["seq"])
                self.acked[page] = max(self.acked.get(page, 0), reply["seq"])
            elif reply["type"] == "submitted":
                self.submitted = reply

    async def _resolve_gap_later(self, page: int) -> None:
        """A submit waits behind batches of its page that have not arrived: give the page time to
        resend them, then score on what came (never an attempt left unscorable) and tell the page."""
        await asyncio.sleep(GAP_WAIT_S + 0.5)
        await self._resolve_gap(page)

    async def _resolve_gap(self, page: int | None = None) -> None:
        """Score a submit that has waited long enough behind a gap (idempotent, under the row lock):
        of `page`, or of the page that stored last."""
        frames = await _gap_resolve(attempt_id=self._open.pk, now_ms=time.time() * 1000, page=page)
        self._note(frames)
        for frame in frames:
            with contextlib.suppress(Exception):  # scored either way; the page may be gone
                await self._send(frame)

    async def _receive(self, received_ms: float, raw: str | bytes) -> Receipt:
        """The frame through intake's entry: with the other sockets' usual batches first, then, if
        not stored there, on its own, parsed once and the predicate not run again."""
        if not POSTGRESQL:
            return await _receive_batch(attempt=self._open, raw=raw, received_ms=received_ms)
        outcome = await _coalesced().store(self._open, raw, received_ms)
        if isinstance(outcome, Receipt):
            return outcome
        return await _receive_batch(attempt=self._open, raw=outcome, received_ms=received_ms, next_tried=True)

    def _follow_hold(self, change: str | None, received_ms: float) -> None:
        """Start or stop the hold widget's progress frames as holds begin and end."""
        if change is not None:
            self._stop_hold()
        if change == "start":
            self.hold_task = asyncio.create_task(self._hold_ticks(received_ms))

    async def _hold_ticks(self, started_ms: float) -> None:
        # Measured from when the server received the hold's start (intake.hold_frame).
        while True:
            frame = hold_frame(attempt=self._open, held_ms=time.time() * 1000 - started_ms)
            if frame is None:
                return
            await self._send(frame)
            if frame["progress"] >= 1:
                return
            await asyncio.sleep(HOLD_TICK_S)

    def _stop_hold(self) -> None:
        if self.hold_task is not None:
            self.hold_task.cancel()
            self.hold_task = None

    async def _send(self, frame: Frame) -> None:
        # Straight to the server (what AsyncWebsocketConsumer.send builds), once per frame sent.
        await self.base_send({"type": "websocket.send", "text": frame_text(frame)})
