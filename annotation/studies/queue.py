"""Each annotator's way through a study: joining, consent, then one step at a time.

Assignment is by slots: each study puzzle has `overlap` slots, and an annotator takes a free one
under a row lock (skipping rows other annotators hold), so overlap is never exceeded however many
people ask at once. An unfinished slot expires after the study's hold time and goes back to the
queue; the attempt it carried is closed.

Gold puzzles come at places in each person's run drawn for them, in an order drawn for them
(gold_plan), so neither where gold comes nor which puzzle it is can be told from another run.
Retries need visible verdicts: a study stored with k > 1 and hidden verdicts allows one attempt.
A study's gold rule screens a person out at the step after the gold answer that fails it, with
the failed-gold code (enrollment_outcome: how a person's part ended, on every page and device).

In a shuffled study each person has an order of their own (run_plan), balanced over people: the
type due at each place of their run is a row of a balanced Latin square over the study's types,
the row taken by their turn of joining, so every type comes about as often at each place across
people, and learning or fatigue is not confounded with type. Each attempt stores its place.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, Exists, IntegerField, Max, OuterRef, Q, QuerySet, Value, When
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation.live.attempts import participant_for_user
from annotation.models import Attempt, AuditLog, Enrollment, Event, Slot, Study
from annotation.studies.access import AccessRefused, person_id
from puzzles.models import Puzzle


def enrollment_join(
    *, study: Study, user: User, external_ids: dict[str, str], user_agent: str = "", client: str = ""
) -> Enrollment:
    """The user's enrolment in the study, made on first joining with the crowd ids of the link.

    Ids are recorded once: a later link cannot attach another person's id to this enrolment, and
    an id already enrolled in the study is refused (AccessRefused), one enrolment per person.
    The browser's user agent is kept for quality control (enrollment_seen keeps it current), and
    the client address it joined from, by which the consensus audit counts people, not accounts."""
    participant = participant_for_user(user=user)
    try:
        with transaction.atomic():
            enrollment, made = Enrollment.objects.get_or_create(
                study=study,
                participant=participant,
                defaults={
                    "external_ids": external_ids,
                    "crowd_id": person_id(external_ids),
                    "user_agent": "".join(c for c in user_agent if c.isprintable())[:USER_AGENT_MAX],
                    "join_address": client[: Enrollment._meta.get_field("join_address").max_length],
                },
            )
    except IntegrityError:  # the unique crowd id: someone else joined with it first
        raise AccessRefused("This id already takes part in this study.") from None
    if not made:
        enrollment_seen(enrollment=enrollment, user_agent=user_agent)
    return enrollment


USER_AGENT_MAX = 300


def enrollment_seen(*, enrollment: Enrollment | None, user_agent: str) -> None:
    """The browser an annotator (re)joined or resumed with: the device staff see."""
    agent = "".join(c for c in user_agent if c.isprintable())[:USER_AGENT_MAX]
    if enrollment is not None and agent and agent != enrollment.user_agent:
        Enrollment.objects.filter(pk=enrollment.pk).update(user_agent=agent)
        enrollment.user_agent = agent


def enrollment_consent(*, enrollment: Enrollment) -> None:
    if enrollment.consented_at is None:
        enrollment.consented_at = timezone.now()
        enrollment.save(update_fields=["consented_at"])


# --- the way through --------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    # consent, attempt, finished, waiting (no free puzzle right now), no_places (none for longer
    # than the hold time), excluded, and, when the study takes no new work: draft, paused, closed
    kind: str
    attempt: Attempt | None = None
    done: int = 0  # scored and gold puzzles finished
    total: int = 0


FAILED_GOLD = "failed gold"  # the exclusion reason that gives the person the failed-gold code


def way_out_code(enrollment: Enrollment, step: str) -> str | None:
    """The Study field of the code a person leaving at this step is given (study_settings.CODES),
    or None: finishing, finding no place, or being excluded as failing gold."""
    if step == "finished":
        return "completion_code"
    if step == "no_places":
        return "no_places_code"
    if step == "excluded" and enrollment.excluded_reason == FAILED_GOLD:
        return "failed_gold_code"
    return None


def enrollment_outcome(enrollment: Enrollment) -> Step | None:
    """How a person's part ended, or None while it goes on: excluded as failing gold (the
    failed-gold code), else finished (the completion code, even if excluded since for another
    reason: they did the work), else excluded (no code). The same on every page and device."""
    done, total = enrollment.puzzles_done(), enrollment.study.puzzles_total()
    if enrollment.excluded and enrollment.excluded_reason == FAILED_GOLD:
        return Step("excluded", None, done, total)
    if enrollment.finished_at is not None:
        return Step("finished", None, done, total)
    if enrollment.excluded:
        return Step("excluded", None, done, total)
    return None


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
    if _gold_failed(enrollment):
        _screen_out(enrollment, now)
    ended = enrollment_outcome(enrollment)
    if ended is not None:
        return ended
    if enrollment.consented_at is None:
        return Step("consent")
    _close_answered_places(enrollment)
    done = enrollment.puzzles_done()
    total = study.puzzles_total()
    if done >= total:
        _finish(enrollment, now)
        return Step("finished", None, done, total)
    if not study.accepts_work:  # paused or closed: the end so far, nothing new handed out
        return Step(study.status, None, done, total)
    practice = _next_special(enrollment, study.practice.order_by("pk"), Attempt.Purpose.PRACTICE, None)
    if practice:
        return Step("attempt", practice, 0, total)
    plan = gold_plan(enrollment)
    if _gold_due(enrollment, plan, done):
        gold = _next_special(enrollment, plan.puzzles(), Attempt.Purpose.GOLD, done + 1)
        if gold:
            return Step("attempt", gold, done, total)
    attempt = _current(enrollment, now, done + 1) or _assign(enrollment, now, done + 1)
    if attempt is None:
        return _without_place(enrollment, now, done, total)
    if enrollment.waiting_since is not None:
        Enrollment.objects.filter(pk=enrollment.pk).update(waiting_since=None)
    return Step("attempt", attempt, done, total)


def _without_place(enrollment: Enrollment, now: datetime, done: int, total: int) -> Step:
    """No free place for this person: waiting, until the hold time has passed since they first
    found none. By then every place its holder left has come free, so none is coming: they get
    the no-places code to return the study with, instead of a page asking them to come back."""
    if enrollment.waiting_since is None:
        enrollment.waiting_since = now
        Enrollment.objects.filter(pk=enrollment.pk).update(waiting_since=now)
    if now - enrollment.waiting_since >= timedelta(minutes=enrollment.study.hold_minutes):
        return Step("no_places", None, done, total)
    return Step("waiting", None, done, total)


def study_has_free_place(study: Study, *, now: datetime | None = None) -> bool:
    """Whether someone new would get a place now: the invite page of a full study says so before
    consent, so a late joiner does not consent and practise for nothing."""
    return _free_slots(study, now or timezone.now()).exists()


def _free_slots(study: Study, now: datetime) -> QuerySet[Slot]:
    """Places anyone who has not seen their puzzle may take: nobody holds them, or their holder's
    time ran out with nothing answered (an answer given counts: the overlap stays what the study says)."""
    # Answered by its holder: an excluded person's answer on a place reopened since does not count.
    answered = Attempt.objects.filter(
        slot=OuterRef("pk"), participant_id=OuterRef("enrollment__participant_id"), submitted_at__isnull=False
    )
    return (
        Slot.objects.filter(study=study, done=False)
        .filter(Q(enrollment__isnull=True) | Q(expires_at__lt=now) & ~Exists(answered))
        .exclude(puzzle__status=Puzzle.Status.RETIRED)
    )


def _close_answered_places(enrollment: Enrollment) -> None:
    """A study stored with k > 1 and verdicts hidden allows one attempt (Study.attempts_allowed):
    scoring closes a place at its first answer now, but places answered before that rule may be
    open still, so here, before progress is counted, any answer closes one, right or wrong alike;
    a retry offered after a wrong one would tell the verdict."""
    study = enrollment.study
    if study.attempts_allowed == study.attempts_per_puzzle:
        return
    answered = Attempt.objects.filter(
        slot=OuterRef("pk"), participant_id=enrollment.participant_id, submitted_at__isnull=False
    )
    Slot.objects.filter(enrollment=enrollment, done=False).filter(Exists(answered)).update(done=True)


# --- gold: failing it ends a person's part at once ---------------------------------------------
def _gold_failed(enrollment: Enrollment) -> bool:
    """Whether the study's gold rule (Study.gold_screen_out_at) screens this person out now: as
    many gold answers wrong as it allows, before they finish. Once: staff who include someone it
    screened out (or whom they excluded as failing gold) have the last word."""
    limit = enrollment.study.gold_screen_out_at
    if not limit or enrollment.excluded or enrollment.finished_at is not None:
        return False
    wrong = Attempt.objects.filter(
        participant_id=enrollment.participant_id,
        study_id=enrollment.study_id,
        purpose=Attempt.Purpose.GOLD,
        submitted_at__isnull=False,
        correct=False,
    ).count()
    if wrong < limit:
        return False
    excluded_so = AuditLog.objects.filter(
        enrollment=enrollment, action=AuditLog.Action.ANNOTATOR_EXCLUDED, details__reason=FAILED_GOLD
    )
    return not excluded_so.exists()


def _screen_out(enrollment: Enrollment, now: datetime) -> None:
    """Excluded as failing gold by the study's rule, as staff would (quality.enrollment_exclude):
    left out of reports, their places back in the queue, logged (by nobody: the rule)."""
    places = enrollment_places_reopen(enrollment=enrollment, now=now)
    Enrollment.objects.filter(pk=enrollment.pk).update(excluded=True, excluded_reason=FAILED_GOLD)
    enrollment.excluded, enrollment.excluded_reason = True, FAILED_GOLD
    rule = f"{enrollment.study.gold_screen_out_at} wrong gold answers screen out"
    AuditLog.objects.create(
        action=AuditLog.Action.ANNOTATOR_EXCLUDED,
        enrollment=enrollment,
        by=None,
        details={"reason": FAILED_GOLD, "rule": rule, **places},
    )


# --- gold: where and which, drawn per person --------------------------------------------------
GOLD_SALT = "annotation.studies.queue.gold"


@dataclass(frozen=True)
class GoldPlan:
    """One person's gold: the places in their run where gold comes (puzzles done before each,
    ascending) and the study's gold puzzles in the order they are served."""

    places: list[int]
    order: list[int]  # gold puzzle ids

    def puzzles(self) -> list[Puzzle]:
        found = Puzzle.objects.in_bulk(self.order)
        return [found[pk] for pk in self.order if pk in found]


