"""Studies: creating them, joining, and each annotator's way through (writes and the next step).

Assignment is by slots: each study puzzle has `overlap` slots, and an annotator takes a free one
under a row lock (skipping rows other annotators hold), so overlap is never exceeded however many
people ask at once. An unfinished slot expires after the study's hold time and goes back to the
queue; the attempt it carried is closed.
"""
from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import zip_longest

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import Attempt, Enrollment, Slot, Study
from annotation.services import participant_for_user
from puzzles.models import Puzzle
from puzzles.registry import get_type


class StudySetupError(ValueError):
    """A study that cannot be created as asked; the message says why."""


def study_create(
    *, name: str, split: str, puzzles_per_annotator: int, overlap: int = 1, types: list[str] | None = None,
    order: str = Study.Order.SHUFFLED, seed: int = 0, show_verdict: bool = False, time_limit_s: int | None = None,
    attempts_per_puzzle: int = 1, practice: list[Puzzle] = (), gold: list[Puzzle] = (), pool_size: int | None = None,
) -> Study:
    """A study over the split's replay-verified puzzles (practice and gold excluded from the pool)."""
    names = [get_type(t).name for t in types] if types else []
    special = [*practice, *gold]
    unverified = [p.uid for p in special if p.status != Puzzle.Status.VERIFIED]
    if unverified:
        raise StudySetupError(f"practice and gold puzzles must be replay-verified: {', '.join(unverified)}")
    pool = Puzzle.objects.filter(split=split, status=Puzzle.Status.VERIFIED).exclude(pk__in=[p.pk for p in special])
    if names:
        pool = pool.filter(type__in=names)
    pool = list(pool.order_by("type", "index", "source_id")[:pool_size])
    if not pool:
        raise StudySetupError(f"no replay-verified puzzles in split {split!r} for those types")
    if puzzles_per_annotator > len(pool):
        raise StudySetupError(f"{puzzles_per_annotator} puzzles per annotator, but only {len(pool)} in the pool")
    with transaction.atomic():
        study = Study.objects.create(
            name=name, split=split, types=names, puzzles_per_annotator=puzzles_per_annotator, overlap=overlap,
            order=order, seed=seed, show_verdict=show_verdict, time_limit_s=time_limit_s,
            attempts_per_puzzle=attempts_per_puzzle)
        study.practice.set(practice)
        study.gold.set(gold)
        Slot.objects.bulk_create(
            Slot(study=study, puzzle=puzzle, copy=copy, rank=rank)
            for rank, puzzle in enumerate(ranked(pool, order=order, seed=seed)) for copy in range(overlap))
    return study


def ranked(puzzles: list[Puzzle], *, order: str, seed: int) -> list[Puzzle]:
    """The study's order: a seeded shuffle, blocks of one type, or types taking turns."""
    rng = random.Random(seed)
    shuffled = puzzles[:]
    rng.shuffle(shuffled)
    if order == Study.Order.SHUFFLED:
        return shuffled
    by_type: dict[str, list[Puzzle]] = {}
    for puzzle in shuffled:
        by_type.setdefault(puzzle.type, []).append(puzzle)
    groups = list(by_type.values())
    rng.shuffle(groups)
    if order == Study.Order.BLOCKED:
        return [p for group in groups for p in group]
    return [p for row in zip_longest(*groups) for p in row if p is not None]


# --- joining ---------------------------------------------------------------------------------
def guest_user(*, study: Study):
    """A login-less account for someone who joins by invite link."""
    user = get_user_model().objects.create_user(username=f"guest-{study.pk}-{secrets.token_hex(6)}")
    user.set_unusable_password()
    user.save(update_fields=["password"])
    return user


def is_guest(user, *, study: Study) -> bool:
    return user.username.startswith(f"guest-{study.pk}-")


def enrollment_join(*, study: Study, user, external_ids: dict[str, str]) -> Enrollment:
    participant = participant_for_user(user=user)
    enrollment, created = Enrollment.objects.get_or_create(
        study=study, participant=participant, defaults={"external_ids": external_ids})
    if not created and external_ids and external_ids != enrollment.external_ids:
        enrollment.external_ids = {**enrollment.external_ids, **external_ids}
        enrollment.save(update_fields=["external_ids"])
    return enrollment


def enrollment_consent(*, enrollment: Enrollment) -> None:
    if enrollment.consented_at is None:
        enrollment.consented_at = timezone.now()
        enrollment.save(update_fields=["consented_at"])


# --- the way through --------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    kind: str  # consent, attempt, finished, waiting (no free puzzle right now), excluded, closed
    attempt: Attempt | None = None
    done: int = 0  # scored and gold puzzles finished
    total: int = 0


def enrollment_next(*, enrollment: Enrollment, now: datetime | None = None) -> Step:
    """What this annotator sees next: the same unfinished attempt after a refresh, on another
    device or the next day; else practice, gold when due, or a newly assigned puzzle.

    One step at a time per annotator (their enrollment row is locked), so two tabs or a double
    click cannot take two puzzles or the same puzzle twice."""
    with transaction.atomic():
        locked = Enrollment.objects.select_for_update(of=("self",)).select_related("study").get(pk=enrollment.pk)
        return _next_step(locked, now or timezone.now())


