"""Writes of the annotation side: participants, attempts, events and verdicts."""
from __future__ import annotations

import json
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import connection, models, transaction
from django.utils import timezone

from annotation.frames import Batch, Limits
from annotation.models import Attempt, Event, Participant, Slot
from annotation.timing import measure
from puzzles.models import Puzzle
from puzzles.registry import get_type
from puzzles.types.base import Action, Unreadable, Verdict, malformed


REFUSED = "refused"  # the stored stand-in for a batch the server refused
TIME_LIMIT_GRACE_MS = 1000.0  # the page submits by itself at the limit; its last batch needs a moment


class AttemptClosed(Exception):
    """The attempt is already submitted; it takes no more actions."""


class BatchConflict(Exception):
    """A batch number already stored with different events (two pages numbering alike)."""


@dataclass(frozen=True)
class Appended:
    acked: int
    submitted: bool  # the attempt is submitted (now or before)
    correct: bool | None = None


def participant_for_user(*, user) -> Participant:
    participant, _ = Participant.objects.get_or_create(user=user, defaults={"kind": Participant.Kind.HUMAN})
    return participant


def system_participant(*, kind: str, label: str) -> Participant:
    """The participant (and its login-less user) that an agent or the replay acts as."""
    username = f"{kind}:{label}"[:150]
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    participant, _ = Participant.objects.get_or_create(user=user, defaults={"kind": kind, "label": label})
    participant.user = user  # loaded now: runners read it later from async code
    return participant


def attempt_start(*, participant: Participant, puzzle: Puzzle) -> Attempt:
    return Attempt.objects.create(participant=participant, puzzle=puzzle)


def attempt_limits(*, puzzle: Puzzle) -> Limits:
    """What the puzzle's semantic actions may refer to, for frame validation."""
    w, h = puzzle.public["image_size"]
    grid = puzzle.public.get("grid_size")
    return Limits(image_w=w, image_h=h, cells=grid[0] * grid[1] if grid else 0)


def _fields(event: dict) -> dict:
    return {k: v for k, v in event.items() if k not in ("k", "t")}


# The usual batch on PostgreSQL in one round trip: advance the acknowledgement and insert the
# events in a single statement (atomic by itself), only if this is the next batch of an open
# attempt with nothing stored beyond it. Five round trips and the ORM's overhead were most of
# the cost of a batch.
_NEXT_BATCH_SQL = """
WITH advanced AS (
    UPDATE annotation_attempt SET acked_seq = %(seq)s, max_seq = %(seq)s
    WHERE id = %(attempt)s AND acked_seq = %(seq)s - 1 AND max_seq < %(seq)s
      AND submitted_at IS NULL AND abandoned_at IS NULL
    RETURNING id)
INSERT INTO annotation_event (attempt_id, seq, "index", kind, t, received, data)
SELECT advanced.id, %(seq)s, e.i, e.kind, e.t, %(received)s, e.data::jsonb
FROM advanced, unnest(%(indexes)s::int[], %(kinds)s::text[], %(ts)s::float8[], %(data)s::text[]) AS e(i, kind, t, data)
"""


def _append_next_in_one_statement(attempt_id: int, batch: Batch, received_ms: float) -> bool:
    events = batch.events
    with connection.cursor() as cursor:
        cursor.execute(_NEXT_BATCH_SQL, {
            "seq": batch.seq, "attempt": attempt_id, "received": received_ms,
            "indexes": list(range(len(events))), "kinds": [e["k"] for e in events],
            "ts": [e["t"] for e in events], "data": [json.dumps(_fields(e)) for e in events]})
        return cursor.rowcount == len(events)


def events_append(*, attempt_id: int, batch: Batch, received_ms: float) -> Appended:
    """Store a batch (idempotent on its number), advance the acknowledgement, score on submit."""
    if connection.vendor == "postgresql" and not batch.has_submit:
        if _append_next_in_one_statement(attempt_id, batch, received_ms):
            return Appended(batch.seq, False)
    rows = [Event(attempt_id=attempt_id, seq=batch.seq, index=i, kind=e["k"], t=e["t"], received=received_ms,
                  data=_fields(e))
            for i, e in enumerate(batch.events)]
    with transaction.atomic():
        # The usual case, in one statement that also locks the row: the next batch of an open
        # attempt with nothing stored beyond it.
        advanced = Attempt.objects.filter(
            pk=attempt_id, acked_seq=batch.seq - 1, max_seq__lt=batch.seq, submitted_at__isnull=True,
            abandoned_at__isnull=True,
        ).update(acked_seq=batch.seq, max_seq=batch.seq)
        if advanced and not batch.has_submit:
            Event.objects.bulk_create(rows)
            return Appended(batch.seq, False)
        return _append_slowly(attempt_id, batch, rows, advanced=bool(advanced))


