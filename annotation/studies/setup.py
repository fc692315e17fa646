"""Setting a study up: its pool of replay-verified puzzles, their order, and the places to fill;
then opening, pausing and closing it.

Each study puzzle gets `overlap` places (slots); annotators take them one at a time through
studies.queue.

The pool is drawn per type: N puzzles of each type (or a quota per type), sampled with a
generator seeded by the study's seed and the type's name, so the same set-up draws the same
pool, and no type crowds another out. Without quotas, every replay-verified puzzle of the types.

A study is made as a draft (editable, nobody joins) or open; staff open, pause and close it
(`study_set_status`, logged). Only an open study takes people and hands out new puzzles.

A study on puzzles whose truth is public (imported from a published dataset) can be solved by
lookup: `public_truth_warning` says so at set-up, the staff list marks such studies, and the
report states it (reporting/reports.py).

A study draws on one dataset (the generated bank, or one import) when it is given one; without,
on every dataset of its split, and a pool that mixes several is never silent:
`mixed_datasets_warning` names them at set-up, and the report lists them (and can keep to one).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any
from urllib.parse import quote

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Field, Q, QuerySet

from annotation.live.solvable import SolvableRule, solvable_only
from annotation.models import AuditLog, Enrollment, Slot, Study
from annotation.reporting.wording import public_truth_line
from annotation.studies.study_settings import CODES, DETAILS, RULES, STANDARD_CONSENT
from puzzles.hosted_names import split_hosted_type
from puzzles.models import Puzzle
from puzzles.registry import type_names
from puzzles.selectors import dataset_counts, datasets_line

# DETAILS: what a study says to people and where it sends them, editable at any time
# (study_details_update); RULES: its plain rules, set while a draft. Both declared in study_settings.
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete?cc={code}"
# Which status may follow which: a draft opens; an open study pauses or closes; a paused one opens
# again or closes; a closed one may reopen (a draft may be dropped by closing it).
TRANSITIONS: dict[str, tuple[str, ...]] = {  # by Study.status
    Study.Status.DRAFT: (Study.Status.OPEN, Study.Status.CLOSED),
    Study.Status.OPEN: (Study.Status.PAUSED, Study.Status.CLOSED),
    Study.Status.PAUSED: (Study.Status.OPEN, Study.Status.CLOSED),
    Study.Status.CLOSED: (Study.Status.OPEN,),
}
LAUNCHED = (Study.Status.OPEN, Study.Status.PAUSED)  # Study.is_open: the dashboard watches these


class StudySetupError(ValueError):
    """A study that cannot be created as asked; the message says why."""


def study_create(*, name: str, status: str = Study.Status.OPEN, **setup: Any) -> Study:
    """A study over the split's replay-verified puzzles (practice and gold excluded from the pool),
    of one dataset, or of every dataset of the split when none is given; setup: study_setup's
    keywords."""
    drawn = study_setup(**setup)
    with transaction.atomic():
        study = Study.objects.create(name=name, status=status, is_open=status in LAUNCHED, **drawn.fields)
        drawn.fill(study)
    return study


def study_update(study: Study, *, name: str | None = None, **setup: Any) -> Study:
    """Set a draft study up again: every setting (study_setup's keywords), its pool drawn anew
    (nobody has joined a draft); its name when given."""
    drawn = study_setup(**setup)
    fields = drawn.fields | ({"name": name} if name is not None else {})
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.status != Study.Status.DRAFT:
            raise StudySetupError(f"only a draft's pool can change; this study is {locked.get_status_display()}")
        for field, value in fields.items():
            setattr(locked, field, value)
        locked.save(update_fields=list(fields))
        Slot.objects.filter(study=locked).delete()
        drawn.fill(locked)
    return locked


def study_setup(
    *,
    types: list[str] | None = None,
    quotas: Mapping[str, int] | None = None,
    per_type: int | None = None,
    practice: Sequence[Puzzle] = (),
    gold: Sequence[Puzzle] = (),
    dataset: str | None = None,
    people_solvable: SolvableRule | None = None,
    **settings: Any,
) -> Drawn:
    """A study's settings checked and its pool drawn, or StudySetupError saying why not.

    per_type: N puzzles of each type; quotas: a number per type (over per_type; 0 leaves a type
    out). Either draws by seeded sampling (pool_draw). settings: RULES (split and
    puzzles_per_annotator needed, any other left out at the Study field's default) and DETAILS.
    people_solvable: draw only puzzles people solved by that rule (annotation/live/solvable.py)."""
    rules = _rules(settings)
    details = {key: value for key, value in settings.items() if key not in RULES}
    _check_details(details)
    _check_attempts(attempts_per_puzzle=rules["attempts_per_puzzle"], show_verdict=rules["show_verdict"])
    _check_gold_rule(screen_out_at=rules["gold_screen_out_at"], golds=len(gold))
    names, drawn_quotas, pool = _pool(
        split=rules["split"],
        dataset=dataset,
        people_solvable=people_solvable,
        types=types,
        quotas=quotas,
        per_type=per_type,
        seed=rules["seed"],
        special=[*practice, *gold],
        puzzles_per_annotator=rules["puzzles_per_annotator"],
    )
    fields = {**rules, "dataset": dataset or "", "types": names, "quotas": drawn_quotas, **details}
    fields["people_solvable"] = people_solvable.spec if people_solvable else ""
    return Drawn(fields=fields, pool=pool, practice=list(practice), gold=list(gold))


def _rules(given: Mapping[str, Any]) -> dict[str, Any]:
    """RULES as given, each left out at its Study field's default; a TypeError names those without one."""
    fields = {name: _study_field(name) for name in RULES}
    optional = {name for name, field in fields.items() if field.has_default() or field.null}
    missing = [name for name in RULES if name not in given and name not in optional]
    if missing:
        raise TypeError(f"missing study settings: {', '.join(missing)}")
    return {name: given[name] if name in given else field.get_default() for name, field in fields.items()}


def _study_field(name: str) -> Field[Any, Any]:
    field = Study._meta.get_field(name)
    if not isinstance(field, Field):  # a setting is a column of Study, never a relation's other end
        raise TypeError(f"{name} is not a column of Study")
    return field


@dataclass(frozen=True)
class Drawn:
    """A study's set-up as study_setup checked it: its own fields, and its pool, practice and gold
    to fill it with."""

    fields: dict[str, Any]
    pool: list[Puzzle]
    practice: list[Puzzle]
    gold: list[Puzzle]

    def fill(self, study: Study) -> None:
        """Practice, gold, and `overlap` places per pool puzzle, in the study's order."""
        study.practice.set(self.practice)
        study.gold.set(self.gold)
        Slot.objects.bulk_create(
            Slot(study=study, puzzle=puzzle, copy=copy, rank=rank)
            for rank, puzzle in enumerate(ranked(self.pool, order=study.order, seed=study.seed))
            for copy in range(study.overlap)
        )


def study_details_update(study: Study, *, name: str | None = None, **details: Any) -> Study:
    """Change what a study says and where it sends people (any status): its name and DETAILS."""
    _check_details(details)
    fields = {**details, **({"name": name} if name is not None else {})}
    for field, value in fields.items():
        setattr(study, field, value)
    study.save(update_fields=list(fields))
    return study


def _check_details(details: Mapping[str, object]) -> None:
    unknown = set(details) - set(DETAILS)
    if unknown:
        raise TypeError(f"unknown study settings: {', '.join(sorted(unknown))}")
    codes = {name: str(details[name]).strip() for name in CODES if name in details}
    empty = [name for name, code in codes.items() if not code]
    if empty:
        raise StudySetupError(f"a code must not be empty: {', '.join(empty)}")
    finishing = codes.get("completion_code")
    # Another way out with the finishing code would be paid as a finished study on the platform.
    same = [name for name, code in codes.items() if name != "completion_code" and code == finishing]
    if same:
        raise StudySetupError(f"the completion code is for people who finish; give {', '.join(same)} another")


RETRIES_NEED_VERDICTS = (
    "More than one attempt per puzzle needs verdicts shown: a retry comes only after a wrong answer, so "
    "offering one with verdicts hidden tells people they were wrong (show verdicts, or allow 1 attempt)."
)


def retries_tell_the_verdict(*, attempts_per_puzzle: int, show_verdict: bool) -> bool:
    """Whether a set-up would offer retries with verdicts hidden (see Study.attempts_allowed)."""
    return attempts_per_puzzle > 1 and not show_verdict


def _check_attempts(*, attempts_per_puzzle: int, show_verdict: bool) -> None:
    if retries_tell_the_verdict(attempts_per_puzzle=attempts_per_puzzle, show_verdict=show_verdict):
        raise StudySetupError(RETRIES_NEED_VERDICTS)


def _check_gold_rule(*, screen_out_at: int | None, golds: int) -> None:
    """A gold rule that could never be met would promise a screening that never comes."""
    if screen_out_at is not None and screen_out_at > golds:
        raise StudySetupError(
            f"screening out at {screen_out_at} wrong gold answers needs at least {screen_out_at} gold puzzles; "
            f"the study has {golds}"
        )


def _pool(
    *,
    split: str,
    dataset: str | None,
    people_solvable: SolvableRule | None,
    types: list[str] | None,
    quotas: Mapping[str, int] | None,
    per_type: int | None,
    seed: int,
    special: list[Puzzle],
    puzzles_per_annotator: int,
) -> tuple[list[str], dict[str, int], list[Puzzle]]:
    """The study's type names, its quotas as drawn ({} without), and its pool."""
    unverified = [p.uid for p in special if p.status != Puzzle.Status.VERIFIED]
    if unverified:
        raise StudySetupError(f"practice and gold puzzles must be replay-verified: {', '.join(unverified)}")
    overlap = {p.uid for p in practice_and_gold_overlap(special)}
    if overlap:
        raise StudySetupError(f"a puzzle is either practice or gold, not both: {', '.join(sorted(overlap))}")
    names = _type_names(list(types)) if types else []  # empty: every type
    verified = Puzzle.objects.filter(split=split, status=Puzzle.Status.VERIFIED).exclude(pk__in=[p.pk for p in special])
    if names:
        verified = verified.filter(type__in=names)
    chosen = solvable_only(verified.filter(dataset=dataset) if dataset else verified, people_solvable)
    drawing = quotas is not None or per_type is not None
    try:
        pool, drawn = pool_draw(chosen, names=names, quotas=quotas or {}, per_type=per_type, seed=seed)
    except StudySetupError as short:  # say that the rule narrowed the candidates
        raise StudySetupError(
            f"{short}; people-solvable only: {people_solvable}" if people_solvable else str(short)
        ) from None
    if not pool:
        of = f" of dataset {dataset!r}" if dataset else ""
        of += f" {people_solvable} (people-solvable)" if people_solvable else ""
        raise StudySetupError(
            f"no replay-verified puzzles{of} in split {split!r} for those types "
            f"(its datasets: {datasets_line(dataset_counts(verified))})"
        )
    if puzzles_per_annotator > len(pool):
        raise StudySetupError(f"{puzzles_per_annotator} puzzles per annotator, but only {len(pool)} in the pool")
    if drawing:
        names = sorted(drawn)
    return names, (drawn if drawing else {}), pool


def _type_names(types: list[str]) -> list[str]:
    """Our types by their canonical names (the bank's registry), a hosted benchmark's families
    (`<benchmark>:<Family>`, docs/hosted.md) as they are: a study may mix them."""
    ours = [name for name in types if split_hosted_type(name) is None]
    hosted = [name for name in types if split_hosted_type(name) is not None]
    return (type_names(ours) if ours else []) + hosted


def practice_and_gold_overlap(special: list[Puzzle]) -> set[Puzzle]:
    """Puzzles given twice among practice and gold (as both)."""
    seen: set[int] = set()
    twice = set()
    for puzzle in special:
        if puzzle.pk in seen:
            twice.add(puzzle)
        seen.add(puzzle.pk)
    return twice


def pool_draw(
    candidates: QuerySet[Puzzle], *, names: list[str], quotas: Mapping[str, int], per_type: int | None, seed: int
) -> tuple[list[Puzzle], dict[str, int]]:
    """The pool: per type (names, or every type when empty), its quota (quotas[type], else
    per_type; None: all of its puzzles; 0: none), drawn from the type's candidates by a generator
    seeded with (seed, type): the same set-up draws the same pool, and every type gets its own
    share. Returns the pool and what was drawn per type. A type short of its quota is a
    StudySetupError naming each such type."""
    by_type: dict[str, list[Puzzle]] = {}
    for puzzle in candidates.order_by("type", "dataset", "index", "source_id", "pk"):
        by_type.setdefault(puzzle.type, []).append(puzzle)
    pool: list[Puzzle] = []
    drawn: dict[str, int] = {}
    short = []
    for name in names or sorted(set(by_type) | {name for name, n in quotas.items() if n}):
        available = by_type.get(name, [])
        want = quotas.get(name, per_type)
        if want is None:
            want = len(available)
        if want <= 0:
            continue
        if want > len(available):
            short.append(f"{name} has {len(available)} (asked {want})")
            continue
        pool += random.Random(f"{seed}:{name}").sample(available, want)
        drawn[name] = want
    if short:
        raise StudySetupError(f"too few replay-verified puzzles for the quota: {'; '.join(short)}")
    return pool, drawn


# --- opening, pausing, closing ----------------------------------------------------------------
def study_set_status(study: Study, status: str, *, by: User) -> Study:
    """Open, pause or close a study (TRANSITIONS), logged. A paused or closed study takes nobody
    new and hands out no new puzzle; what people did stays."""
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        before = locked.status
        if status not in TRANSITIONS.get(before, ()):
            raise StudySetupError(f"a {locked.get_status_display()} study cannot become {status}")
        locked.status, locked.is_open = status, status in LAUNCHED
        locked.save(update_fields=["status", "is_open"])
        AuditLog.objects.create(
            action=AuditLog.Action.STUDY_STATUS, study=locked, by=by, details={"from": before, "to": status}
        )
    return locked


# --- what a study needs, and how far it is ----------------------------------------------------
@dataclass(frozen=True)
class Staffing:
    """What a pool needs: places (pool x overlap), and the people who fill them, per_person each."""

    pool: int
    overlap: int
    per_person: int

    @property
    def places(self) -> int:
        return self.pool * self.overlap

    @property
    def people_needed(self) -> int:
        """People to recruit so every place is filled (the last may find fewer than per_person)."""
        return math.ceil(self.places / self.per_person) if self.per_person else 0

    @property
    def last_person_gets(self) -> int:
        """Puzzles the last person finds when places do not divide evenly; 0 when they do."""
        return self.places % self.per_person if self.per_person else 0

    def advice(self) -> str | None:
        """What staff should know when the numbers do not fit together; None when they do."""
        if self.last_person_gets:
            return (
                f"{self.places} places do not divide into {self.per_person} per person: person "
                f"{self.people_needed} would find only {self.last_person_gets} and then wait. Recruit "
                f"{self.people_needed - 1}, or choose numbers that divide evenly"
            )
        return None


@dataclass(frozen=True)
class Progress:
    """How far a study is: places answered of the places that count (retired puzzles' left
    out), and people finished of the people it needs."""

    places: int
    places_done: int
    people_needed: int
    enrolled: int
    finished: int  # and not excluded

    @property
    def share(self) -> float:
        return self.places_done / self.places if self.places else 0.0

    @property
    def percent(self) -> int:
        return math.floor(100 * self.share)

    @property
    def complete(self) -> bool:
        return self.places > 0 and self.places_done >= self.places


def study_staffing(study: Study) -> Staffing:
    pool = Slot.objects.filter(study=study).values("puzzle_id").distinct().count()
    return Staffing(pool=pool, overlap=study.overlap, per_person=study.puzzles_per_annotator)


def study_progress(studies: list[Study]) -> dict[int, Progress]:
    """Progress per study, in two grouped queries whatever the count."""
    ids = [s.pk for s in studies]
    counted = Q(slots__puzzle__status__in=[Puzzle.Status.VERIFIED, Puzzle.Status.DRAFT, Puzzle.Status.FAILED])
    slots = {
        row["pk"]: row
        for row in Study.objects.filter(pk__in=ids)
        .values("pk")
        .annotate(
            places=Count("slots", filter=counted),
            done=Count("slots", filter=counted & Q(slots__done=True)),
            pool=Count("slots__puzzle", filter=counted, distinct=True),
        )
    }
    people = {
        row["study_id"]: row
        for row in Enrollment.objects.filter(study_id__in=ids)
        .values("study_id")
        .annotate(
            enrolled=Count("id"),
            # An excluded person's work is left out and their places reopened: not one of those finished.
            finished=Count("id", filter=Q(finished_at__isnull=False, excluded=False)),
        )
    }
    found = {}
    for study in studies:
        row, who = slots.get(study.pk, {}), people.get(study.pk, {})
        staffing = Staffing(pool=row.get("pool", 0), overlap=study.overlap, per_person=study.puzzles_per_annotator)
        found[study.pk] = Progress(
            places=row.get("places", 0),
            places_done=row.get("done", 0),
            people_needed=staffing.people_needed,
            enrolled=who.get("enrolled", 0),
            finished=who.get("finished", 0),
        )
    return found


def completion_url(study: Study, crowd: Mapping[str, str], *, code: str = "completion_code") -> str | None:
    """Where someone leaving by this way out (a code's name, CODES) goes: for finishing, the
    study's return URL; else Prolific's completion URL with that code when they came from
    Prolific; None when neither."""
    if code == "completion_code" and study.return_url:
        return study.return_url
    if crowd.get("PROLIFIC_PID"):
        return prolific_completion_url(study, code=code)
    return None


def prolific_completion_url(study: Study, *, code: str = "completion_code") -> str:
    return PROLIFIC_COMPLETE.format(code=quote(getattr(study, code), safe=""))


def public_truth_counts(study_ids: list[int]) -> dict[int, int]:
    """Per study, its puzzles (pool, practice, gold) whose answers are published."""
    counts: dict[int, int] = {
        row["study_id"]: row["n"]
        for row in Slot.objects.filter(study_id__in=study_ids, puzzle__truth_public=True)
        .values("study_id")
        .annotate(n=Count("puzzle_id", distinct=True))
    }
    # Practice and gold are few and never in the pool, but may share a puzzle: count it once.
    special: set[tuple[int, int]] = set()
    for through in (Study.practice.through, Study.gold.through):
        rows = through.objects.filter(study_id__in=study_ids, puzzle__truth_public=True)
        special |= set(rows.values_list("study_id", "puzzle_id"))
    for study_id, _ in special:
        counts[study_id] = counts.get(study_id, 0) + 1
    return counts


def study_datasets(study: Study) -> dict[str, int]:
    """The datasets a study's pool draws on, with its puzzles in each."""
    return dataset_counts(Puzzle.objects.filter(pk__in=Slot.objects.filter(study=study).values("puzzle_id")))


def mixed_datasets_warning(study: Study) -> str | None:
    """What staff must know when a pool mixes datasets (the bank and imports, or two imports); None if it does not."""
    datasets = study_datasets(study)
    if len(datasets) < 2:
        return None
    return (
        f"Its pool mixes {len(datasets)} datasets: {datasets_line(datasets)}. Results on them are counted together; "
        "the report lists each, and `report --dataset` keeps to one. Choose a dataset to keep them apart."
    )


def public_truth_warning(study: Study) -> str | None:
    """What staff must know before inviting anyone: some answers are a lookup away. None if none are."""
    return public_truth_line(public_truth_counts([study.pk]).get(study.pk, 0))


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


# --- the consent page ---------------------------------------------------------------------------
def consent_paragraphs(study: Study) -> list[str]:
    """The study's consent text (or the standard one), one paragraph per blank-line-separated block."""
    text = study.consent_text.strip() or STANDARD_CONSENT
    return [" ".join(block.split()) for block in text.replace("\r\n", "\n").split("\n\n") if block.strip()]
