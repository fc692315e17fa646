"""Agent-over-human effort (OSWorld-Human gives agents' steps as 1.4 to 2.7 times a person's): per
puzzle, an agent run's actions and time as a multiple of people's median on the same puzzle; per
type, the median of those multiples over the puzzles both have.

- people: each included person's first scored attempt on the puzzle, submitted, with input
  evidence (the answers Pass@1 counts), right or wrong; excluded people left out;
- an agent run: its first k played rollouts on the puzzle that did not fail (as the report counts
  them) that reached the page (a rollout imported from files has no attempt here and is left out);
- actions: the page's semantic actions before the submit (`Attempt.action_count`), the same count
  for a hand and a model; time: active time (`Attempt.active_ms`: the page's wall time less its
  hidden time), model latency included for an agent, as a person's thinking is;
- a puzzle's multiple is the run's median over its rollouts over people's median; none when
  people's median is 0 or either side has nothing. A type's is the median of its puzzles'.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from typing import Any, TypedDict

from annotation.models import AgentRun, Attempt, Enrollment, Participant, Rollout
from annotation.reporting.report_types import Versus, VersusRow
from annotation.reporting.stats import mean_of_present

RULE = __doc__.split("\n\n", 1)[1].strip()


class PuzzleEffort(TypedDict):
    """One agent run on one puzzle, against people on it."""

    run: str
    puzzle: int  # the puzzle's id
    type: str
    rollouts: int  # the run's counted rollouts with an attempt on the page
    people: int  # people's counted answers
    agent_actions: float | None  # the run's median
    people_actions: float | None  # people's median
    actions_ratio: float | None
    agent_active_s: float | None
    people_active_s: float | None
    time_ratio: float | None


class TypeEffort(TypedDict):
    """One agent run on one type: the median multiple over the puzzles both have."""

    run: str
    type: str
    puzzles: int  # with a multiple of actions
    actions_ratio: float | None
    time_puzzles: int  # with a multiple of time
    time_ratio: float | None


Samples = dict[int, tuple[list[int], list[float]]]  # puzzle -> (action counts, active seconds)


def people_samples(puzzle_ids: Collection[int], study_ids: Collection[int]) -> Samples:
    """Per puzzle, people's counted answers in these studies: action counts and active seconds."""
    excluded = set(
        Enrollment.objects.filter(study_id__in=list(study_ids), excluded=True).values_list("study_id", "participant_id")
    )
    rows = (
        Attempt.objects.filter(
            study_id__in=list(study_ids),
            puzzle_id__in=list(puzzle_ids),
            participant__kind=Participant.Kind.HUMAN,
            purpose=Attempt.Purpose.SCORED,
        )
        .order_by("created_at", "pk")
        .values_list("study_id", "participant_id", "puzzle_id", "submitted_at", "input_ok", "action_count", "active_ms")
    )
    seen: set[tuple[int, int]] = set()
    out: Samples = defaultdict(lambda: ([], []))
    for study, person, puzzle, submitted_at, input_ok, actions, active_ms in rows.iterator(chunk_size=5000):
        if (study, person) in excluded or (person, puzzle) in seen:
            continue
        seen.add((person, puzzle))
        if submitted_at is None or input_ok is False:
            continue
        _add(out[puzzle], actions, active_ms)
    return dict(out)


def agent_samples(puzzle_ids: Collection[int]) -> dict[int, Samples]:
    """Per run id, per puzzle: its counted rollouts' action counts and active seconds."""
    k = dict(AgentRun.objects.values_list("pk", "rollouts_per_puzzle"))
    rows = (
        Rollout.objects.filter(puzzle_id__in=list(puzzle_ids))
        .exclude(status__in=(Rollout.Status.PENDING, Rollout.Status.FAILED))
        .order_by("run_id", "puzzle_id", "index")
        .values_list("run_id", "puzzle_id", "attempt_id", "attempt__action_count", "attempt__active_ms")
    )
    counted: dict[tuple[int, int], int] = defaultdict(int)
    out: dict[int, Samples] = defaultdict(lambda: defaultdict(lambda: ([], [])))
    for run, puzzle, attempt, actions, active_ms in rows.iterator(chunk_size=5000):
        counted[(run, puzzle)] += 1
        if counted[(run, puzzle)] > k[run] or attempt is None:
            continue
        _add(out[run][puzzle], actions, active_ms)
    return {run: dict(samples) for run, samples in out.items()}


def _add(sample: tuple[list[int], list[float]], actions: int | None, active_ms: float | None) -> None:
    if actions is not None:
        sample[0].append(actions)
    if active_ms is not None:
        sample[1].append(active_ms / 1000)