def _next_step(enrollment: Enrollment, now: datetime) -> Step:
    study = enrollment.study
    if enrollment.excluded:
        return Step("excluded")
    if enrollment.consented_at is None:
        return Step("consent")
    practice = _next_special(enrollment, study.practice.order_by("pk"), Attempt.Purpose.PRACTICE)
    if practice:
        return Step("attempt", practice, 0, _total(study))
    done = _done(enrollment)
    total = _total(study)
    if done >= total:
        _finish(enrollment, now)
        return Step("finished", None, done, total)
    if _gold_due(enrollment, done):
        gold = _next_special(enrollment, study.gold.order_by("pk"), Attempt.Purpose.GOLD)
        if gold:
            return Step("attempt", gold, done, total)
    if not study.is_open:
        return Step("closed", None, done, total)
    attempt = _current(enrollment, now) or _assign(enrollment, now)
    return Step("attempt", attempt, done, total) if attempt else Step("waiting", None, done, total)


def _total(study: Study) -> int:
    return study.puzzles_per_annotator + study.gold.count()


def _done(enrollment: Enrollment) -> int:
    scored = Slot.objects.filter(enrollment=enrollment, done=True).count()
    gold = Attempt.objects.filter(participant=enrollment.participant, study=enrollment.study,
                                  purpose=Attempt.Purpose.GOLD, submitted_at__isnull=False).count()
    return scored + gold


def _gold_due(enrollment: Enrollment, done: int) -> bool:
    """Gold puzzles are spread evenly through the queue, so they cannot be told apart."""
    study = enrollment.study
    golds = study.gold.count()
    if not golds:
        return False
    served = Attempt.objects.filter(participant=enrollment.participant, study=study, purpose=Attempt.Purpose.GOLD,
                                    submitted_at__isnull=False).count()
    due = sum(1 for i in range(golds) if done >= (i + 1) * _total(study) // (golds + 1))
    return served < due


def _next_special(enrollment: Enrollment, puzzles, purpose: str) -> Attempt | None:
    """The open attempt on the first practice (or gold) puzzle not yet submitted, made if needed."""
    for puzzle in puzzles.exclude(status=Puzzle.Status.RETIRED):
        attempts = Attempt.objects.filter(participant=enrollment.participant, study=enrollment.study, puzzle=puzzle,
                                          purpose=purpose)
        if attempts.filter(submitted_at__isnull=False).exists():
            continue
        return attempts.filter(abandoned_at__isnull=True).first() or Attempt.objects.create(
            participant=enrollment.participant, puzzle=puzzle, study=enrollment.study, purpose=purpose)
    return None


def _current(enrollment: Enrollment, now: datetime) -> Attempt | None:
    """The annotator's unfinished slot (kept alive while they come back), with an open attempt."""
    slot = (Slot.objects.select_for_update(of=("self",)).filter(enrollment=enrollment, done=False)
            .exclude(puzzle__status=Puzzle.Status.RETIRED).order_by("assigned_at").first())
    if slot is None:
        return None
    Slot.objects.filter(pk=slot.pk).update(expires_at=now + timedelta(minutes=enrollment.study.hold_minutes))
    return _open_attempt(enrollment, slot)


def _open_attempt(enrollment: Enrollment, slot: Slot) -> Attempt:
    """The slot's unsubmitted attempt, or a new one (a retry, when the study allows k attempts)."""
    mine = slot.attempts.filter(participant=enrollment.participant)
    return mine.filter(submitted_at__isnull=True, abandoned_at__isnull=True).first() or Attempt.objects.create(
        participant=enrollment.participant, puzzle_id=slot.puzzle_id, study=enrollment.study, slot=slot)


def _assign(enrollment: Enrollment, now: datetime) -> Attempt | None:
    """Take the first free slot of a puzzle this annotator has not seen, under a row lock."""
    study = enrollment.study
    seen = Attempt.objects.filter(participant=enrollment.participant, study=study).values("puzzle_id")
    with transaction.atomic():
        answered = Attempt.objects.filter(slot=OuterRef("pk"), submitted_at__isnull=False)
        slot = (Slot.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(study=study, done=False)
                # An expired place goes back to the queue only if its holder answered nothing:
                # an answer given counts, and the overlap stays what the study says.
                .filter(Q(enrollment__isnull=True) | Q(expires_at__lt=now) & ~Exists(answered))
                .exclude(puzzle_id__in=seen)
                .exclude(puzzle__status=Puzzle.Status.RETIRED)
                .order_by("rank", "copy")
                .first())
        if slot is None:
            return None
        if slot.enrollment_id is not None:  # expired: whoever held it loses the unfinished attempt
            Attempt.objects.filter(slot=slot, submitted_at__isnull=True).update(abandoned_at=now)
        slot.enrollment, slot.assigned_at = enrollment, now
        slot.expires_at = now + timedelta(minutes=study.hold_minutes)
        slot.save(update_fields=["enrollment", "assigned_at", "expires_at"])
        return _open_attempt(enrollment, slot)


def _finish(enrollment: Enrollment, now: datetime) -> None:
    if enrollment.finished_at is None:
        enrollment.finished_at = now
        enrollment.save(update_fields=["finished_at"])



def study_progress(*, attempt: Attempt) -> dict | None:
    """The study part of an attempt's page: where the annotator stands, where to go next."""
    if not attempt.study_id:
        return None
    study = attempt.study
    enrollment = Enrollment.objects.filter(study=study, participant_id=attempt.participant_id).first()
    if enrollment is None:
        return None
    return {
        "name": study.name,
        "purpose": attempt.purpose,
        "done": _done(enrollment),
        "total": _total(study),
        "time_limit_s": study.time_limit_s,
        # The limit runs from when the puzzle was first shown, across reloads and devices.
        "elapsed_ms": round((timezone.now() - attempt.created_at).total_seconds() * 1000),
        "next_url": f"/s/{study.token}/next/",
        "pause_url": f"/s/{study.token}/pause/",
    }
