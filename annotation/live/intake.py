"""One path for every batch a page sends, whether over the WebSocket or the HTTP fallback.

One entry, batch_receive: a frame is parsed once (live.frames) and decided (a Decision: stored,
gap, resent, refused, closed, conflict); the socket and the views act on the decision. A batch is
stored once under its number, acknowledged, and when the acknowledged run of batches reaches a
submit, the attempt is scored (live.scoring) after the store, under the same row lock. The usual
next batch is taken by one acceptance predicate, _NEXT_BATCHES_SQL; every other batch goes under
the attempt's row lock. docs/intake.md draws each branch and the lock it takes.

An attempt stores at most MAX_ATTEMPT_EVENTS events and MAX_ATTEMPT_BYTES bytes (live.frames).
Past either, a batch keeps only its semantic actions (ACTIONS_PAST_LIMIT more at most, then only a
submit) and the page gets a `limit` error frame beside the acknowledgement: acknowledgement never
stalls, and a person can always finish.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef

from annotation.live.attempts import attempt_limits
from annotation.live.frames import (
    ACTIONS_PAST_LIMIT,
    MAX_ATTEMPT_BYTES,
    MAX_ATTEMPT_EVENTS,
    SEQ_BLOCK,
    Batch,
    FrameError,
    ack_frame,
    page_of,
    parse_frame,
    parse_frames,
    submitted_frame,
)
from annotation.live.frames import hold_frame as progress_frame
from annotation.live.scoring import attempt_score, attempt_score_unsubmitted, hold_progress
from annotation.models import Attempt, Event

logger = logging.getLogger(__name__)

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
    resent: bool = False  # the batch was already held: nothing was stored


class Decision(StrEnum):
    """What intake did with a frame; the socket and the HTTP views act on it, never on the frames."""

    STORED = "stored"  # stored and acknowledged (and a submit it reached scored)
    GAP = "gap"  # held, but its submit waits behind batches not yet here (resolve it later)
    RESENT = "resent"  # already held: acknowledged again, nothing stored
    REFUSED = "refused"  # not a valid batch; its place is kept when its number is known
    CLOSED = "closed"  # the attempt takes no more actions
    CONFLICT = "conflict"  # that number is held with other events (the puzzle open twice)


Parsed = Batch | FrameError


@dataclass(frozen=True)
class Receipt:
    """A frame's decision, the frames that answer it, and the hold it starts or stops."""

    decision: Decision
    replies: list[dict[str, Any]]
    batch: Batch | None = None  # the batch, when held (stored, gap, resent)
    hold: str | None = None  # "start" or "stop": what the batch does to the hold widget's progress

    @property
    def held(self) -> bool:
        return self.batch is not None


def frame_read(*, attempt: Attempt, raw: str | bytes) -> Parsed:
    """A raw frame parsed and validated once: the batch, or why it was refused."""
    try:
        return parse_frame(raw, attempt_limits(puzzle=attempt.puzzle))
    except FrameError as error:
        return error


def frames_read(*, attempt: Attempt, raw: str | bytes) -> list[Parsed]:
    """A JSON list of batch frames (the HTTP fallback sends several at once), each parsed and
    validated as a frame of its own; a body that is no such list is one refused frame."""
    try:
        frames = parse_frames(raw, attempt_limits(puzzle=attempt.puzzle))
    except FrameError as error:
        return [error]
    return frames


def batch_receive(
    *, attempt: Attempt, raw: str | bytes | Parsed, received_ms: float, next_tried: bool = False
) -> Receipt:
    """The one entry for a frame (the socket, the HTTP fallback, the beacon): parse it once, then
    refuse it, store it, or answer a resend; next_tried when the caller already tried it as the
    usual next batch (frames_store_next), so the predicate is not run twice."""
    sweep_if_due()
    parsed = raw if isinstance(raw, (Batch, FrameError)) else frame_read(attempt=attempt, raw=raw)
    if isinstance(parsed, FrameError):
        return _refused(attempt, parsed, received_ms)
    try:
        appended = events_append(attempt_id=attempt.pk, batch=parsed, received_ms=received_ms, next_tried=next_tried)
    except AttemptClosed:
        return Receipt(
            Decision.CLOSED, [FrameError("closed", "this attempt is already submitted", parsed.seq).as_frame()]
        )
    except BatchConflict as conflict:
        return Receipt(Decision.CONFLICT, [FrameError("seq_conflict", str(conflict), parsed.seq).as_frame()])
    return _held(attempt, parsed, appended)


