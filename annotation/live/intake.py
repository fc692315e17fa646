"""One path for every batch a page sends, whether over the WebSocket or the HTTP fallback.

A batch is validated (live.frames), stored once under its number, acknowledged, and when the
acknowledged run of batches reaches a submit, the attempt is scored (live.scoring).

An attempt stores at most MAX_ATTEMPT_EVENTS events and MAX_ATTEMPT_BYTES bytes (live.frames).
Past either, a batch keeps only its semantic actions (ACTIONS_PAST_LIMIT more at most, then only a
submit) and the page gets a `limit` error frame beside the acknowledgement: acknowledgement never
stalls, and a person can always finish.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from annotation.live.attempts import attempt_limits
from annotation.live.frames import (
    ACTIONS_PAST_LIMIT,
    MAX_ATTEMPT_BYTES,
    MAX_ATTEMPT_EVENTS,
    Batch,
    FrameError,
    parse_frame,
)
from annotation.live.scoring import attempt_score
from annotation.models import Attempt, Event

# How long a submit stored beyond a gap waits for the missing batches (a page resends what was not
# acknowledged within seconds) before the attempt is scored on what arrived, marked incomplete.
GAP_WAIT_S = 10.0


class AttemptClosed(Exception):
    """The attempt is already submitted; it takes no more actions."""


class BatchConflict(Exception):
    """A batch number already stored with different events (two pages numbering alike)."""


@dataclass(frozen=True)
class Appended:
    acked: int
    submitted: bool  # the attempt is submitted (now or before)
    correct: bool | None = None
    dropped: int = 0  # events of the batch not stored: the attempt is past its limits


def batch_receive(
    *, attempt: Attempt, raw: str | bytes, received_ms: float
) -> tuple[list[dict[str, Any]], Batch | None]:
    """The frames to answer a raw batch with, and the batch if it was stored."""
    try:
        batch = parse_frame(raw, attempt_limits(puzzle=attempt.puzzle))
    except FrameError as error:
        if error.seq is None:
            return [error.as_frame()], None
        # The page drops a batch refused by number; its place is kept so later ones count.
        kept = batch_refuse(
            attempt_id=attempt.pk, seq=error.seq, code=error.code, message=error.message, received_ms=received_ms
        )
        return [error.as_frame(), *_acknowledged(kept, attempt)], None
    try:
        appended = events_append(attempt_id=attempt.pk, batch=batch, received_ms=received_ms)
    except AttemptClosed:
        return [FrameError("closed", "this attempt is already submitted", batch.seq).as_frame()], None
    except BatchConflict as conflict:
        return [FrameError("seq_conflict", str(conflict), batch.seq).as_frame()], None
    replies = _acknowledged(appended, attempt)
    if appended.dropped:
        replies.append(_limit_error(batch, appended.dropped).as_frame())
    return replies, batch


def _limit_error(batch: Batch, dropped: int) -> FrameError:
    message = (
        f"this attempt holds its limit of {MAX_ATTEMPT_EVENTS} events or {MAX_ATTEMPT_BYTES // 2**20} MB: "
        f"{dropped} of the {len(batch.events)} events of batch {batch.seq} were dropped (past it only semantic "
        f"actions are kept, {ACTIONS_PAST_LIMIT} at most, then only a submit)"
    )
    return FrameError("limit", message, batch.seq)


def _acknowledged(appended: Appended, attempt: Attempt) -> list[dict[str, Any]]:
    replies = [{"type": "ack", "seq": appended.acked}]
    if appended.submitted:
        replies.append(submitted_frame(correct=appended.correct, show=shows_verdict(attempt)))
    return replies


def shows_verdict(attempt: Attempt) -> bool:
    """Whether people see their verdict: always in practice (it is there to teach the rules), else
    the study's choice, else the site's."""
    if attempt.purpose == Attempt.Purpose.PRACTICE:
        return True
    return attempt.study.show_verdict if attempt.study else settings.ARENA_SHOW_VERDICT


def submitted_frame(*, correct: bool | None, show: bool) -> dict:
    # The verdict at most; the truth itself is never sent.
    return {"type": "submitted", "verdict": {"correct": bool(correct)} if show else None}


def _fields(event: dict) -> dict:
    return {k: v for k, v in event.items() if k not in ("k", "t")}


# The usual batch on PostgreSQL in one round trip: advance the acknowledgement and the attempt's
# counters and insert the events in a single statement (atomic by itself), only if this is the
# next batch of an open attempt with nothing stored beyond it and room for it. Five round trips
# and the ORM's overhead were most of the cost of a batch. The events go as one JSON parameter that
# PostgreSQL takes apart (kind, time, the other fields as the row's data): quoting four arrays
# value by value on the client (psycopg's client-side binding) was the next largest cost.
# The statement takes many sockets' usual batches at once (one batch per attempt): a busy web
# process stores them together, one round trip and one commit for all, instead of a thread, a
# connection check and a commit per batch (annotation/live/consumers.py); events_append gives it one.
_NEXT_BATCHES_SQL = """
WITH input AS (
    SELECT * FROM jsonb_to_recordset(%(batches)s::jsonb)
      AS b(attempt bigint, seq int, count int, bytes int, received float8, events jsonb)),
