"""Where a submit is scored: the stored actions reduced to an answer, judged by the type's
verifier, timed from the logged events, held to the study's time limit, and checked for a hand
behind the actions.

Nothing here trusts the page: the answer comes from the semantic actions the server stored, the
verdict from the verifier, the times from the events bounded by the server's clock (the time limit
by the server's clock alone: the time the puzzle was on screen, live/timing.py), and whether raw input backs
the actions from the events too (live/evidence.py). The pointer's motion is measured from the same
events (live/motion.py) and kept on the attempt.

A hosted benchmark's attempt (docs/hosted.md) is judged by the peer: the verdict is the peer's reply
to the one check_answer the proxy forwarded (HostedCheck), never the browser's word; the times, the
time limit and the evidence of a hand come from our events as for our own page. It is scored when
both have come, whichever comes second, under the attempt's row lock: the recorder's act.submit
(pushed once the proxy answered the page's final check) acknowledged in order, and the check's
final reply (intake.attempt_check_answered, called by the proxy). Without a check it is scored only
when its submit came at the study's time limit (timed out: no answer reached the peer).
"""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from annotation.live.attempts import attempt_opened_ms, is_hosted
from annotation.live.evidence import Evidence, input_evidence, page_input_evidence
from annotation.live.frames import MAX_ATTEMPT_EVENTS
from annotation.live.motion import attempt_motion
from annotation.live.timing import STATE_KINDS, LoggedEvent, measure, on_screen_ms
from annotation.models import Attempt, Event, HostedCheck, Slot
from puzzles.hosted_names import split_hosted_type
from puzzles.models import Puzzle
from puzzles.registry import get_type
from puzzles.types.base import Action, Unreadable, Verdict, malformed

TIME_LIMIT_GRACE_MS = 1000.0  # the page submits by itself at the limit; its last batch needs a moment
# The page's own timer counts from its navigation start (or from asking for the next puzzle's
# data), a request's latency before the server served it, so its submit at the limit reaches the
# server a little early. A submit that close to the limit is taken for the page's own: it needs no
# input, and a wrong one timed out (reporting: "timed out"). The window is at most 5 s and never
# more than a quarter of the limit: a flat 5 s on a 5 s limit took every answer for a time-out.
TIME_UP_EARLY_MS = 5000.0
TIME_UP_EARLY_SHARE = 0.25
# The verdict's reason begins so for an answer the time limit ended: one outcome, stored once.
TIMED_OUT = "timed out"


def time_up_from_ms(limit_s: int) -> float:
    """Time on screen (Attempt.screen_ms) from which a submit counts as made at the time limit."""
    limit_ms = limit_s * 1000
    return limit_ms - min(TIME_UP_EARLY_MS, limit_ms * TIME_UP_EARLY_SHARE)


def attempt_score(*, attempt: Attempt, through: int | None = None) -> bool:
    """Reduce the stored actions before the first submit to an answer, verify it, measure time.
    Called under the attempt's row lock once its acknowledged batches reach a submit (or, through
    batch `through`, once a submit has waited long enough behind batches that never came: those
    are named in missing_batches); the caller saves the attempt. Returns whether it was scored: a
    hosted attempt waits for its check (module docstring)."""
    through = attempt.acked_seq if through is None else through
    if is_hosted(attempt.puzzle):
        return _hosted_score(attempt, through=through)
    events, actions = _submitted_events(attempt, through=through)
    attempt.missing_batches = _missing(attempt, through=through)
    attempt.scored_through = through  # a rescore reads the same batches (attempt_rescore)
    # The truth as it is now, with its row locked: a truth correction running at the same moment
    # either sees this verdict and re-scores it, or finishes first and this uses the new truth.
    attempt.puzzle = Puzzle.objects.select_for_update().get(pk=attempt.puzzle_id)
    answer, verdict = score_actions(puzzle=attempt.puzzle, actions=actions)
    attempt.screen_ms = _screen_ms(attempt, events)
    verdict = _within_time_limit(attempt, verdict, screen_ms=attempt.screen_ms)
    _submitted(attempt, answer, verdict, events)
    _note_input(attempt, events, screen_ms=attempt.screen_ms)
    if attempt.slot_id:
        _slot_after_submit(attempt, slot_id=attempt.slot_id)
    return True