def posted_receive(*, attempt: Attempt, raw: bytes, received_ms: float) -> tuple[list[dict[str, Any]], bool]:
    """An HTTP fallback request (live/views.py; a hosted page's, hosted/proxy.py): one batch frame
    (the beacon, an older page) or a JSON list of them, each through batch_receive in order. Returns
    the answers in one list, and whether any batch was held."""
    if not raw.lstrip().startswith(b"["):
        receipt = batch_receive(attempt=attempt, raw=raw, received_ms=received_ms)
        return receipt.replies, receipt.held
    receipts = [
        batch_receive(attempt=attempt, raw=frame, received_ms=received_ms)
        for frame in frames_read(attempt=attempt, raw=raw)
    ]
    return [reply for receipt in receipts for reply in receipt.replies], any(r.held for r in receipts)


def _refused(attempt: Attempt, error: FrameError, received_ms: float) -> Receipt:
    if error.seq is None:
        return Receipt(Decision.REFUSED, [error.as_frame()])
    # The page drops a batch refused by number; its place is kept so later ones count.
    kept = batch_refuse(
        attempt_id=attempt.pk, seq=error.seq, code=error.code, message=error.message, received_ms=received_ms
    )
    return Receipt(Decision.REFUSED, [error.as_frame(), *_acknowledged(kept, attempt)])


def _held(attempt: Attempt, batch: Batch, appended: Appended) -> Receipt:
    replies = _acknowledged(appended, attempt)
    if appended.dropped:
        replies.append(_limit_error(batch, appended.dropped).as_frame())
    if batch.has_submit and not appended.submitted:
        decision = Decision.GAP
    else:
        decision = Decision.RESENT if appended.resent else Decision.STORED
    return Receipt(decision, replies, batch, _hold_change(batch))


def _hold_change(batch: Batch) -> str | None:
    """The last word of a batch on a hold: its start begins progress, its end or a submit stops it."""
    for event in reversed(batch.events):
        if event["k"] == "act.hold_start":
            return "start"
        if event["k"] in ("act.hold_end", "act.submit"):
            return "stop"
    return None


def hold_frame(*, attempt: Attempt, held_ms: float) -> dict[str, Any] | None:
    """The progress frame of a hold held_ms after its start arrived, or None for types without one.
    Progress is the server's own measure, so the page never needs to know the hold time."""
    progress = hold_progress(puzzle=attempt.puzzle, held_ms=held_ms)
    return None if progress is None else progress_frame(progress)


def gap_resolve(*, attempt_id: int, now_ms: float, page: int | None = None) -> list[dict[str, Any]]:
    """A submit that waited behind a gap (of `page`, when given) scored now on what came: its
    submitted frame, or none."""
    if not attempt_resolve_gap(attempt_id=attempt_id, now_ms=now_ms, page=page):
        return []
    scored = Attempt.objects.select_related("study").get(pk=attempt_id)
    return [submitted_frame(correct=scored.correct, show=shows_verdict(scored))]


def _limit_error(batch: Batch, dropped: int) -> FrameError:
    message = (
        f"this attempt holds its limit of {MAX_ATTEMPT_EVENTS} events or {MAX_ATTEMPT_BYTES // 2**20} MB: "
        f"{dropped} of the {len(batch.events)} events of batch {batch.seq} were dropped (past it only semantic "
        f"actions are kept, {ACTIONS_PAST_LIMIT} at most, then only a submit)"
    )
    return FrameError("limit", message, batch.seq)


