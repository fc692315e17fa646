"""Setting a study up: its pool of replay-verified puzzles, their order, and the places to fill.

Each study puzzle gets `overlap` places (slots); annotators take them one at a time through
studies.queue.
"""

from __future__ import annotations

import random
from itertools import zip_longest

from django.db import transaction

from annotation.models import Slot, Study
from puzzles.models import Puzzle
from puzzles.registry import type_names


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
) -> Study:
    """A study over the split's replay-verified puzzles (practice and gold excluded from the pool)."""
    names = type_names(types) if types else []  # empty: every type
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