def _submitted(attempt: Attempt, answer: object, verdict: Verdict, events: list[Event]) -> None:
    """The verdict and the times of a submitted attempt, on the attempt."""
    timing = measure(events, opened_ms=attempt_opened_ms(attempt=attempt))
    attempt.submitted_at = timezone.now()
    attempt.answer = answer
    attempt.correct, attempt.reward, attempt.reason = verdict.correct, verdict.reward, verdict.reason[:300]
    attempt.wall_ms, attempt.active_ms = timing.wall_ms, timing.active_ms
    attempt.first_action_ms, attempt.action_count = timing.first_action_ms, timing.action_count
    attempt.clock_ok = timing.clock_ok
    attempt.motion = attempt_motion(events)


# The verdict's reason when a hosted attempt ends with no answer sent to its benchmark.
NO_CHECK = "no answer reached the benchmark"


def _hosted_score(attempt: Attempt, *, through: int) -> bool:
    """A hosted attempt: the peer's verdict (HostedCheck), our events' times. Scored once the check
    has its final reply, or at the time limit without one; otherwise left open (False)."""
    check = HostedCheck.objects.filter(attempt_id=attempt.pk, finished_at__isnull=False).first()
    events = _page_events(attempt, through=through)
    if not events:
        return False  # no events (not even a load): the sweep scores it by the server's clock alone
    screen_ms = _screen_ms(attempt, events)
    limit_s = _limit_s(attempt)
    at_limit = bool(limit_s) and screen_ms >= time_up_from_ms(limit_s or 0)
    if check is None and not at_limit:
        return False
    verdict = _peer_verdict(attempt, check) if check else Verdict(False, 0.0, NO_CHECK)
    attempt.missing_batches = _missing(attempt, through=through)
    attempt.scored_through = through
    attempt.screen_ms = screen_ms
    _submitted(attempt, _peer_answer(check), _within_time_limit(attempt, verdict, screen_ms=screen_ms), events)
    evidence = page_input_evidence(events, free_submit=at_limit and check is None)
    _keep_evidence(attempt, evidence)
    if attempt.slot_id:
        _slot_after_submit(attempt, slot_id=attempt.slot_id)
    return True


def _page_events(attempt: Attempt, *, through: int) -> list[Event]:
    """A hosted page's events through its last submit at or before batch `through` (all of them
    through it when no submit came: the sweep's case)."""
    events = [e for e in attempt.events.filter(seq__lte=through).order_by("seq", "index") if e.kind != Event.REFUSED]
    submits = [i for i, e in enumerate(events) if e.kind == "act.submit"]
    return events[: submits[-1] + 1] if submits else events


def _peer_verdict(attempt: Attempt, check: HostedCheck) -> Verdict:
    """The peer's verdict in words: its own `message` or error, never its `correct_answer`."""
    benchmark = (split_hosted_type(attempt.puzzle.type) or ("the benchmark", ""))[0]
    reply = check.steps[-1].get("reply") if check.steps else None
    said = reply.get("error") or reply.get("message") if isinstance(reply, dict) else None
    word = "correct" if check.correct else "not correct"
    reason = f"{benchmark}'s verdict: {word}" + (f" ({said})" if isinstance(said, str) and said else "")
    return Verdict(bool(check.correct), 1.0 if check.correct else 0.0, reason)


def _peer_answer(check: HostedCheck | None) -> object:
    """What the page sent to the peer: each step's answer of a multi-step sequence, else the one."""
    if check is None or not check.steps:
        return None
    answers = [step.get("answer") for step in check.steps]
    return answers if check.steps[-1].get("sequence") else answers[-1]


