"""Puzzle labels: flags from annotators, the admin's review (dismiss, retire, correct the truth),
and the consensus audit that finds puzzles whose truth is probably wrong. Every admin action is
written to the audit log with what it changed."""

from __future__ import annotations

import ipaddress
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from annotation.live.scoring import attempt_rescore, places_mark_solved
from annotation.models import Attempt, AuditLog, Enrollment, Flag
from arena_site.middleware import CONTROL_CHARACTERS
from puzzles.models import Puzzle
from puzzles.registry import get_type

# NUL and the other control characters but tab, line feed and carriage return (a note is typed in
# a text area): the database refuses NUL, and the rest only ever come from a script.


class TruthRejected(ValueError):
    """A corrected truth the type cannot use; the message says why."""


def flag_raise(*, attempt: Attempt, reason: str, note: str = "") -> Flag:
    """An annotator flags the puzzle of their attempt; the attempt itself is kept as it is.
    A person has at most one open flag per puzzle: flagging again returns the open one unchanged
    (a unique constraint settles two requests at once)."""
    if reason not in Flag.Reason.values:
        raise ValueError(f"unknown reason {reason!r}; one of {', '.join(Flag.Reason.values)}")
    if CONTROL_CHARACTERS.search(note):
        raise ValueError("the note must not contain control characters (tabs and line breaks are fine)")
    mine = Flag.objects.filter(
        puzzle_id=attempt.puzzle_id, participant_id=attempt.participant_id, status=Flag.Status.OPEN
    )
    found = mine.first()
    if found:
        return found
    try:
        with transaction.atomic():
            made = Flag.objects.create(
                puzzle_id=attempt.puzzle_id,
                attempt=attempt,
                participant_id=attempt.participant_id,
                reason=reason,
                note=note[: Flag.NOTE_MAX],
            )
    except IntegrityError:  # raised at the same moment by another request
        return mine.get()
    return made


def _resolve(flags: QuerySet[Flag], status: str, by: User) -> int:
    return flags.filter(status=Flag.Status.OPEN).update(status=status, resolved_at=timezone.now(), resolved_by=by)


def flag_dismiss(*, flag: Flag, by: User) -> None:
    with transaction.atomic():
        _resolve(Flag.objects.filter(pk=flag.pk), Flag.Status.DISMISSED, by)
        AuditLog.objects.create(
            action=AuditLog.Action.FLAG_DISMISSED,
            puzzle_id=flag.puzzle_id,
            by=by,
            details={"flag": flag.pk, "reason": flag.reason},
        )


def puzzle_retire(*, puzzle: Puzzle, by: User, note: str = "") -> None:
    """Withdraw a puzzle: it leaves every report and queue; its attempts are kept."""
    with transaction.atomic():
        before = puzzle.status
        Puzzle.objects.filter(pk=puzzle.pk).update(status=Puzzle.Status.RETIRED)
        resolved = _resolve(puzzle.flags.all(), Flag.Status.RETIRED, by)
        AuditLog.objects.create(
            action=AuditLog.Action.PUZZLE_RETIRED,
            puzzle=puzzle,
            by=by,
            details={"status_before": before, "flags_resolved": resolved, "note": note},
        )


def puzzle_correct_truth(*, puzzle: Puzzle, truth: dict, by: User, note: str = "") -> int:
    """Replace a puzzle's truth and score every submitted attempt on it again; returns how many
    attempts changed correctness. The new truth must verify its own solution."""
    puzzle_type = get_type(puzzle.type)
    try:
        verdict = puzzle_type.verify(truth, puzzle_type.solution(truth), puzzle.load_masks())
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise TruthRejected(f"the {puzzle.type} verifier cannot read this truth: {error!r}") from None
    if not verdict.correct:
        raise TruthRejected(f"the truth's own solution does not verify: {verdict.reason}")
    with transaction.atomic():
        # Submits being scored wait (their FOR UPDATE conflicts with this), but not a new attempt
        # on the puzzle, whose insert takes FOR KEY SHARE: a plain FOR UPDATE deadlocked with a
        # holder's retry, which locks its place first and the correction then updates that place.
        puzzle = Puzzle.objects.select_for_update(no_key=True).get(pk=puzzle.pk)
        old = puzzle.truth
        puzzle.truth = truth
        puzzle.chance_rate = None  # worked out again from the new truth when next read (puzzles/chance.py)
        puzzle.save(update_fields=["truth", "chance_rate"])
        attempts = Attempt.objects.filter(puzzle=puzzle, submitted_at__isnull=False).select_related("puzzle")
        changed = sum(attempt_rescore(attempt=a) for a in attempts)
        solved = places_mark_solved(puzzle=puzzle)
        resolved = _resolve(puzzle.flags.all(), Flag.Status.CORRECTED, by)
        AuditLog.objects.create(
            action=AuditLog.Action.TRUTH_CORRECTED,
            puzzle=puzzle,
            by=by,
            details={
                "old_truth": old,
                "new_truth": truth,
                "attempts_rescored": attempts.count(),
                "attempts_changed": changed,
                "places_solved": solved,
                "flags_resolved": resolved,
                "note": note,
            },
        )
    return changed