def _median(values: list[int] | list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _ratio(agent: float | None, people: float | None) -> float | None:
    return agent / people if agent is not None and people else None


def effort(
    people: Samples, agents: dict[int, Samples], types: dict[int, str], run_names: dict[int, str]
) -> tuple[list[PuzzleEffort], list[TypeEffort]]:
    """Per run and puzzle (puzzles of both sides), then per run and type."""
    rows: list[PuzzleEffort] = []
    for run, samples in agents.items():
        for puzzle in sorted(samples, key=lambda pk: (types[pk], pk)):
            if puzzle not in people:
                continue
            (agent_actions, agent_time), (people_actions, people_time) = samples[puzzle], people[puzzle]
            a_actions, p_actions = _median(agent_actions), _median(people_actions)
            a_time, p_time = _median(agent_time), _median(people_time)
            rows.append(
                {
                    "run": run_names[run],
                    "puzzle": puzzle,
                    "type": types[puzzle],
                    "rollouts": max(len(agent_actions), len(agent_time)),
                    "people": max(len(people_actions), len(people_time)),
                    "agent_actions": a_actions,
                    "people_actions": p_actions,
                    "actions_ratio": _ratio(a_actions, p_actions),
                    "agent_active_s": a_time,
                    "people_active_s": p_time,
                    "time_ratio": _ratio(a_time, p_time),
                }
            )
    return rows, type_effort(rows)


def type_effort(rows: list[PuzzleEffort]) -> list[TypeEffort]:
    grouped: dict[tuple[str, str], list[PuzzleEffort]] = defaultdict(list)
    for row in rows:
        grouped[(row["run"], row["type"])].append(row)
    out: list[TypeEffort] = []
    for (run, type_name), puzzles in grouped.items():
        actions = [r["actions_ratio"] for r in puzzles if r["actions_ratio"] is not None]
        times = [r["time_ratio"] for r in puzzles if r["time_ratio"] is not None]
        out.append(
            {
                "run": run,
                "type": type_name,
                "puzzles": len(actions),
                "actions_ratio": _median(actions),
                "time_puzzles": len(times),
                "time_ratio": _median(times),
            }
        )
    return out


def study_effort(
    study_ids: Collection[int], puzzle_types: dict[int, str]
) -> tuple[list[PuzzleEffort], list[TypeEffort]]:
    """Every agent run on these puzzles (id -> type) against the studies' people."""
    people = people_samples(puzzle_types, study_ids)
    agents = agent_samples(puzzle_types)
    names = dict(AgentRun.objects.filter(pk__in=list(agents)).values_list("pk", "name"))
    return effort(people, agents, puzzle_types, names)


# --- in the report: beside people against each run -----------------------------------------------
def people_samples_of(answers: Iterable[Mapping[str, Any]]) -> Samples:
    """People's samples from the report's counted answers (people.Answer): the submitted ones
    with input evidence, as people_samples reads them from the database."""
    out: Samples = defaultdict(lambda: ([], []))
    for answer in answers:
        if answer["submitted"] and not answer["no_input"]:
            _add(out[answer["puzzle"]], answer["actions"], answer["active_ms"])
    return dict(out)


def report_effort(answers: Iterable[Mapping[str, Any]], puzzle_types: dict[int, str]) -> list[PuzzleEffort]:
    """Every run on the report's puzzles against the report's people, puzzle by puzzle."""
    agents = agent_samples(puzzle_types)
    names = dict(AgentRun.objects.filter(pk__in=list(agents)).values_list("pk", "name"))
    rows, _ = effort(people_samples_of(answers), agents, puzzle_types, names)
    return rows


def versus_beside(versus: Versus, puzzles: list[PuzzleEffort], chance: Mapping[str, float | None]) -> Versus:
    """A run's comparison with each type's chance rate and the run's effort over people's on its
    puzzles; over types: the mean chance rate of the types both answered, the median multiple
    over all their puzzles."""
    mine = [row for row in puzzles if row["run"] == versus["name"]]
    rows = [
        _beside(row, [r for r in mine if r["type"] == row["type"]], chance.get(row["type"])) for row in versus["rows"]
    ]
    shared = {row["type"] for row in rows}
    over_types = mean_of_present([row["chance_rate"] for row in rows])
    overall = _beside(versus["overall"], [r for r in mine if r["type"] in shared], over_types)
    return {**versus, "rows": rows, "overall": overall}


def _beside(row: VersusRow, puzzles: list[PuzzleEffort], chance: float | None) -> VersusRow:
    actions = [r["actions_ratio"] for r in puzzles if r["actions_ratio"] is not None]
    times = [r["time_ratio"] for r in puzzles if r["time_ratio"] is not None]
    return {
        **row,
        "chance_rate": chance,
        "actions_ratio": _median(actions),
        "time_ratio": _median(times),
        "effort_puzzles": len(actions),
    }
