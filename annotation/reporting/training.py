"""Training runs in a study report: each environment run is one checkpoint of its trainer, its
episodes' success per type beside people's Pass@1 (docs/reports.md "Training runs"), and the
report's puzzles trained on (`contamination`).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from annotation.models import AgentRun, Rollout
from annotation.reporting.people import Answer
from annotation.reporting.report_types import (
    Contamination,
    TrainingCheckpoint,
    TrainingSection,
    TrainingType,
    TypeRow,
)
from annotation.reporting.stats import mean_of_present

# A puzzle is trained on once a training environment episode played it: the episode is a rollout
# of an environment run (docs/environment.md, "Contamination"; annotation/environment/contamination.py
# asks the same of an evaluation run). Lazy: each use is a subquery.
TRAINED_ON = Rollout.objects.filter(run__source=AgentRun.Source.ENVIRONMENT)


def training_section(datasets: list[str], people: list[TypeRow]) -> TrainingSection:
    """Each environment run on puzzles of these datasets (any split: trainers draw from train)
    as one checkpoint of its client: its success per type beside people's Pass@1 on the type."""
    people_pass1 = {row["type"]: row["pass1"] for row in people}
    episodes = TRAINED_ON.filter(puzzle__dataset__in=datasets).exclude(status=Rollout.Status.PENDING)
    tally: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    failed: Counter[int] = Counter()
    for run_id, kind, status, correct in episodes.values_list("run_id", "puzzle__type", "status", "correct"):
        if status == Rollout.Status.FAILED:
            failed[run_id] += 1
        else:
            tally[run_id][kind][0] += 1
            tally[run_id][kind][1] += bool(correct)
    runs = AgentRun.objects.filter(pk__in=set(tally) | set(failed)).order_by("started_at", "pk")
    clients: dict[str, list[TrainingCheckpoint]] = {}
    for run in runs:
        point = _checkpoint(run, tally[run.pk], failed[run.pk], people_pass1)
        clients.setdefault(run.settings["client"], []).append(point)
    return {
        "datasets": datasets,
        "clients": [{"client": name, "checkpoints": points} for name, points in sorted(clients.items())],
    }


def _checkpoint(
    run: AgentRun, by_type: dict[str, list[int]], failed: int, people_pass1: dict[str, float | None]
) -> TrainingCheckpoint:
    """One environment run's episodes that ended: success per type and over types, and people's
    mean Pass@1 over the types both have (so that the human line compares like with like)."""
    types: list[TrainingType] = [
        {
            "type": kind,
            "episodes": n,
            "solved": solved,
            "success": solved / n,
            "people_pass1": people_pass1.get(kind),  # a type people did not answer here: None
        }
        for kind, (n, solved) in sorted(by_type.items())
    ]
    episodes, solved = sum(n for n, _ in by_type.values()), sum(s for _, s in by_type.values())
    both = [row for row in types if row["people_pass1"] is not None]
    return {
        "checkpoint": run.settings["checkpoint"],
        "name": run.name,
        "run": run.pk,
        "started_at": run.started_at.isoformat(timespec="seconds") if run.started_at else None,
        "episodes": episodes,
        "solved": solved,
        "failed": failed,
        "success_pooled": solved / episodes if episodes else None,
        "mean_success_over_types": mean_of_present([row["success"] for row in types]),
        "people_mean_pass1": mean_of_present([row["people_pass1"] for row in both]),
        "types": types,
    }


def contamination(pool: int, trained: dict[int, str], answers: list[Answer], excluded: bool) -> Contamination:
    """How many of the report's puzzles were trained on, per type, people's answers on them and the
    environment runs that played them."""
    # order_by() first: Rollout's default ordering would join the DISTINCT and repeat each run.
    runs = TRAINED_ON.filter(puzzle_id__in=trained).order_by().values_list("run__name", flat=True).distinct()
    return {
        "pool": pool,
        "trained": len(trained),
        "by_type": dict(sorted(Counter(trained.values()).items())),
        "people_answers": sum(a["submitted"] and a["puzzle"] in trained for a in answers),
        "runs": sorted(runs),
        "excluded": excluded,
    }