# --- consensus audit --------------------------------------------------------------------------
@dataclass(frozen=True)
class Suspect:
    puzzle_id: int
    puzzle_uid: str
    puzzle_type: str
    answer: object
    people: int


def consensus_suspects(*, min_people: int = 2) -> list[Suspect]:
    """Puzzles where several people independently gave the same answer and the verifier said no:
    the likeliest cases of a wrong truth. Points count as the same within a 10-pixel cell.

    People, not accounts (answer_person): answers from one client address count as one person,
    answers without input evidence and those of excluded annotators count for nothing, and only
    answers given in a study count (anyone signed in may try a puzzle outside one)."""
    excluded = Enrollment.objects.filter(excluded=True).values("participant_id")
    wrong = (
        Attempt.objects.filter(
            submitted_at__isnull=False,
            correct=False,
            answer__isnull=False,
            participant__kind="human",
            study__isnull=False,
        )
        .exclude(puzzle__status=Puzzle.Status.RETIRED)
        .exclude(purpose=Attempt.Purpose.PRACTICE)
        .exclude(participant_id__in=excluded)
        .exclude(input_ok=False)
        .annotate(address=join_address())
        .values_list("puzzle_id", "puzzle__uid", "puzzle__type", "participant_id", "address", "answer")
    )
    people: dict[tuple[int, str], set[str]] = defaultdict(set)
    names, answers = {}, {}
    for puzzle_id, uid, puzzle_type, participant, address, answer in wrong.iterator(chunk_size=5000):
        key = (puzzle_id, answer_key(answer))
        people[key].add(answer_person(participant=participant, address=address))
        names[puzzle_id], answers[key] = (uid, puzzle_type), answer
    found = [
        Suspect(pid, *names[pid], answers[(pid, key)], len(who))
        for (pid, key), who in people.items()
        if len(who) >= min_people
    ]
    return sorted(found, key=lambda s: (-s.people, s.puzzle_type, s.puzzle_id))


def join_address() -> Subquery:
    """An attempt's annotator's address (Enrollment.join_address) in the attempt's study."""
    enrollment = Enrollment.objects.filter(study_id=OuterRef("study_id"), participant_id=OuterRef("participant_id"))
    return Subquery(enrollment.values("join_address")[:1])


def answer_person(*, participant: int, address: str | None) -> str:
    """Who an answer counts as: the address its annotator joined from, so accounts made from one
    address count as one person (one answer each at most; a household or a lab behind one address
    too, the price of not counting sybils). An IPv6 address counts by its /64, the network one
    home is given. An enrolment with no address recorded (made before addresses were) is its own."""
    if not address:
        return f"account:{participant}"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return f"address:{address}"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is None:
            return f"network:{ipaddress.ip_network((ip, 64), strict=False)}"
        ip = ip.ipv4_mapped  # an IPv4 client seen through an IPv6 socket
    return f"address:{ip}"


def answer_key(answer: Any) -> str:
    """Equal answers compare equal: sorted cell sets, points snapped to a 10 px grid, trimmed text."""

    def snap(value: Any) -> Any:
        if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
            return round(value / 10) * 10 if isinstance(value, float) else value
        if isinstance(value, list):
            return [snap(v) for v in value]
        return value.strip() if isinstance(value, str) else value

    return json.dumps(snap(answer), sort_keys=True)