def _acknowledged(appended: Appended, attempt: Attempt) -> list[dict[str, Any]]:
    replies = [ack_frame(appended.acked)]
    if appended.submitted:
        replies.append(submitted_frame(correct=appended.correct, show=shows_verdict(attempt)))
    return replies


def shows_verdict(attempt: Attempt) -> bool:
    """Whether people see their verdict: always in practice (it is there to teach the rules), else
    the study's choice, else the site's."""
    if attempt.purpose == Attempt.Purpose.PRACTICE:
        return True
    return attempt.study.show_verdict if attempt.study else settings.ARENA_SHOW_VERDICT


def _fields(event: dict) -> dict:
    return {k: v for k, v in event.items() if k not in ("k", "t")}


# The acceptance predicate, the one place that decides a batch is the usual next one: the next
# batch of an open attempt with nothing stored beyond it, room for it, and no submit. Such a batch
# is stored in one round trip: advance the acknowledgement and the attempt's counters and insert
# the events in a single statement (atomic by itself). Every other batch goes under the attempt's
# row lock (events_append). Five round trips and the ORM's overhead were most of the cost of a
# batch. The events go as one JSON parameter that PostgreSQL takes apart (kind, time, the other
# fields as the row's data): quoting four arrays value by value on the client (psycopg's
# client-side binding) was the next largest cost. The statement takes many sockets' usual batches
# at once (one batch per attempt): a busy web process stores them together, one round trip and
# one commit for all (annotation/live/consumers.py); events_append gives it one. A batch whose frame
# PostgreSQL reads as validated (Batch.text, live/frames.py) goes as that text, taken apart there:
# encoding its events again, mostly their numbers, was the largest cost left in a web process's
# share of a store.
_NEXT_BATCHES_SQL = """
WITH input AS (
    SELECT attempt, seq, count, bytes, received, COALESCE(events, frame::jsonb -> 'events') AS events
    FROM jsonb_to_recordset(%(batches)s::jsonb)
      AS b(attempt bigint, seq int, count int, bytes int, received float8, events jsonb, frame text)),
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
    """Store each (attempt id, batch, received ms) that the acceptance predicate takes as the usual
    next batch, all in one statement (at most one batch per attempt). Returns the (attempt id, seq)
    stored; every other one is left for events_append. Without PostgreSQL, none is stored here."""
    assert len({attempt_id for attempt_id, _, _ in batches}) == len(batches), "one batch per attempt"
    rows = [
        {
            "attempt": attempt_id,
            "seq": batch.seq,
            "count": len(batch.events),
            "bytes": _size(batch),
            "received": received_ms,
            **({"frame": batch.text} if batch.text is not None else {"events": batch.events}),
        }
        for attempt_id, batch, received_ms in batches
        if not batch.has_submit
    ]
    if not rows or connection.vendor != "postgresql":
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            _NEXT_BATCHES_SQL,
            {"batches": json.dumps(rows), "max_count": MAX_ATTEMPT_EVENTS, "max_bytes": MAX_ATTEMPT_BYTES},
        )
        return {(attempt_id, seq) for attempt_id, seq in cursor.fetchall()}


def frames_store_next(items: list[tuple[Attempt, str | bytes, float]]) -> list[Receipt | Parsed]:
    """Many sockets' frames (attempt, raw, received ms), each parsed once and the usual next
    batches among them stored together in one statement; for each, its receipt when stored there,
    else what it parsed to, for batch_receive(next_tried=...) (a submit, a resend, a gap, a refused
    frame, the limits, a second frame of the same attempt)."""
    sweep_if_due()
    parsed = [frame_read(attempt=attempt, raw=raw) for attempt, raw, _ in items]
    candidates: dict[int, tuple[int, Batch, float]] = {}
    for (attempt, _, received_ms), frame in zip(items, parsed, strict=True):
        if isinstance(frame, Batch) and not frame.has_submit and attempt.pk not in candidates:
            candidates[attempt.pk] = (attempt.pk, frame, received_ms)
    stored = batches_append_next(list(candidates.values()))
    return [_stored_next(attempt, frame, stored) for (attempt, _, _), frame in zip(items, parsed, strict=True)]


def _stored_next(attempt: Attempt, frame: Parsed, stored: set[tuple[int, int]]) -> Receipt | Parsed:
    if not isinstance(frame, Batch) or (attempt.pk, frame.seq) not in stored:
        return frame
    return Receipt(Decision.STORED, [ack_frame(frame.seq)], frame, _hold_change(frame))


def events_append(*, attempt_id: int, batch: Batch, received_ms: float, next_tried: bool = False) -> Appended:
    """Store a batch (idempotent on its number), advance the acknowledgement, and then score a
    submit it reached: the usual next batch by the acceptance predicate (unless next_tried: the
    caller ran it already), every other one under the attempt's row lock."""
    if not next_tried and batches_append_next([(attempt_id, batch, received_ms)]):
        return Appended(batch.seq, False)
    try:
        with transaction.atomic():
            attempt = _locked(attempt_id, page=page_of(batch.seq))
            answered = _answered_unstored(attempt, batch)
            if answered is not None:
                return _resolved_on_a_resend(attempt, answered, now_ms=received_ms)
            before = attempt.acked_seq
            dropped = _store(attempt, batch, received_ms)
            # Scored here, after the store and still under the lock: a verdict and the batches it
            # stands on commit together, and two writers never both score.
            return replace(_scored(attempt, before=before, now_ms=received_ms), dropped=dropped)
    except (AttemptClosed, BatchConflict) as refusal:
        _note_unstored(attempt_id, batch, "closed" if isinstance(refusal, AttemptClosed) else "seq_conflict")
        raise