def _append_slowly(attempt_id: int, batch: Batch, rows: list[Event], *, advanced: bool) -> Appended:
    """Resends, gaps, submits and closed attempts: under the attempt's row lock."""
    attempt = Attempt.objects.select_for_update().select_related("puzzle").get(pk=attempt_id)
    if attempt.is_submitted:
        if batch.seq <= attempt.acked_seq:  # a resend of something already held
            return Appended(attempt.acked_seq, True, attempt.correct)
        raise AttemptClosed(f"attempt {attempt.uid} is already submitted")
    if attempt.abandoned_at:
        raise AttemptClosed(f"attempt {attempt.uid} expired; its puzzle went to someone else")
    if not advanced:
        stored = list(attempt.events.filter(seq=batch.seq).order_by("index").values_list("kind", flat=True))
        if stored and stored != [e["k"] for e in batch.events]:
            raise BatchConflict(f"batch {batch.seq} is already stored with other events; "
                                "is this puzzle open in two tabs?")
        if stored:  # a resend of a batch already held: nothing new
            return Appended(attempt.acked_seq, False)
    Event.objects.bulk_create(rows)
    return _advance(attempt, before=batch.seq - 1 if advanced else attempt.acked_seq, seq=batch.seq)


def batch_refuse(*, attempt_id: int, seq: int, code: str, message: str, received_ms: float) -> Appended:
    """Keep a refused batch's place, with why it was refused, so acknowledgement can move past it
    (the page drops the batch; without this its number would stay a gap for good)."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update().select_related("puzzle").get(pk=attempt_id)
        if attempt.is_submitted or seq > attempt.max_seq + 1 or attempt.events.filter(seq=seq).exists():
            return Appended(attempt.acked_seq, attempt.is_submitted, attempt.correct)
        Event.objects.create(attempt=attempt, seq=seq, index=0, kind=REFUSED, t=received_ms, received=received_ms,
                             data={"code": code, "message": message[:200]})
        return _advance(attempt, before=attempt.acked_seq, seq=seq)


def _advance(attempt: Attempt, *, before: int, seq: int) -> Appended:
    """After storing batch `seq`: move the acknowledgement on, and score a submit it reaches."""
    attempt.max_seq = max(attempt.max_seq, seq)
    attempt.acked_seq = _contiguous(attempt, before)
    if attempt.acked_seq > before and _submit_within(attempt, before):
        _score(attempt)
    attempt.save()
    return Appended(attempt.acked_seq, attempt.is_submitted, attempt.correct)


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


def _submitted_events(attempt: Attempt) -> tuple[list[Event], list[Action]]:
    """The events through the first submit, and the semantic actions that make the answer."""
    events = list(attempt.events.filter(seq__lte=attempt.acked_seq).order_by("seq", "index"))
    end = next(i for i, e in enumerate(events) if e.kind == "act.submit")
    events = [e for e in events[: end + 1] if e.kind != REFUSED]
    # A reload shows the puzzle afresh (no cells selected, the first option...), so the answer
    # is what was entered since the last page load; the time counts from the first.
    shown = max((i for i, e in enumerate(events) if e.kind == "load"), default=0)
    actions = [Action(e.kind[4:], e.t, e.received, e.data) for e in events[shown:] if e.kind.startswith("act.")]
    return events, actions


def attempt_rescore(*, attempt: Attempt) -> bool:
    """Score a submitted attempt again from its stored events (after a truth correction);
    returns whether its correctness changed. Times are not touched."""
    _, actions = _submitted_events(attempt)
    answer, verdict = score_actions(puzzle=attempt.puzzle, actions=actions)
    verdict = _within_time_limit(attempt, verdict, wall_ms=attempt.wall_ms or 0.0)
    changed = verdict.correct != attempt.correct
    attempt.answer, attempt.correct, attempt.reward, attempt.reason = (
        answer, verdict.correct, verdict.reward, verdict.reason[:300])
    attempt.save(update_fields=["answer", "correct", "reward", "reason"])
    return changed


def _score(attempt: Attempt) -> None:
    """Reduce the stored actions before the first submit to an answer, verify it, measure time."""
    events, actions = _submitted_events(attempt)
    # The truth as it is now, with its row locked: a truth correction running at the same moment
    # either sees this verdict and re-scores it, or finishes first and this uses the new truth.
    attempt.puzzle = Puzzle.objects.select_for_update().get(pk=attempt.puzzle_id)
    answer, verdict = score_actions(puzzle=attempt.puzzle, actions=actions)
    timing = measure(events, opened_ms=attempt.created_at.timestamp() * 1000)
    verdict = _within_time_limit(attempt, verdict, wall_ms=timing.wall_ms)
    attempt.submitted_at = timezone.now()
    attempt.answer = answer
    attempt.correct, attempt.reward, attempt.reason = verdict.correct, verdict.reward, verdict.reason[:300]
    attempt.wall_ms, attempt.active_ms = timing.wall_ms, timing.active_ms
    attempt.first_action_ms, attempt.action_count = timing.first_action_ms, timing.action_count
    attempt.clock_ok = timing.clock_ok
    if attempt.slot_id:
        _slot_after_submit(attempt)


def _within_time_limit(attempt: Attempt, verdict: Verdict, *, wall_ms: float) -> Verdict:
    """A study's time limit overrules the verifier: too late is wrong, however right."""
    limit_s = attempt.study.time_limit_s if attempt.study_id else None
    if limit_s and wall_ms > limit_s * 1000 + TIME_LIMIT_GRACE_MS:
        return Verdict(False, 0.0, f"submitted after {wall_ms / 1000:.1f} s; the limit is {limit_s} s")
    return verdict