def attempt_score_unsubmitted(*, attempt: Attempt) -> bool:
    """A hosted attempt whose check has its final reply but whose page never sent its submit (the
    recorder gone, or kept out): scored on every batch that came, by the same rules (the sweep,
    under the attempt's row lock; the caller saves). With no events at all, timed by the server."""
    if attempt.is_closed or not is_hosted(attempt.puzzle):
        return False
    if _hosted_score(attempt, through=attempt.max_seq):
        return True
    check = HostedCheck.objects.filter(attempt_id=attempt.pk, finished_at__isnull=False).first()
    if check is None or check.finished_at is None or attempt.events.exists():
        return False
    opened_ms = attempt_opened_ms(attempt=attempt)
    attempt.submitted_at = timezone.now()
    attempt.answer = _peer_answer(check)
    verdict = _peer_verdict(attempt, check)
    attempt.correct, attempt.reward, attempt.reason = verdict.correct, verdict.reward, verdict.reason[:300]
    attempt.wall_ms = attempt.active_ms = attempt.screen_ms = max(0.0, check.finished_at.timestamp() * 1000 - opened_ms)
    attempt.clock_ok = False
    _keep_evidence(attempt, Evidence(False, "no events came from the page"))
    if attempt.slot_id:
        _slot_after_submit(attempt, slot_id=attempt.slot_id)
    return True


def attempt_rescore(*, attempt: Attempt) -> bool:
    """Score a submitted attempt again from its stored events (after a truth correction);
    returns whether its correctness changed. Times are not touched; the input evidence is
    checked again (it may be missing on attempts scored before it existed). It reads the batches
    the first score read (scored_through): after a gap, a later page's incomplete run may hold a
    later submit, which must not become the answer now. A hosted attempt's verdict is the peer's:
    no truth of ours to correct, so it is left as it is."""
    if is_hosted(attempt.puzzle):
        return False
    events, actions = _submitted_events(attempt, through=attempt.scored_through)
    answer, verdict = score_actions(puzzle=attempt.puzzle, actions=actions)
    screen_ms = _screen_ms(attempt, events)
    verdict = _within_time_limit(attempt, verdict, screen_ms=screen_ms)
    _note_input(attempt, events, screen_ms=screen_ms)
    changed = verdict.correct != attempt.correct
    attempt.answer, attempt.correct, attempt.reward, attempt.reason = (
        answer,
        verdict.correct,
        verdict.reward,
        verdict.reason[:300],
    )
    attempt.save(update_fields=["answer", "correct", "reward", "reason", "input_ok", "input_problem"])
    return changed


def places_mark_solved(*, puzzle: Puzzle) -> int:
    """After a puzzle's attempts are scored again (a truth correction): each study place on it
    that its holder's answer now solves is done, so from their next puzzle on they are not asked
    one they solved (with k attempts allowed, a wrong answer had left it open; a retry already on
    their screen can still be answered). Returns how many. A place done before stays done even if
    its answer is now wrong: a person who moved on, or finished and was paid, is never called back."""
    solved = Attempt.objects.filter(
        puzzle=puzzle, correct=True, participant_id=F("slot__enrollment__participant_id")
    ).values("slot_id")
    return Slot.objects.filter(pk__in=solved, done=False).update(done=True)


def attempts_without_motion() -> list[int]:
    """Submitted attempts scored before motion was kept (Attempt.motion empty)."""
    return list(Attempt.objects.filter(submitted_at__isnull=False, motion__isnull=True).values_list("pk", flat=True))


def attempt_measure_motion(*, attempt_id: int) -> None:
    """Motion measured afterwards, as scoring would have: from the events through the first submit."""
    try:
        attempt = Attempt.objects.get(pk=attempt_id)
        events, _ = _submitted_events(attempt, through=attempt.scored_through)
    except StopIteration:  # no submit stored (an imported answer): no path to measure
        events = []
    Attempt.objects.filter(pk=attempt_id).update(motion=attempt_motion(events))


def _missing(attempt: Attempt, *, through: int) -> list[int]:
    """Batch numbers up to `through` never stored (1..acked_seq are all held)."""
    if through <= attempt.acked_seq:  # the usual submit: nothing can be missing, no query
        return []
    held = set(attempt.events.filter(seq__gt=attempt.acked_seq, seq__lte=through).values_list("seq", flat=True))
    return [seq for seq in range(attempt.acked_seq + 1, through + 1) if seq not in held]


