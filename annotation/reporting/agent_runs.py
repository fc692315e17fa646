"""Agent runs in a study report: each run's Pass@k on the report's puzzles from exactly k rollouts
per puzzle (harness, imported and environment runs alike), people against each run paired by
puzzle (`versus`, intervals clustered by person as Pass@1's, docs/reports.md "People against an
agent"), and pointer motion, people beside each run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

import numpy as np

from annotation.models import AgentRun, Rollout
from annotation.reporting.motion import PEOPLE, Groups, add_agents, motion_section
from annotation.reporting.people import Answer, CountedColumns, PeopleCounts, Pool
from annotation.reporting.report_types import (
    AgentSummary,
    AgentTypeRow,
    Beside,
    MotionSection,
    ScatterPoint,
    UnpairedType,
    Versus,
    VersusRow,
)
from annotation.reporting.stats import (
    BOOTSTRAP_SEED,
    ClusterBootstrap,
    PairedCells,
    PairedPuzzles,
    effective_people,
    mean_of_present,
    mean_pass_at_k,
    paired_interval,
)
from annotation.reporting.training import TRAINED_ON
from puzzles.models import Puzzle


def agents_on(pool: Pool) -> list[AgentSummary]:
    """Every agent run with rollouts on these puzzles, each on its own: harness and imported runs."""
    types = dict(Puzzle.objects.filter(pk__in=pool).values_list("pk", "type"))
    trained = set(TRAINED_ON.filter(puzzle_id__in=pool).values_list("puzzle_id", flat=True))
    return [run_summary(outcomes, types, trained, {}) for outcomes in runs_on(pool, types)]


@dataclass(frozen=True)
class RunOutcomes:
    """One run on the pool: each complete puzzle's first k outcomes that did not fail, the failed
    rollouts per type, and every puzzle the run reached."""

    run: AgentRun
    complete: dict[int, list[bool]]
    failed: dict[str, int]
    reached: set[int]


def runs_on(pool: Pool, types: dict[int, str]) -> list[RunOutcomes]:
    runs = AgentRun.objects.filter(rollouts__puzzle_id__in=pool).distinct().order_by("created_at", "pk")
    return [_run_outcomes(run, pool, types) for run in runs]


def _run_outcomes(run: AgentRun, pool: Pool, types: dict[int, str]) -> RunOutcomes:
    """A run's outcomes on the pool, exactly k rollouts per puzzle (the first k that did not fail)."""
    k = run.rollouts_per_puzzle
    counted: dict[int, list[bool]] = defaultdict(list)
    failed: dict[str, int] = defaultdict(int)
    reached: set[int] = set()
    rows = (
        Rollout.objects.filter(run=run, puzzle_id__in=pool)
        .exclude(status=Rollout.Status.PENDING)
        .order_by("puzzle_id", "index")
        .values_list("puzzle_id", "status", "correct")
    )
    for puzzle, status, correct in rows.iterator(chunk_size=5000):
        reached.add(puzzle)
        if status == Rollout.Status.FAILED:
            failed[types[puzzle]] += 1
        else:
            counted[puzzle].append(bool(correct))
    complete = {puzzle: outcomes[:k] for puzzle, outcomes in counted.items() if len(outcomes) >= k}
    return RunOutcomes(run, complete, dict(failed), reached)


def run_summary(
    outcomes: RunOutcomes, types: dict[int, str], trained: set[int], people_pass1: dict[str, float]
) -> AgentSummary:
    """One run's Pass@k on the pool, from exactly k rollouts per puzzle, how many of those
    puzzles were trained on, and its mean Pass@1 beside people's over the types both have."""
    run, complete, failed = outcomes.run, outcomes.complete, outcomes.failed
    k = run.rollouts_per_puzzle
    counts = [(len(r), sum(r)) for r in complete.values()]
    ks = [n for n in (1, 5) if n <= k]
    type_rows = _agent_type_rows(complete, types, ks, failed)
    shared = [r for r in type_rows if r["type"] in people_pass1]
    return {
        "name": run.name,
        "source": run.source,
        "rollouts_per_puzzle": k,
        "types": type_rows,
        "mean_pass1_over_types": mean_of_present([r["pass1"] for r in type_rows]),
        "shared_types": [r["type"] for r in shared],
        "mean_pass1_shared": mean_of_present([r["pass1"] for r in shared]),
        "people_mean_pass1_shared": mean_of_present([people_pass1[r["type"]] for r in shared]),
        "pass_at": {str(n): mean_pass_at_k(counts, n) for n in ks} if counts else {},
        "run": run.pk,
        "model": run.model,
        "protocol": run.protocol,
        "failed": sum(failed.values()),
        "failed_by_type": dict(sorted(failed.items())),
        "short_puzzles": len(outcomes.reached - set(complete)),  # fewer than k rollouts left: left out
        "trained_on": len(trained & set(complete)),
    }