# How many unstored batches an attempt names (Attempt.unstored_batches); past it they are counted.
MAX_UNSTORED_NOTED = 100


def _note_unstored(attempt_id: int, batch: Batch, why: str) -> None:
    """A batch that reached the server and could not be stored (the attempt was closed, or its
    number held other events) is named on the attempt: the page drops it, so it is never lost
    without a trace. Its own transaction: the refusal rolled the store's back."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update(of=("self",)).only("unstored_batches").get(pk=attempt_id)
        noted = attempt.unstored_batches
        if any(entry["seq"] == batch.seq for entry in noted):
            return  # the same batch again (a resend before the page heard the answer)
        if len(noted) < MAX_UNSTORED_NOTED:
            noted.append({"seq": batch.seq, "events": len(batch.events), "why": why})
        else:  # the last entry counts every later one: bounded, and still nothing unsaid
            last = noted[-1]
            noted[-1] = {"seq": last["seq"], "events": last["events"] + len(batch.events), "why": "and later"}
        attempt.unstored_batches = noted
        attempt.save(update_fields=["unstored_batches"])


def _locked(attempt_id: int, *, page: int | None = None) -> Attempt:
    """The attempt under its row lock, its acknowledgement that of `page` when given (_on_page)."""
    # The attempt's row only: locking its puzzle too deadlocked with a truth correction, which
    # holds the puzzle and waits to score this attempt again.
    attempt = Attempt.objects.select_for_update(of=("self",)).select_related("puzzle").get(pk=attempt_id)
    if page is not None:
        _on_page(attempt, page)
    return attempt


def _on_page(attempt: Attempt, page: int) -> None:
    """Make acked_seq and max_seq those of `page` (frames.SEQ_BLOCK: each load of the page numbers
    its batches in a range of its own). The attempt keeps them for the page that stored last, so
    a page's usual next batch takes one statement (_NEXT_BATCHES_SQL); a batch of another page
    (a second browser, a reload resending what the last load left) comes here, and the page's
    own are read from its stored batches. Saved with the attempt, they follow the page that
    stored; a resend saves nothing and changes nothing."""
    if page == page_of(attempt.max_seq):
        return
    start = page * SEQ_BLOCK
    held = attempt.events.filter(seq__gt=start, seq__lt=start + SEQ_BLOCK).values_list("seq", flat=True)
    seqs = list(held.distinct().order_by("seq"))
    attempt.acked_seq = start
    for seq in seqs:
        if seq != attempt.acked_seq + 1:
            break
        attempt.acked_seq = seq
    attempt.max_seq = seqs[-1] if seqs else start


def _answered_unstored(attempt: Attempt, batch: Batch) -> Appended | None:
    """A batch the attempt holds already (a resend), or refuses (closed, a conflicting number):
    answered without storing. None when the batch is to be stored."""
    if attempt.is_submitted:
        if batch.seq <= attempt.acked_seq:  # a resend of something already held
            return Appended(attempt.acked_seq, True, attempt.correct, resent=True)
        raise AttemptClosed(f"attempt {attempt.uid} is already submitted")
    if attempt.abandoned_at:
        raise AttemptClosed(f"attempt {attempt.uid} expired; its puzzle went to someone else")
    stored = list(attempt.events.filter(seq=batch.seq).order_by("index").values_list("kind", flat=True))
    if stored and stored not in _as_stored(batch.events):
        raise BatchConflict(f"batch {batch.seq} is already stored with other events; is this puzzle open in two tabs?")
    # A resend of a batch already held (past the limits, maybe held without rows): nothing new.
    if stored or batch.seq <= attempt.acked_seq:
        return Appended(attempt.acked_seq, False, resent=True)
    return None


def _store(attempt: Attempt, batch: Batch, received_ms: float) -> int:
    """Store what the attempt keeps of a batch (all of it within its limits) and move the
    acknowledgement on; returns how many of its events were dropped."""
    kept = _within_limits(attempt, batch.events, _size(batch))
    if kept:
        Event.objects.bulk_create(_rows(attempt.pk, batch.seq, kept, received_ms))
        _advance(attempt, before=attempt.acked_seq, seq=batch.seq)
    else:
        _keep_place(attempt, batch.seq, "limit", "past the attempt's limits", received_ms, rowless=True)
    return len(batch.events) - len(kept)


def _rows(attempt_id: int, seq: int, events: list[dict[str, Any]], received_ms: float) -> list[Event]:
    return [
        Event(attempt_id=attempt_id, seq=seq, index=i, kind=e["k"], t=e["t"], received=received_ms, data=_fields(e))
        for i, e in enumerate(events)
    ]


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
        attempt = _locked(attempt_id, page=page_of(seq))
        held = seq <= attempt.acked_seq or attempt.events.filter(seq=seq).exists()
        if attempt.is_submitted or seq > attempt.max_seq + 1 or held:
            return Appended(attempt.acked_seq, attempt.is_submitted, attempt.correct)
        before = attempt.acked_seq
        past_limits = attempt.event_count > MAX_ATTEMPT_EVENTS
        _keep_place(attempt, seq, code, message, received_ms, rowless=past_limits)
        return _scored(attempt, before=before, now_ms=received_ms)


def _keep_place(attempt: Attempt, seq: int, code: str, message: str, received_ms: float, *, rowless: bool) -> None:
    """A batch the attempt keeps nothing of still takes its number: a stand-in event of kind
    `refused` holds why. Rowless (past the limits), the next batch in order is acknowledged
    without one, so a flood past the limits stores nothing more."""
    if rowless and seq == attempt.acked_seq + 1:
        _advance(attempt, before=attempt.acked_seq, seq=seq, held=seq)
        return
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
    _advance(attempt, before=attempt.acked_seq, seq=seq)


def _advance(attempt: Attempt, *, before: int, seq: int, held: int = 0) -> None:
    """After storing batch `seq` (or holding it without rows, `held`): move the acknowledgement on."""
    attempt.max_seq = max(attempt.max_seq, seq)
    attempt.acked_seq = _contiguous(attempt, max(before, held))


def _scored(attempt: Attempt, *, before: int, now_ms: float) -> Appended:
    """After a store that moved the acknowledgement from `before`: score a submit it reached (or
    one a reload made whole, or one that waited long enough behind a gap), and save the attempt."""
    if attempt.acked_seq > before and _submit_within(attempt, before):
        attempt_score(attempt=attempt)
    # The submits beyond a gap, looked up once for both (every batch stored during a gap pays it).
    elif (submits := _gapped_submits(attempt)) and not _score_after_a_reload(attempt, submits):
        _score_after_the_wait(attempt, now_ms=now_ms, submits=submits)
    attempt.save()
    return Appended(attempt.acked_seq, attempt.is_submitted, attempt.correct)


def _resolved_on_a_resend(attempt: Attempt, answered: Appended, *, now_ms: float) -> Appended:
    """A resend stores nothing, but any request for the attempt resolves a gap that waited long
    enough (the page on the HTTP fallback resends what is unacknowledged)."""
    if answered.submitted or not _score_after_the_wait(attempt, now_ms=now_ms):
        return answered
    attempt.save()
    return replace(answered, submitted=True, correct=attempt.correct)


def _gapped_submits(attempt: Attempt) -> list[tuple[int, float]]:
    """The submits stored beyond a gap, still waiting for the batches before them: (seq, received),
    the latest first. Without a gap there are none, and no query."""
    if attempt.max_seq <= attempt.acked_seq:
        return []
    beyond = attempt.events.filter(kind="act.submit", seq__gt=attempt.acked_seq, seq__lte=attempt.max_seq)
    return list(beyond.order_by("-seq").values_list("seq", "received"))


def _score_after_a_reload(attempt: Attempt, submits: list[tuple[int, float]]) -> bool:
    """After a gap the latest complete run wins: the latest submit beyond the gap whose page's
    load lies beyond it too, with every batch from that load through the submit here, is scored
    at once (the answer is what was entered since that load; the missing batches belong to an
    earlier page, whose own submit may be waiting behind them). `submits`: _gapped_submits.
    Returns whether it was scored."""
    beyond = attempt.events.filter(seq__gt=attempt.acked_seq, seq__lte=attempt.max_seq)
    loads = list(beyond.filter(kind="load").order_by("-seq").values_list("seq", flat=True))
    held = set(beyond.values_list("seq", flat=True))
    for submit, _ in submits:
        load = next((seq for seq in loads if seq <= submit), None)
        if load is None or load <= attempt.acked_seq + 1:
            continue  # no reload beyond the gap before this submit: it waits (_score_after_the_wait)
        if held >= set(range(load, submit + 1)):
            return attempt_score(attempt=attempt, through=submit)
    return False


def _score_after_the_wait(attempt: Attempt, *, now_ms: float, submits: list[tuple[int, float]] | None = None) -> bool:
    """Under the attempt's row lock: a submit that has waited GAP_WAIT_S behind batches that never
    came, scored on what did come (the attempt names the missing batches). `submits`:
    _gapped_submits, when the caller has them. The caller saves."""
    if attempt.is_closed:
        return False
    submits = _gapped_submits(attempt) if submits is None else submits
    if not submits:
        return False
    seq, received = submits[-1]  # the first: the one that waited longest
    if now_ms - received < GAP_WAIT_S * 1000:
        return False
    return attempt_score(attempt=attempt, through=seq)


def attempt_resolve_gap(*, attempt_id: int, now_ms: float, page: int | None = None) -> bool:
    """Score a submit that has waited GAP_WAIT_S behind batches that never came, on what did come.
    Idempotent: under the row lock, an attempt already scored is left alone. Returns whether it
    was scored now. Called by the socket that carried the submit, by a later socket of the
    attempt, and by the sweep (attempts_resolve_gaps)."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update(of=("self",)).select_related("puzzle", "study").get(pk=attempt_id)
        if page is not None:
            _on_page(attempt, page)
        if not _score_after_the_wait(attempt, now_ms=now_ms):
            return False
        attempt.save()
        return True


