"""Chance rates of stored puzzles: what a blind guess scores (each type's `chance_rate` hook,
puzzles/types/base.py; bench/chance.py checks the hooks by guessing).

A puzzle's rate is worked out from its truth and masks on the server; only the number leaves. It
is kept on the puzzle once worked out (`Puzzle.chance_rate`; NOTHING_TO_GUESS for a type with
nothing to guess), so a report over 4,000 puzzles reads a column rather than decoding every
mask; a truth correction clears it.
A type's rate is the mean over its puzzles (the guess is per puzzle, the same weight each, as
Pass@1 counts puzzles). A hosted family (docs/hosted.md) has none: its answer space is another
server's.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import TypedDict

from puzzles.models import Puzzle, masks_from_bytes
from puzzles.registry import registry


class TypeChance(TypedDict):
    rate: float | None  # mean over the puzzles; None when the type has nothing to guess
    puzzles: int  # puzzles the mean is over
    rule: str  # the guess, in words (the type's chance_rule)


NOTHING_TO_GUESS = -1.0  # kept for a puzzle with nothing to guess (null is "not worked out yet")


def chance_rates(puzzle_ids: Iterable[int]) -> dict[int, float | None]:
    """Each puzzle's chance rate by id (None: nothing to guess, or not one of our types): as kept,
    the missing ones worked out and kept."""
    kept = dict(Puzzle.objects.filter(pk__in=list(puzzle_ids)).values_list("pk", "chance_rate"))
    missing = [pk for pk, rate in kept.items() if rate is None]
    if missing:
        worked = _work_out(missing)
        Puzzle.objects.bulk_update(
            [Puzzle(pk=pk, chance_rate=rate) for pk, rate in worked.items()], ["chance_rate"], batch_size=500
        )
        kept.update(worked)
    return {pk: None if rate == NOTHING_TO_GUESS else rate for pk, rate in kept.items()}


def _work_out(puzzle_ids: list[int]) -> dict[int, float]:
    """The rates from each puzzle's truth and masks (NOTHING_TO_GUESS where there is none)."""
    known = registry()
    out: dict[int, float] = {}
    rows = Puzzle.objects.filter(pk__in=puzzle_ids).values_list("pk", "type", "truth", "masks")
    for pk, type_name, truth, masks in rows.iterator(chunk_size=500):
        rate = None
        if type_name in known:
            rate = known.get(type_name).chance_rate(truth, masks_from_bytes(bytes(masks or b"")))
        out[pk] = NOTHING_TO_GUESS if rate is None else rate
    return out


def type_chance(rates: dict[int, float | None], types: dict[int, str]) -> dict[str, TypeChance]:
    """Per type (types: puzzle id -> type), the mean of its puzzles' rates and the rule."""
    by_type: dict[str, list[float | None]] = defaultdict(list)
    for pk, rate in rates.items():
        by_type[types[pk]].append(rate)
    known = registry()
    out: dict[str, TypeChance] = {}
    for name, values in sorted(by_type.items()):
        numbers = [v for v in values if v is not None]
        rule = known.get(name).chance_rule if name in known else "none: a hosted family's answers are its server's"
        out[name] = {"rate": statistics.fmean(numbers) if numbers else None, "puzzles": len(numbers), "rule": rule}
    return out


def chance_rules() -> dict[str, str]:
    """Every type's guess, in words (for a file's rules)."""
    return {t.name: t.chance_rule for t in registry().all()}