def _agent_type_rows(
    outcomes: dict[int, list[bool]], types: dict[int, str], ks: list[int], failed: dict[str, int]
) -> list[AgentTypeRow]:
    """A run's Pass@1 and Pass@k per type, from its complete puzzles, with its failed rollouts."""
    by_type: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for puzzle, r in outcomes.items():
        by_type[types[puzzle]].append((len(r), sum(r)))
    return [
        {
            "type": t,
            "puzzles": len(c),
            "pass1": mean_pass_at_k(c, 1),
            "pass_k": {str(n): mean_pass_at_k(c, n) for n in ks if n > 1},
            "failed": failed.get(t, 0),
        }
        for t, c in sorted(by_type.items())
    ]


def motion_beside_agents(answers: list[Answer], pool: Pool) -> MotionSection:
    """People's pointer motion per type (their counted, submitted answers) beside each agent run's
    rollouts on the same puzzles (reporting/motion.py)."""
    groups: Groups = defaultdict(list)
    for answer in answers:
        if answer["submitted"]:
            groups[(answer["type"], PEOPLE)].append(answer["motion"])
    add_agents(groups, Rollout.objects.filter(puzzle_id__in=pool))
    return motion_section(groups)


# --- people against each agent run, paired by puzzle ----------------------------------------


PeopleOnPuzzles = dict[int, tuple[str, int, int]]  # puzzle: its type, people's answers, how many right


def people_on_puzzles(answers: list[Answer]) -> PeopleOnPuzzles:
    """Per puzzle, its type and people's submitted, counted answers and right ones (once for every run)."""
    tally: dict[int, list[Any]] = {}
    for answer in answers:
        if answer["submitted"]:
            row = tally.setdefault(answer["puzzle"], [answer["type"], 0, 0])
            row[1] += 1
            row[2] += answer["correct"]
    return {puzzle: (kind, n, right) for puzzle, (kind, n, right) in tally.items()}


@dataclass(frozen=True)
class PeopleSide:
    """What each run is held against: people's counted answers per puzzle and one by one, the
    report's cluster bootstrap over them, the types they have a Pass@1 on, and each puzzle's type."""

    puzzles: PeopleOnPuzzles
    answers: CountedColumns
    boot: ClusterBootstrap
    types: set[str]
    puzzle_types: dict[int, str]

    @classmethod
    def of(cls, counts: PeopleCounts, puzzle_types: dict[int, str]) -> PeopleSide:
        """People's side from their counts on the report's pool."""
        with_pass1 = {row["type"] for row in counts.types if row["pass1"] is not None}
        return cls(people_on_puzzles(counts.counted), counts.columns, counts.boot, with_pass1, puzzle_types)


def versus(outcomes: RunOutcomes, side: PeopleSide) -> Versus:
    """People against one run on the puzzles both answered: per type and over types, the
    difference of Pass@1 with its interval (clustered by person, or exact with few people, as
    Pass@1's), who solves what the other does not, and the types one side has and the other not
    (docs/reports.md)."""
    by_type: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    for puzzle, rollouts in outcomes.complete.items():
        if puzzle in side.puzzles:
            kind, count, right = side.puzzles[puzzle]
            by_type[kind].append((count, right, sum(rollouts) / len(rollouts)))
    names = sorted(by_type)
    paired = [PairedPuzzles.of(by_type[name]) for name in names]
    boot = side.boot
    cells = _paired_cells(outcomes, side.answers, names, boot.clusters)
    bootstrapped = boot.weighted_means(cells.difference, cells.weight)
    rows = [
        _versus_row(name, puzzles, _paired_figures(cells, j, bootstrapped.columns[j]))
        for j, (name, puzzles) in enumerate(zip(names, paired))
    ]
    over_types = cells.over_types(range(len(names)))
    return {
        "name": outcomes.run.name,
        "run": outcomes.run.pk,
        "rows": rows,
        "overall": _versus_overall(rows, _paired_figures(over_types, 0, bootstrapped.mean)),
        "resamples": boot.resamples,
        "seed": None if boot.exact else BOOTSTRAP_SEED,
        "unpaired": _unpaired(outcomes, side, set(names)),
        "points": [point for name, puzzles in zip(names, paired) for point in _scatter_points(name, puzzles)],
    }


def _paired_cells(outcomes: RunOutcomes, answers: CountedColumns, names: list[str], clusters: int) -> PairedCells:
    """People's answers on the run's complete puzzles, per annotator and type (the columns of names)."""
    shape = (clusters, len(names))
    if not names:
        return PairedCells.of([], [], [], [], [], shape)
    ids = np.fromiter(outcomes.complete, dtype=np.int64, count=len(outcomes.complete))
    scores = np.fromiter((sum(r) / len(r) for r in outcomes.complete.values()), dtype=float, count=len(ids))
    order = np.argsort(ids)
    ids, scores = ids[order], scores[order]
    at = np.clip(np.searchsorted(ids, answers.puzzle), 0, len(ids) - 1)
    kept = ids[at] == answers.puzzle  # answers on a puzzle the run completed
    to_column = np.full(len(answers.types), -1, dtype=np.int64)  # a type of people's: its column here
    to_column[[answers.types.index(name) for name in names]] = np.arange(len(names))
    column = to_column[answers.type[kept]]
    person, puzzle, right = answers.person[kept], answers.puzzle[kept], answers.right[kept]
    return PairedCells.of(person, column, puzzle, right, scores[at[kept]], shape)