def attempts_waiting_out_a_gap(*, now_ms: float) -> list[int]:
    """Open attempts with a submit stored beyond a gap that has waited GAP_WAIT_S: the only ones
    the sweep has work on. An attempt with a gap and no submit (its page gone mid-puzzle) keeps
    max_seq above acked_seq for good; visiting each of those every sweep grew without end."""
    waited = Event.objects.filter(
        attempt=OuterRef("pk"),
        kind="act.submit",
        seq__gt=OuterRef("acked_seq"),
        seq__lte=OuterRef("max_seq"),  # the page that stored last (_on_page)
        received__lte=now_ms - GAP_WAIT_S * 1000,
    )
    gapped = Attempt.objects.filter(submitted_at__isnull=True, abandoned_at__isnull=True, max_seq__gt=F("acked_seq"))
    return list(gapped.filter(Exists(waited)).values_list("pk", flat=True))


def attempts_resolve_gaps(*, now_ms: float) -> int:
    """Every open attempt whose submit has waited long enough behind missing batches, scored (for
    submits whose socket is gone: the HTTP fallback, a server restart), and every hosted attempt
    whose check was answered that long ago with no submit from its page. The periodic sweep. One
    attempt whose scoring fails is logged and left for the next sweep; the others are scored."""
    scored = 0
    for pk in attempts_waiting_out_a_gap(now_ms=now_ms):
        try:
            scored += attempt_resolve_gap(attempt_id=pk, now_ms=now_ms)
        except Exception:
            logger.exception("the gapped submit of attempt %s was not scored", pk)
    for pk in hosted_checks_unsubmitted(now_ms=now_ms):
        try:
            scored += attempt_resolve_unsubmitted(attempt_id=pk)
        except Exception:
            logger.exception("the hosted attempt %s was not scored", pk)
    return scored


