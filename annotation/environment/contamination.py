"""Contamination: a puzzle is trained on once an environment episode played it.

The mark is derived, not stored: a rollout of an AgentRun whose source is "environment" names its
puzzle, so any evaluation (an `agent run`, a study) can tell which of its puzzles a trainer saw,
by which run (client and checkpoint) and since when. The study report derives the same mark from
the same field (annotation/reporting/training.py, TRAINED_ON), since reporting does not import this
domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Min

from annotation.models import AgentRun, Rollout


@dataclass(frozen=True)
class TrainedOn:
    puzzle_id: int
    runs: tuple[str, ...]  # the environment runs that played it
    first: datetime | None  # its first training episode


def trained_on(puzzle_ids: list[int]) -> dict[int, TrainedOn]:
    """Of these puzzles, the ones an environment episode played, with the runs and the first time."""
    rows = (
        Rollout.objects.filter(puzzle_id__in=puzzle_ids, run__source=AgentRun.Source.ENVIRONMENT)
        .values("puzzle_id", "run__name")
        .annotate(first=Min("started_at"))
    )
    found: dict[int, list[tuple[str, datetime | None]]] = {}
    for row in rows:
        found.setdefault(row["puzzle_id"], []).append((row["run__name"], row["first"]))
    return {
        puzzle_id: TrainedOn(
            puzzle_id,
            tuple(sorted(name for name, _ in seen)),
            min((when for _, when in seen if when is not None), default=None),
        )
        for puzzle_id, seen in found.items()
    }


def run_contamination(run: AgentRun) -> tuple[int, dict[int, TrainedOn]]:
    """An evaluation run's puzzle count and those of its puzzles trained on, before or during it."""
    # order_by(): the default ordering (run, puzzle, index) would join the DISTINCT, one row a rollout.
    puzzle_ids = list(run.rollouts.order_by().values_list("puzzle_id", flat=True).distinct())
    return len(puzzle_ids), trained_on(puzzle_ids)