def gold_plan(enrollment: Enrollment) -> GoldPlan:
    """Drawn by a generator seeded with the enrolment under the server's secret: the same on every
    request, device and restart without being stored, different per person, and not computable
    by a participant, so gold is neither at a known place nor the same puzzle for everyone."""
    study = enrollment.study
    golds = sorted(study.gold.values_list("pk", flat=True))
    rng = _drawn_for(enrollment, salt=GOLD_SALT)
    places = gold_places(golds=len(golds), total=study.puzzles_per_annotator + len(golds), rng=rng)
    rng.shuffle(golds)
    return GoldPlan(places=places, order=golds)


def _drawn_for(enrollment: Enrollment, *, salt: str) -> random.Random:
    """A generator of this person's own, seeded by SECRET_KEY and the enrolment: the same on every
    request, device and restart without being stored, and not computable by the person."""
    seed = salted_hmac(salt, f"{enrollment.study_id}:{enrollment.pk}", algorithm="sha256").digest()
    return random.Random(seed)


def gold_places(*, golds: int, total: int, rng: random.Random) -> list[int]:
    """One place drawn inside each of `golds` equal stretches of a run of `total` puzzles, never
    the first: as many golds as before, spread through the run, each at a place of its own."""
    if not golds:
        return []
    first = min(1, total - golds)  # the first place too only when the run is gold alone
    bounds = [first + i * (total - first) // golds for i in range(golds + 1)]
    return [rng.randrange(low, high) for low, high in pairwise(bounds)]


def _gold_due(enrollment: Enrollment, plan: GoldPlan, done: int) -> bool:
    """Whether fewer golds were answered than the places this person's run has reached."""
    if not plan.order:
        return False
    served = Attempt.objects.filter(
        participant=enrollment.participant,
        study=enrollment.study,
        purpose=Attempt.Purpose.GOLD,
        submitted_at__isnull=False,
    ).count()
    return served < sum(1 for place in plan.places if done >= place)


def _next_special(
    enrollment: Enrollment, puzzles: Iterable[Puzzle], purpose: str, position: int | None
) -> Attempt | None:
    """The open attempt on the first practice (or gold) puzzle not yet submitted, made if needed
    at this place of the run (none for practice)."""
    for puzzle in puzzles:
        if puzzle.status == Puzzle.Status.RETIRED:
            continue
        attempts = Attempt.objects.filter(
            participant=enrollment.participant, study=enrollment.study, puzzle=puzzle, purpose=purpose
        )
        if attempts.filter(submitted_at__isnull=False).exists():
            continue
        return attempts.filter(abandoned_at__isnull=True).first() or Attempt.objects.create(
            participant=enrollment.participant,
            puzzle=puzzle,
            study=enrollment.study,
            purpose=purpose,
            position=position,
        )
    return None


def _current(enrollment: Enrollment, now: datetime, position: int) -> Attempt | None:
    """The annotator's unfinished slot, with an open attempt. The place is kept for the hold time
    after its holder last acted on the page: asking for it again, alone, does not keep it (an
    enrolment that never acts cannot hoard places)."""
    slot = (
        Slot.objects.select_for_update(of=("self",))
        .filter(enrollment=enrollment, done=False)
        .exclude(puzzle__status=Puzzle.Status.RETIRED)
        .order_by("assigned_at")
        .first()
    )
    if slot is None:
        return None
    attempt = _open_attempt(enrollment, slot, position)
    hold = timedelta(minutes=enrollment.study.hold_minutes)
    Slot.objects.filter(pk=slot.pk).update(expires_at=_last_activity(attempt) + hold)
    return attempt


# Events a page sends without anyone acting: they show it is open, not that someone is there.
UNATTENDED = ("beat", "load", "visibilitychange", "focus", "focusin", "blur", "resize", Event.REFUSED)


def _last_activity(attempt: Attempt) -> datetime:
    """When the attempt was opened, or when the newest input on it arrived, whichever is later."""
    acted = attempt.events.exclude(kind__in=UNATTENDED)
    newest_ms = acted.order_by("-seq", "-index").values_list("received", flat=True).first()
    if newest_ms is None:
        return attempt.created_at
    return max(attempt.created_at, datetime.fromtimestamp(newest_ms / 1000, tz=UTC))


def _open_attempt(enrollment: Enrollment, slot: Slot, position: int) -> Attempt:
    """The slot's unsubmitted attempt, or a new one (a retry, when the study allows k attempts;
    at the same place of the run, as the place is not done)."""
    mine = slot.attempts.filter(participant=enrollment.participant)
    return mine.filter(submitted_at__isnull=True, abandoned_at__isnull=True).first() or Attempt.objects.create(
        participant=enrollment.participant,
        puzzle_id=slot.puzzle_id,
        study=enrollment.study,
        slot=slot,
        position=position,
    )


def _assign(enrollment: Enrollment, now: datetime, position: int) -> Attempt | None:
    """Take a free slot of a puzzle this annotator has not seen, under a row lock: of the type
    their plan has due if one is free, else any; the first from their place in the order."""
    study = enrollment.study
    preference = run_plan(enrollment).preference(Slot.objects.filter(enrollment=enrollment).count())
    seen = Attempt.objects.filter(participant=enrollment.participant, study=study).values("puzzle_id")
    with transaction.atomic():
        slot = (
            _free_slots(study, now)
            .select_for_update(skip_locked=True, of=("self",))
            .exclude(puzzle_id__in=seen)
            .annotate(**preference)
            .order_by(*preference, "rank", "copy")
            .first()
        )
        if slot is None:
            return None
        if slot.enrollment_id is not None:  # expired: whoever held it loses the unfinished attempt
            Attempt.objects.filter(slot=slot, submitted_at__isnull=True).update(abandoned_at=now)
        slot.enrollment, slot.assigned_at = enrollment, now
        slot.expires_at = now + timedelta(minutes=study.hold_minutes)
        slot.save(update_fields=["enrollment", "assigned_at", "expires_at"])
        return _open_attempt(enrollment, slot, position)


# --- each person's order, balanced over people ------------------------------------------------
ORDER_SALT = "annotation.studies.queue.order"


@dataclass(frozen=True)
class RunPlan:
    """One person's order: the type due at each of their scored places, in turn, and the rank of
    the study's order they start from (puzzles of a type are taken from there, wrapping round)."""

    types: list[str]
    start: int

    def preference(self, taken: int) -> dict[str, Case]:
        """Sort keys for the free slots at this person's next place (`taken` slots taken before):
        the due type first, then ranks from their start on, then the ranks before it."""
        if not self.types:
            return {}
        due = self.types[taken % len(self.types)]
        return {
            "not_due": Case(When(puzzle__type=due, then=Value(0)), default=Value(1), output_field=IntegerField()),
            "wrapped": Case(When(rank__lt=self.start, then=Value(1)), default=Value(0), output_field=IntegerField()),
        }


def run_plan(enrollment: Enrollment) -> RunPlan:
    """The person's order in a shuffled study; the study's own order (no plan) in the others.

    The Latin square's row is the enrolment's turn of joining, so people in turn cover every row
    and each type comes equally often at each place; the start is drawn with a generator seeded
    by the enrolment under the server's secret (as gold_plan), so two people on one row still
    meet different puzzles first."""
    study = enrollment.study
    if study.order != Study.Order.SHUFFLED:
        return RunPlan(types=[], start=0)
    slots = Slot.objects.filter(study=study)
    types = sorted(set(slots.values_list("puzzle__type", flat=True)))
    ranks = (slots.aggregate(top=Max("rank"))["top"] or 0) + 1
    turn = Enrollment.objects.filter(study=study, pk__lt=enrollment.pk).count()
    rows = balanced_latin_square(len(types))
    rng = _drawn_for(enrollment, salt=ORDER_SALT)
    return RunPlan(types=[types[i] for i in rows[turn % len(rows)]] if types else [], start=rng.randrange(ranks))


def balanced_latin_square(n: int) -> list[list[int]]:
    """Williams' design: each of n items once in every row and every column, and each ordered
    pair of neighbours equally often (an odd n needs the rows mirrored too: 2n rows)."""
    if n == 0:
        return [[]]
    first = [(j + 1) // 2 if j % 2 else (n - j // 2) % n for j in range(n)]
    rows = [[(item + shift) % n for item in first] for shift in range(n)]
    return rows + [row[::-1] for row in rows] if n % 2 else rows


def _finish(enrollment: Enrollment, now: datetime) -> None:
    if enrollment.finished_at is None:
        enrollment.finished_at = now
        enrollment.save(update_fields=["finished_at"])


# --- exclusion: the person's places go back to the queue ------------------------------------
def enrollment_places_reopen(*, enrollment: Enrollment, now: datetime) -> dict[str, list[int]]:
    """An excluded person's places, answered or not, go back to the queue: their answers are left
    out of reports, so each place needs someone else's. Their unanswered attempts on them close
    (a late answer cannot take a place back). Returns the places ("reopened") and which of them
    were done ("done"), so including the person again can give back what nobody took since."""
    with transaction.atomic():
        slots = Slot.objects.select_for_update().filter(enrollment=enrollment)
        held = {slot.pk: slot.done for slot in slots}
        Attempt.objects.filter(
            slot_id__in=held, participant_id=enrollment.participant_id, submitted_at__isnull=True
        ).filter(abandoned_at__isnull=True).update(abandoned_at=now)
        Slot.objects.filter(pk__in=held).update(enrollment=None, done=False, assigned_at=None, expires_at=None)
    return {"reopened": sorted(held), "done": sorted(pk for pk, done in held.items() if done)}


def enrollment_places_restore(*, enrollment: Enrollment, done: list[int], now: datetime) -> int:
    """Included again: the places they had answered and nobody has taken since are theirs and
    done again. Returns how many (the others count their answer beside the new holder's)."""
    return Slot.objects.filter(pk__in=done, enrollment__isnull=True, done=False).update(
        enrollment=enrollment, done=True, assigned_at=now, expires_at=None
    )


def study_people_to_recruit(study: Study, *, now: datetime | None = None) -> tuple[int, int]:
    """(free places, people still to recruit for them): the free places less those the people
    still at work will take, in people of `puzzles_per_annotator` each (an exclusion reopens
    places, so this grows again)."""
    now = now or timezone.now()
    free = _free_slots(study, now).count()
    at_work = study.enrollments.filter(excluded=False, finished_at__isnull=True, consented_at__isnull=False)
    will_take = sum(
        max(0, study.puzzles_per_annotator - held)
        for held in at_work.annotate(held=Count("slots")).values_list("held", flat=True)
    )
    left = max(0, free - will_take)
    return free, -(-left // study.puzzles_per_annotator) if study.puzzles_per_annotator else 0