def attempt_check_answered(*, attempt: Attempt) -> bool:
    """A hosted attempt's check has its final reply (annotation/hosted/verdicts.py calls this under
    the attempt's row lock, the reply kept): scored now when its page's submit is already held,
    else when that submit is acknowledged (_scored), or by the sweep if it never comes. The caller
    holds the lock; this saves the attempt when it scores. Returns whether it scored."""
    if attempt.is_closed:
        return False
    if not attempt.events.filter(kind="act.submit", seq__lte=attempt.acked_seq).exists():
        return False
    if not attempt_score(attempt=attempt):
        return False
    attempt.save()
    return True


def hosted_checks_unsubmitted(*, now_ms: float) -> list[int]:
    """Open attempts whose hosted check was answered GAP_WAIT_S ago and more: their page's submit
    (the recorder's, sent once it hears the answer) should have come long before."""
    since = datetime.fromtimestamp((now_ms - GAP_WAIT_S * 1000) / 1000, tz=UTC)
    waiting = Attempt.objects.filter(
        submitted_at__isnull=True, abandoned_at__isnull=True, hosted_check__finished_at__lte=since
    )
    return list(waiting.values_list("pk", flat=True))


def attempt_resolve_unsubmitted(*, attempt_id: int) -> bool:
    """A hosted attempt whose check was answered and whose page never sent its submit, scored on
    the batches that came, under the attempt's row lock."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update(of=("self",)).select_related("puzzle", "study").get(pk=attempt_id)
        if not attempt_score_unsubmitted(attempt=attempt):
            return False
        attempt.save()
        return True


_sweep = {"due": 0.0}  # time.monotonic() when this process sweeps next (tasks run inline only)
_sweep_lock = threading.Lock()


def sweep_if_due() -> None:
    """With tasks run inline (the embedded default: no broker, so no beat) the web process sweeps
    itself: every settings.GAP_SWEEP_S at most, on the next frame any page sends; a failed sweep never fails
    that frame's store. With a broker, Celery beat's entry does it (settings.CELERY_BEAT_SCHEDULE) and this
    does nothing."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        return
    with _sweep_lock:
        if time.monotonic() < _sweep["due"]:
            return
        _sweep["due"] = time.monotonic() + settings.GAP_SWEEP_S
    try:
        attempts_resolve_gaps(now_ms=time.time() * 1000)
    except Exception:  # the frame that happened to sweep is stored all the same
        logger.exception("the gap sweep failed; the next one tries again")


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