def _slot_after_submit(attempt: Attempt) -> None:
    """A study place is done when solved, or when its k attempts are used up."""
    allowed = attempt.study.attempts_per_puzzle if attempt.study_id else 1
    used = Attempt.objects.filter(slot_id=attempt.slot_id, participant_id=attempt.participant_id,
                                  submitted_at__isnull=False).count() + 1
    if attempt.correct or used >= allowed:
        Slot.objects.filter(pk=attempt.slot_id).update(done=True)


def score_actions(*, puzzle: Puzzle, actions: list[Action]) -> tuple[object, Verdict]:
    """The answer the actions add up to, and its verdict by the type's own verifier."""
    puzzle_type = get_type(puzzle.type)
    try:
        answer = puzzle_type.reduce(actions, puzzle.public)
    except Unreadable as why:
        return None, malformed(str(why))
    return answer, puzzle_type.verify(puzzle.truth, answer, puzzle.load_masks())


def hold_progress(*, puzzle: Puzzle, held_ms: float) -> float | None:
    """The loading bar of a hold widget after held_ms, or None for types without one."""
    progress = getattr(get_type(puzzle.type), "hold_progress", None)
    return progress(puzzle.truth, held_ms) if progress else None


@dataclass(frozen=True)
class AgentImport:
    run_id: int
    matched: int
    unmatched: list[str]
    problems: list[tuple[str, str]]


def agent_run_import(*, path, name: str, dataset: str | None = None) -> AgentImport:
    """Import a published agent's output folder; puzzles are matched on the file stem (the
    puzzle's published id, or our uid). Unreadable files and unknown ids are reported, not fatal."""
    from annotation.models import AgentOutcome, AgentRun
    from annotation.stats import read_agent_outputs

    outputs = read_agent_outputs(path)
    ids = list(outputs.rollouts)
    candidates = Puzzle.objects.filter(models.Q(source_id__in=ids) | models.Q(uid__in=ids))
    if dataset:
        candidates = candidates.filter(dataset=dataset)
    by_id: dict[str, list[int]] = {}
    for pk, source_id, uid in candidates.values_list("pk", "source_id", "uid"):
        for key in {source_id, uid} & set(ids):
            by_id.setdefault(key, []).append(pk)
    problems = list(outputs.problems)
    problems += [(key, f"matches {len(pks)} puzzles; name the dataset") for key, pks in by_id.items() if len(pks) > 1]
    matched = {key: pks[0] for key, pks in by_id.items() if len(pks) == 1}
    with transaction.atomic():
        run, _ = AgentRun.objects.update_or_create(name=name, defaults={"model": outputs.model or "",
                                                                         "source_path": str(path)})
        run.outcomes.all().delete()
        AgentOutcome.objects.bulk_create(AgentOutcome(run=run, puzzle_id=pk, rollouts=outputs.rollouts[key])
                                         for key, pk in matched.items())
    return AgentImport(run.pk, len(matched), sorted(set(ids) - set(by_id)), problems)