advanced AS (
    UPDATE annotation_attempt AS a SET acked_seq = b.seq, max_seq = b.seq,
      event_count = a.event_count + b.count, event_bytes = a.event_bytes + b.bytes
    FROM input AS b
    WHERE a.id = b.attempt AND a.acked_seq = b.seq - 1 AND a.max_seq < b.seq
      AND a.submitted_at IS NULL AND a.abandoned_at IS NULL
      AND a.event_count <= %(max_count)s - b.count AND a.event_bytes <= %(max_bytes)s - b.bytes
    RETURNING a.id, b.seq, b.received, b.events),
inserted AS (
    INSERT INTO annotation_event (attempt_id, seq, "index", kind, t, received, data)
    SELECT advanced.id, advanced.seq, e.i - 1, e.event ->> 'k', (e.event ->> 't')::float8, advanced.received,
      e.event - 'k' - 't'
    FROM advanced, jsonb_array_elements(advanced.events) WITH ORDINALITY AS e(event, i))
SELECT id, seq FROM advanced
"""


def _size(batch: Batch) -> int:
    """The bytes a batch counts for against MAX_ATTEMPT_BYTES."""
    return batch.size or len(json.dumps(batch.events))


def batches_append_next(batches: list[tuple[int, Batch, float]]) -> set[tuple[int, int]]:
    """Store each (attempt id, batch, received ms) that is the next batch of its open attempt, with
    room for it and no submit, all in one statement (PostgreSQL; at most one batch per attempt).
    Returns the (attempt id, seq) stored; every other one is left for events_append."""
    if not batches:
        return set()
    assert len({attempt_id for attempt_id, _, _ in batches}) == len(batches), "one batch per attempt"
    rows = [
        {
            "attempt": attempt_id,
            "seq": batch.seq,
            "count": len(batch.events),
            "bytes": _size(batch),
            "received": received_ms,
            "events": batch.events,
        }
        for attempt_id, batch, received_ms in batches
        if not batch.has_submit
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            _NEXT_BATCHES_SQL,
            {"batches": json.dumps(rows), "max_count": MAX_ATTEMPT_EVENTS, "max_bytes": MAX_ATTEMPT_BYTES},
        )
        return {(attempt_id, seq) for attempt_id, seq in cursor.fetchall()}


def events_append(*, attempt_id: int, batch: Batch, received_ms: float) -> Appended:
    """Store a batch (idempotent on its number), advance the acknowledgement, score on submit."""
    size = _size(batch)
    one_statement = connection.vendor == "postgresql" and not batch.has_submit
    if one_statement and batches_append_next([(attempt_id, batch, received_ms)]):
        return Appended(batch.seq, False)
    with transaction.atomic():
        # The usual case, in one statement that also locks the row: the next batch of an open
        # attempt with nothing stored beyond it, and room for it.
        advanced = Attempt.objects.filter(
            pk=attempt_id,
            acked_seq=batch.seq - 1,
            max_seq__lt=batch.seq,
            submitted_at__isnull=True,
            abandoned_at__isnull=True,
            event_count__lte=MAX_ATTEMPT_EVENTS - len(batch.events),
            event_bytes__lte=MAX_ATTEMPT_BYTES - size,
        ).update(
            acked_seq=batch.seq,
            max_seq=batch.seq,
            event_count=F("event_count") + len(batch.events),
            event_bytes=F("event_bytes") + size,
        )
        if advanced and not batch.has_submit:
            Event.objects.bulk_create(_rows(attempt_id, batch.seq, batch.events, received_ms))
            return Appended(batch.seq, False)
        return _append_slowly(attempt_id, batch, size, received_ms, advanced=bool(advanced))


def _rows(attempt_id: int, seq: int, events: list[dict[str, Any]], received_ms: float) -> list[Event]:
    return [
        Event(attempt_id=attempt_id, seq=seq, index=i, kind=e["k"], t=e["t"], received=received_ms, data=_fields(e))
        for i, e in enumerate(events)
    ]


def _append_slowly(attempt_id: int, batch: Batch, size: int, received_ms: float, *, advanced: bool) -> Appended:
    """Resends, gaps, submits, closed attempts and attempts past their limits: under the
    attempt's row lock."""
    # The attempt's row only: locking its puzzle too deadlocked with a truth correction, which
    # holds the puzzle and waits to score this attempt again.
    attempt = Attempt.objects.select_for_update(of=("self",)).select_related("puzzle").get(pk=attempt_id)
    if attempt.is_submitted:
        if batch.seq <= attempt.acked_seq:  # a resend of something already held
            return Appended(attempt.acked_seq, True, attempt.correct)
        raise AttemptClosed(f"attempt {attempt.uid} is already submitted")
    if attempt.abandoned_at:
        raise AttemptClosed(f"attempt {attempt.uid} expired; its puzzle went to someone else")
    kept = batch.events
    if not advanced:
        stored = list(attempt.events.filter(seq=batch.seq).order_by("index").values_list("kind", flat=True))
        if stored and stored not in _as_stored(batch.events):
            raise BatchConflict(
                f"batch {batch.seq} is already stored with other events; is this puzzle open in two tabs?"
            )
        # A resend of a batch already held (past the limits, maybe held without rows): nothing new.
        if stored or batch.seq <= attempt.acked_seq:
            return Appended(attempt.acked_seq, False)
        kept = _within_limits(attempt, batch.events, size)
    dropped = len(batch.events) - len(kept)
    if not kept:
        kept_place = _keep_place(attempt, batch.seq, "limit", "past the attempt's limits", received_ms, rowless=True)
        return replace(kept_place, dropped=dropped)
    Event.objects.bulk_create(_rows(attempt.pk, batch.seq, kept, received_ms))
    appended = _advance(attempt, before=batch.seq - 1 if advanced else attempt.acked_seq, seq=batch.seq)
    return replace(appended, dropped=dropped)