def _submitted_events(attempt: Attempt, *, through: int | None = None) -> tuple[list[Event], list[Action]]:
    """The events through the last submit at or before batch `through`, and the semantic actions
    that make the answer. Batches stop at the first submit once it counts, so that is the only
    one but after a gap: then a later page's complete run, scored through its own submit, wins
    over an earlier page's submit that waited behind the gap (live/intake.py). Without `through`
    (attempts scored before scored_through was kept), through the last batch stored."""
    through = attempt.max_seq if through is None else through
    events = list(attempt.events.filter(seq__lte=through).order_by("seq", "index"))
    end = max(i for i, e in enumerate(events) if e.kind == "act.submit")
    events = [e for e in events[: end + 1] if e.kind != Event.REFUSED]
    # A reload shows the puzzle afresh (no cells selected, the first option...), so the answer
    # is what was entered since the last page load; the time counts from the first.
    shown = max((i for i, e in enumerate(events) if e.kind == "load"), default=0)
    actions = [Action(e.kind, e.t, e.received, e.data) for e in events[shown:] if e.kind.startswith("act.")]
    return events, actions


def _screen_ms(attempt: Attempt, events: list[Event]) -> float:
    """Serving to the submit's arrival, less the pauses and hidden spells the server saw."""
    states: list[LoggedEvent] = [e for e in events if e.kind in STATE_KINDS]
    return on_screen_ms(
        states,
        [e.received for e in events],
        opened_ms=attempt_opened_ms(attempt=attempt),
        until_ms=events[-1].received,
        pauses=attempt.pauses,
    )


def _within_time_limit(attempt: Attempt, verdict: Verdict, *, screen_ms: float) -> Verdict:
    """A study's time limit overrules the verifier: too late is wrong, however right, and an answer
    not correct whose submit came at the limit (time_up_from_ms: the page's own submit) timed out,
    whatever the verifier found in it. Both are stored as one outcome, TIMED_OUT, the outcome the
    report, quality control and the exports count (reporting/reports.py, submitted_late). Judged
    by the server's clock alone: the time the puzzle was on screen until the submit arrived."""
    limit_s = _limit_s(attempt)
    if not limit_s:
        return verdict
    on_screen = f"{screen_ms / 1000:.1f} s on screen; the limit is {limit_s} s"
    if screen_ms > limit_s * 1000 + TIME_LIMIT_GRACE_MS:
        return Verdict(False, 0.0, f"{TIMED_OUT}: submitted after {on_screen}")
    if not verdict.correct and screen_ms >= time_up_from_ms(limit_s):
        return Verdict(False, 0.0, f"{TIMED_OUT}: submitted at {on_screen} (the answer then: {verdict.reason})")
    return verdict


def _limit_s(attempt: Attempt) -> int | None:
    return attempt.study.time_limit_s if attempt.study else None


def _note_input(attempt: Attempt, events: list[Event], *, screen_ms: float) -> None:
    """Whether raw input backs the attempt's actions (live/evidence.py), on the attempt."""
    puzzle = attempt.puzzle
    limit_s = _limit_s(attempt)
    logged: list[LoggedEvent] = list(events)
    evidence = input_evidence(
        logged,
        layout=get_type(puzzle.type).layout(puzzle.public),
        free_submit=bool(limit_s) and screen_ms >= time_up_from_ms(limit_s or 0),
    )
    _keep_evidence(attempt, evidence)


def _keep_evidence(attempt: Attempt, evidence: Evidence) -> None:
    problem = evidence.problem
    if not evidence.ok and attempt.event_count > MAX_ATTEMPT_EVENTS:  # over it only once something was dropped
        problem = f"raw input past the attempt's limit was dropped; {problem}"
    attempt.input_ok, attempt.input_problem = evidence.ok, problem[:200]


def _slot_after_submit(attempt: Attempt, *, slot_id: int) -> None:
    """A study place is done when solved, or when its k attempts are used up."""
    allowed = attempt.study.attempts_allowed if attempt.study else 1
    used = (
        Attempt.objects.filter(
            slot_id=slot_id, participant_id=attempt.participant_id, submitted_at__isnull=False
        ).count()
        + 1
    )
    if attempt.correct or used >= allowed:
        Slot.objects.filter(pk=slot_id).update(done=True)


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
    if is_hosted(puzzle):
        return None
    return get_type(puzzle.type).hold_progress(puzzle.truth, held_ms)
