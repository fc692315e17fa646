"""People-solvable puzzles: how many people solved a puzzle, within how many attempts each, and a
rule over those counts. ARC-AGI-2 keeps a task only if at least 2 people solved it within 2
attempts (`ARC_AGI_2`); any rule "N:K" (at least N people within K attempts each) may be asked.

People are counted as the labels count them (annotation/datasets/labels.py): human participants'
scored or gold attempts made in a study (in one study, when given), annotators excluded from that
study left out, each person once per puzzle. A person *tried* a puzzle when their first attempt
on it was submitted with input evidence (the labels' answers); of those, they *solved it within K
attempts* when one of their first K attempts on it, in the order made, was correct with input
evidence. A study offers a retry only after a wrong answer (Study.attempts_per_puzzle), so K
above 1 counts only where retries were offered.

Here in live/, beside the attempts it reads, because every place that draws puzzles filters by
it: a study's set-up, an agent run and the training environment's reset.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from annotation.models import Attempt, Enrollment, Participant
from puzzles.models import Puzzle

_RULE = re.compile(r"\s*([0-9]{1,4})\s*:\s*([0-9]{1,3})\s*")


@dataclass(frozen=True)
class SolvableRule:
    """At least `people` people solved it, each within `attempts` attempts."""

    people: int
    attempts: int

    def __str__(self) -> str:
        return f"solved by at least {self.people} people within {self.attempts} attempts each"

    @property
    def spec(self) -> str:
        """The rule as the command line and the files write it: "2:2"."""
        return f"{self.people}:{self.attempts}"

    @classmethod
    def parse(cls, text: str) -> SolvableRule:
        """ "N:K" (at least N people within K attempts each); ValueError saying why not."""
        found = _RULE.fullmatch(text or "")
        if not found:
            raise ValueError(f"people-solvable rule {text!r}: write PEOPLE:ATTEMPTS, e.g. 2:2 (ARC-AGI-2's)")
        people, attempts = int(found[1]), int(found[2])
        if people < 1 or attempts < 1:
            raise ValueError(f"people-solvable rule {text!r}: at least 1 person within at least 1 attempt")
        return cls(people=people, attempts=attempts)


ARC_AGI_2 = SolvableRule(people=2, attempts=2)


@dataclass(frozen=True)
class Solved:
    """One puzzle's people: `solved` of `tried` solved it within `within` attempts each."""

    solved: int
    tried: int
    within: int

    def passes(self, rule: SolvableRule) -> bool:
        if rule.attempts != self.within:
            raise ValueError(f"counted within {self.within} attempts, the rule asks {rule.attempts}")
        return self.solved >= rule.people


def people_solved(
    puzzle_ids: Iterable[int], *, within: int, study_ids: Collection[int] | None = None
) -> dict[int, Solved]:
    """Per puzzle of puzzle_ids (every one, 0 of 0 when nobody tried it), people's counts: in
    these studies only, when given."""
    ids = list(puzzle_ids)
    excluded = set(Enrollment.objects.filter(excluded=True).values_list("study_id", "participant_id"))
    attempts = Attempt.objects.filter(
        puzzle_id__in=ids,
        participant__kind=Participant.Kind.HUMAN,
        study__isnull=False,
        purpose__in=[Attempt.Purpose.SCORED, Attempt.Purpose.GOLD],
    )
    if study_ids is not None:
        attempts = attempts.filter(study_id__in=list(study_ids))
    runs: dict[tuple[int, int], list[tuple[bool, bool]]] = defaultdict(list)  # (puzzle, person) -> attempts
    rows = attempts.order_by("created_at", "pk").values_list(
        "puzzle_id", "participant_id", "study_id", "submitted_at", "correct", "input_ok"
    )
    for puzzle, person, study, submitted_at, correct, input_ok in rows.iterator(chunk_size=5000):
        if (study, person) in excluded:
            continue
        answered = submitted_at is not None and input_ok is not False
        runs[(puzzle, person)].append((answered, answered and bool(correct)))
    tried: dict[int, int] = defaultdict(int)
    solved: dict[int, int] = defaultdict(int)
    for (puzzle, _), made in runs.items():
        if made[0][0]:  # the first attempt is an answer: the person tried it
            tried[puzzle] += 1
            solved[puzzle] += any(right for _, right in made[:within])
    return {pk: Solved(solved=solved.get(pk, 0), tried=tried.get(pk, 0), within=within) for pk in ids}


def solvable_ids(puzzle_ids: Iterable[int], rule: SolvableRule) -> set[int]:
    """The puzzles of puzzle_ids the rule keeps, over every study's people."""
    counts = people_solved(puzzle_ids, within=rule.attempts)
    return {pk for pk, solved in counts.items() if solved.passes(rule)}


def solvable_selection(ids: list[int], rule: SolvableRule, *, per_type: int | None = None) -> list[int]:
    """The ids the rule keeps, in their order, then the first per_type of each type (all when
    None): the rule narrows the candidates before a per-type count is taken (`agent run`)."""
    solvable = solvable_ids(ids, rule)
    kept = [pk for pk in ids if pk in solvable]
    if per_type is None:
        return kept
    types = dict(Puzzle.objects.filter(pk__in=kept).values_list("pk", "type"))
    taken: Counter[str] = Counter()
    chosen = []
    for pk in kept:
        taken[types[pk]] += 1
        if taken[types[pk]] <= per_type:
            chosen.append(pk)
    return chosen


def solvable_only(puzzles: QuerySet[Puzzle], rule: SolvableRule | None) -> QuerySet[Puzzle]:
    """The puzzles the rule keeps, over every study's people (None: all of them): the filter each
    place that draws puzzles applies."""
    if rule is None:
        return puzzles
    return puzzles.filter(pk__in=solvable_ids(puzzles.values_list("pk", flat=True), rule))