class PairedFigures(TypedDict):
    """A paired difference's interval with its method, and the people and shares behind it."""

    ci_low: float | None
    ci_high: float | None
    ci_method: str
    people: int
    ci_people: float | None
    people_right_agent_wrong: float | None
    agent_right_people_wrong: float | None


def _paired_figures(cells: PairedCells, column: int, bootstrapped: tuple[float | None, float | None]) -> PairedFigures:
    low, high, method = paired_interval(cells, column, bootstrapped)
    weights = cells.weight[:, column] if cells.weight.shape[1] else np.zeros(0)
    total = float(weights.sum())
    return {
        "ci_low": low,
        "ci_high": high,
        "ci_method": method,
        "people": int((weights > 0).sum()),
        "ci_people": effective_people(weights) if total else None,
        "people_right_agent_wrong": float(cells.people_ahead[:, column].sum()) / total if total else None,
        "agent_right_people_wrong": float(cells.agent_ahead[:, column].sum()) / total if total else None,
    }


# The chance rate and the run's effort over people's, filled in by effort.versus_beside.
NOT_BESIDE: Beside = {"chance_rate": None, "actions_ratio": None, "time_ratio": None, "effort_puzzles": 0}


def _versus_row(name: str, puzzles: PairedPuzzles, figures: PairedFigures) -> VersusRow:
    people_solve, agent_solves = puzzles.people > 0.5, puzzles.agent > 0.5  # most answers, most rollouts right
    n = len(puzzles.answers)
    people_only, agent_only = int((people_solve & ~agent_solves).sum()), int((agent_solves & ~people_solve).sum())
    return {
        "type": name,
        "puzzles": n,
        "answers": int(puzzles.answers.sum()),
        "people_pass1": float(puzzles.people.mean()),
        "agent_pass1": float(puzzles.agent.mean()),
        "difference": puzzles.difference(),
        **figures,
        "people_only": people_only,
        "agent_only": agent_only,
        "both": int((people_solve & agent_solves).sum()),
        "neither": int((~people_solve & ~agent_solves).sum()),
        "people_only_share": people_only / n,
        "agent_only_share": agent_only / n,
        **NOT_BESIDE,
    }


def _versus_overall(rows: list[VersusRow], figures: PairedFigures) -> VersusRow:
    """Over the types both answered: Pass@1 and the difference as means of the types' (each type
    weighs the same, as the report's means do), its interval over people's answers on all of
    them, the counts summed."""
    puzzles = sum(r["puzzles"] for r in rows)

    def total(key: Literal["people_only", "agent_only", "both", "neither", "answers"]) -> int:
        return sum(r[key] for r in rows)

    return {
        "type": "all types",
        "puzzles": puzzles,
        "answers": total("answers"),
        "people_pass1": mean_of_present([r["people_pass1"] for r in rows]),
        "agent_pass1": mean_of_present([r["agent_pass1"] for r in rows]),
        "difference": mean_of_present([r["difference"] for r in rows]),
        **figures,
        "people_only": total("people_only"),
        "agent_only": total("agent_only"),
        "both": total("both"),
        "neither": total("neither"),
        "people_only_share": total("people_only") / puzzles if puzzles else None,
        "agent_only_share": total("agent_only") / puzzles if puzzles else None,
        **NOT_BESIDE,
    }


def _unpaired(outcomes: RunOutcomes, side: PeopleSide, paired: set[str]) -> list[UnpairedType]:
    """The types people or the run have that the comparison has not: people have no counted
    answer on them (dropped_types says why), the run has no complete puzzle of them, or no
    puzzle of them has both."""
    run_types = Counter(side.puzzle_types[puzzle] for puzzle in outcomes.complete)
    people_types = Counter(kind for kind, _, _ in side.puzzles.values())
    missing = (side.types | set(run_types) | set(outcomes.failed)) - paired
    return [
        {
            "type": kind,
            "people_puzzles": people_types[kind],
            "run_puzzles": run_types[kind],
            "run_failed": outcomes.failed.get(kind, 0),
        }
        for kind in sorted(missing)
    ]


def _scatter_points(name: str, puzzles: PairedPuzzles) -> list[ScatterPoint]:
    """The type's puzzles grouped by (people's Pass@1, the agent's): one point each, with its count."""
    pairs = Counter(zip(puzzles.people.round(6).tolist(), puzzles.agent.round(6).tolist()))
    return [
        {"type": name, "people": people, "agent": agent, "puzzles": count}
        for (people, agent), count in sorted(pairs.items())
    ]