def _within_limits(attempt: Attempt, events: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """The events of a batch the attempt keeps, its counters moved on: all of them while within its
    limits; past them its semantic actions only (ACTIONS_PAST_LIMIT more at most), then its submit.
    Once past, event_count stays over MAX_ATTEMPT_EVENTS, which is how scoring knows raw input
    was dropped, and every later batch comes here."""
    if attempt.event_count + len(events) <= MAX_ATTEMPT_EVENTS and attempt.event_bytes + size <= MAX_ATTEMPT_BYTES:
        attempt.event_count += len(events)
        attempt.event_bytes += size
        return events
    count = max(attempt.event_count, MAX_ATTEMPT_EVENTS + 1)
    kept = [e for e in events if e["k"].startswith("act.")]
    if count + len(kept) > MAX_ATTEMPT_EVENTS + ACTIONS_PAST_LIMIT:
        kept = [e for e in kept if e["k"] == "act.submit"][:1]
    attempt.event_count = count + len(kept)
    attempt.event_bytes += len(json.dumps(kept)) if kept else 0
    return kept


def _as_stored(events: list[dict[str, Any]]) -> list[list[str]]:
    """The kinds a batch may be stored with: whole, or as kept past the attempt's limits (its
    actions, its submit, or a stand-in)."""
    kinds = [e["k"] for e in events]
    return [kinds, [k for k in kinds if k.startswith("act.")], ["act.submit"], [Event.REFUSED]]


def batch_refuse(*, attempt_id: int, seq: int, code: str, message: str, received_ms: float) -> Appended:
    """Keep a refused batch's place, with why it was refused, so acknowledgement can move past it
    (the page drops the batch; without this its number would stay a gap for good)."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update(of=("self",)).select_related("puzzle").get(pk=attempt_id)
        held = seq <= attempt.acked_seq or attempt.events.filter(seq=seq).exists()
        if attempt.is_submitted or seq > attempt.max_seq + 1 or held:
            return Appended(attempt.acked_seq, attempt.is_submitted, attempt.correct)
        past_limits = attempt.event_count > MAX_ATTEMPT_EVENTS
        return _keep_place(attempt, seq, code, message, received_ms, rowless=past_limits)


def _keep_place(attempt: Attempt, seq: int, code: str, message: str, received_ms: float, *, rowless: bool) -> Appended:
    """A batch the attempt keeps nothing of still takes its number: a stand-in event of kind
    `refused` holds why. Rowless (past the limits), the next batch in order is acknowledged
    without one, so a flood past the limits stores nothing more."""
    if rowless and seq == attempt.acked_seq + 1:
        return _advance(attempt, before=attempt.acked_seq, seq=seq, held=seq)
    Event.objects.create(
        attempt=attempt,
        seq=seq,
        index=0,
        kind=Event.REFUSED,
        t=received_ms,
        received=received_ms,
        data={"code": code, "message": message[:200]},
    )
    attempt.event_count += 1
    return _advance(attempt, before=attempt.acked_seq, seq=seq)


def _advance(attempt: Attempt, *, before: int, seq: int, held: int = 0) -> Appended:
    """After storing batch `seq` (or holding it without rows, `held`): move the acknowledgement
    on, and score a submit it reaches."""
    attempt.max_seq = max(attempt.max_seq, seq)
    attempt.acked_seq = _contiguous(attempt, max(before, held))
    if attempt.acked_seq > before and _submit_within(attempt, before):
        attempt_score(attempt=attempt)
    else:
        _score_after_a_reload(attempt)
    attempt.save()
    return Appended(attempt.acked_seq, attempt.is_submitted, attempt.correct)


def _waiting_submit(attempt: Attempt) -> Event | None:
    """The first submit stored beyond a gap, still waiting for the batches before it."""
    return attempt.events.filter(kind="act.submit", seq__gt=attempt.acked_seq).order_by("seq").first()


def _score_after_a_reload(attempt: Attempt) -> None:
    """A submit beyond a gap counts at once when every batch from its page's load on is here: the
    answer is what was entered since that load, and the missing batches belong to an earlier page."""
    if attempt.max_seq <= attempt.acked_seq:  # no gap, so no submit beyond one: no query
        return
    submit = _waiting_submit(attempt)
    if submit is None:
        return
    load = attempt.events.filter(kind="load", seq__lte=submit.seq).order_by("-seq").first()
    if load is None or load.seq <= attempt.acked_seq + 1:
        return  # no reload beyond the gap: the submit waits (attempt_resolve_gap)
    held = set(attempt.events.filter(seq__gte=load.seq, seq__lte=submit.seq).values_list("seq", flat=True))
    if held == set(range(load.seq, submit.seq + 1)):
        attempt_score(attempt=attempt, through=submit.seq)


def attempt_resolve_gap(*, attempt_id: int, now_ms: float) -> bool:
    """Score a submit that has waited GAP_WAIT_S behind batches that never came, on what did come;
    the attempt names the missing batches. Returns whether it was scored now."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update(of=("self",)).select_related("puzzle", "study").get(pk=attempt_id)
        submit = None if attempt.is_closed else _waiting_submit(attempt)
        if submit is None or now_ms - submit.received < GAP_WAIT_S * 1000:
            return False
        attempt_score(attempt=attempt, through=submit.seq)
        attempt.save()
        return True


def attempts_resolve_gaps(*, now_ms: float) -> int:
    """Every open attempt whose submit has waited long enough behind missing batches, scored (for
    submits whose socket is gone: the HTTP fallback, a server restart)."""
    waiting = Attempt.objects.filter(submitted_at__isnull=True, abandoned_at__isnull=True, max_seq__gt=F("acked_seq"))
    return sum(attempt_resolve_gap(attempt_id=pk, now_ms=now_ms) for pk in waiting.values_list("pk", flat=True))


def _contiguous(attempt: Attempt, acked: int) -> int:
    """The highest batch number n such that batches 1..n are all stored (1..acked are)."""
    later = attempt.events.filter(seq__gt=acked).values_list("seq", flat=True).distinct().order_by("seq")
    for seq in later:
        if seq != acked + 1:
            break
        acked = seq
    return acked


def _submit_within(attempt: Attempt, before: int) -> bool:
    return attempt.events.filter(kind="act.submit", seq__gt=before, seq__lte=attempt.acked_seq).exists()
