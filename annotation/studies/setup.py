"""Setting a study up: its pool of replay-verified puzzles, their order, and the places to fill.

Each study puzzle gets `overlap` places (slots); annotators take them one at a time through
studies.queue.

A study on puzzles whose truth is public (imported from a published dataset) can be solved by
lookup: `public_truth_warning` says so at set-up, the staff list marks such studies, and the
report states it (reporting/reports.py).

A study draws on one dataset (the generated bank, or one import) when it is given one; without,
on every dataset of its split, and a pool that mixes several is never silent:
`mixed_datasets_warning` names them at set-up, and the report lists them (and can keep to one).
"""

from __future__ import annotations

import random
from itertools import zip_longest

from django.db import transaction
from django.db.models import Count

from annotation.models import Slot, Study
from annotation.reporting.wording import public_truth_line
from puzzles.models import Puzzle
from puzzles.registry import type_names
from puzzles.selectors import dataset_counts, datasets_line


class StudySetupError(ValueError):
    """A study that cannot be created as asked; the message says why."""


def study_create(
    *,
    name: str,
    split: str,
    puzzles_per_annotator: int,
    overlap: int = 1,
    types: list[str] | None = None,
    order: str = Study.Order.SHUFFLED,
    seed: int = 0,
    show_verdict: bool = False,
    time_limit_s: int | None = None,
    attempts_per_puzzle: int = 1,
    practice: list[Puzzle] = (),
    gold: list[Puzzle] = (),
    pool_size: int | None = None,
    require_crowd_id: bool = False,
    dataset: str | None = None,
) -> Study:
    """A study over the split's replay-verified puzzles (practice and gold excluded from the pool),
    of one dataset, or of every dataset of the split when none is given."""
    names = type_names(types) if types else []  # empty: every type
    special = [*practice, *gold]
    unverified = [p.uid for p in special if p.status != Puzzle.Status.VERIFIED]
    if unverified:
        raise StudySetupError(f"practice and gold puzzles must be replay-verified: {', '.join(unverified)}")
    verified = Puzzle.objects.filter(split=split, status=Puzzle.Status.VERIFIED).exclude(pk__in=[p.pk for p in special])
    if names:
        verified = verified.filter(type__in=names)
    chosen = verified.filter(dataset=dataset) if dataset else verified
    pool = list(chosen.order_by("type", "index", "source_id")[:pool_size])
    if not pool:
        of = f" of dataset {dataset!r}" if dataset else ""
        raise StudySetupError(
            f"no replay-verified puzzles{of} in split {split!r} for those types "
            f"(its datasets: {datasets_line(dataset_counts(verified))})"
        )
    if puzzles_per_annotator > len(pool):
        raise StudySetupError(f"{puzzles_per_annotator} puzzles per annotator, but only {len(pool)} in the pool")
    with transaction.atomic():
        study = Study.objects.create(
            name=name,
            split=split,
            types=names,
            puzzles_per_annotator=puzzles_per_annotator,
            overlap=overlap,
            order=order,
            seed=seed,
            show_verdict=show_verdict,
            time_limit_s=time_limit_s,
            attempts_per_puzzle=attempts_per_puzzle,
            require_crowd_id=require_crowd_id,
        )
        study.practice.set(practice)
        study.gold.set(gold)
        Slot.objects.bulk_create(
            Slot(study=study, puzzle=puzzle, copy=copy, rank=rank)
            for rank, puzzle in enumerate(ranked(pool, order=order, seed=seed))
            for copy in range(overlap)
        )
    return study


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
