"""Study reports: human Pass@1 per type with Wilson intervals, times, agreement, agents beside people.

Counting rules (written into every report's `rules`):
- a person's answer to a puzzle is their first attempt on it in the study (Pass@1); with k
  attempts allowed, Pass@k is whether one of their first k attempts was correct;
- Pass@1 is over submitted first attempts; submission rate is submitted / started;
- practice and gold attempts, excluded annotators and retired puzzles are left out; an attempt
  whose assignment expired counts as started and not submitted;
- an answer whose first attempt has no input evidence (semantic actions without the raw pointer or
  key input a person's hand leaves on the page) is left out too, and counted per type and overall
  as `no_input` ("excluded: n without input evidence"); nor can such an attempt solve within k;
- agents are matched on the study's puzzles, one entry per run: each puzzle counts with exactly k
  rollouts of that run (k its rollouts per puzzle), the first k that did not fail; a failed rollout
  (the model server or the page failed after retries) is left out and counted per type, and a
  puzzle with fewer than k rollouts left is left out and counted; an unsubmitted rollout, or one
  whose model never produced a usable action, counts as wrong;
- puzzles whose truth is public (imported from a published dataset) count like the others, and
  the report states how many of the scored and gold puzzles they are (`public_truth_puzzles`):
  anyone can look their answers up, so results on them, an agent's above all, prove no skill.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

from annotation.models import AgentRun, Attempt, Enrollment, Rollout, Slot, Study
from annotation.reporting.stats import (
    fleiss_kappa_binary,
    krippendorff_alpha_nominal,
    mean_pass_at_k,
    median_iqr,
    wilson_interval,
)
from puzzles.models import Puzzle
from puzzles.selectors import dataset_counts

RULES = __doc__.split("Counting rules (written into every report's `rules`):\n", 1)[1].strip()
TIME_SAMPLE = 5000  # per type, for the distribution charts


def study_report(*, study: Study, dataset: str | None = None) -> dict:
    """The whole report of a study, as plain data (rendered by annotation.reporting.render); with a
    dataset, over the study's puzzles of that dataset only (`study.datasets` lists its pool's)."""
    slots = Slot.objects.filter(study=study)
    datasets = dataset_counts(Puzzle.objects.filter(pk__in=slots.values("puzzle_id")))
    pool = set((slots.filter(puzzle__dataset=dataset) if dataset else slots).values_list("puzzle_id", flat=True))
    retired = set(Puzzle.objects.filter(pk__in=pool, status=Puzzle.Status.RETIRED).values_list("pk", flat=True))
    pool -= retired
    answers = _first_answers(study, pool)
    counted = [a for a in answers if not a["no_input"]]  # the type rows and overall count the rest themselves
    excluded = Enrollment.objects.filter(study=study, excluded=True).count()
    return {
        "study": {
            "id": study.pk,
            "name": study.name,
            "split": study.split,
            "overlap": study.overlap,
            "attempts_per_puzzle": study.attempts_per_puzzle,
            "datasets": datasets,  # the generated bank and each import its pool draws on, with their puzzles
            "dataset": dataset,  # the one this report keeps to, or None: all of them
        },
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rules": RULES,
        "annotators": len({a["participant"] for a in counted}),
        "excluded_annotators": excluded,
        "retired_puzzles": len(retired),
        "public_truth_puzzles": _public_truth(study, pool),
        "types": [_type_row(name, rows, study.attempts_per_puzzle) for name, rows in _by_type(answers).items()],
        "overall": _overall(answers),
        "agreement": _agreement(counted) if study.overlap >= 2 else None,
        "agents": agents_on(pool),
        "times": {
            name: {
                "wall_ms": [r["wall_ms"] for r in rows if r["submitted"]][:TIME_SAMPLE],
                "active_ms": [r["active_ms"] for r in rows if r["submitted"]][:TIME_SAMPLE],
            }
            for name, rows in _by_type(counted).items()
        },
    }


def _public_truth(study: Study, pool: set[int]) -> int:
    """Scored and gold puzzles whose answers are published: a lookup away for any bot."""
    gold = set(study.gold.values_list("pk", flat=True))
    return Puzzle.objects.filter(pk__in=pool | gold, truth_public=True).count()


def _first_answers(study: Study, pool: set[int]) -> list[dict]:
    """Each included person's answer per puzzle: their first attempt, plus whether one of the
    first k was correct."""
    excluded = set(Enrollment.objects.filter(study=study, excluded=True).values_list("participant_id", flat=True))
    # Abandoned attempts stay in: they were started and not submitted (the submission rate);
    # only submitted attempts count towards Pass@1.
    rows = (
        Attempt.objects.filter(study=study, purpose=Attempt.Purpose.SCORED, puzzle_id__in=pool)
        .exclude(participant_id__in=excluded)
        .order_by("created_at", "pk")
        .values_list(
            "participant_id",
            "puzzle_id",
            "puzzle__type",
            "submitted_at",
            "correct",
            "wall_ms",
            "active_ms",
            "action_count",
            "input_ok",
        )
    )
    tries: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for row in rows.iterator(chunk_size=5000):
        tries[(row[0], row[1])].append(row)
    k = study.attempts_per_puzzle
    answers = []
    for (participant, puzzle), attempts in tries.items():
        _, _, type_name, submitted_at, correct, wall, active, actions, input_ok = attempts[0]
        answers.append(
            {
                "participant": participant,
                "puzzle": puzzle,
                "type": type_name,
                "submitted": submitted_at is not None,
                "correct": bool(correct),
                "wall_ms": wall,
                "active_ms": active,
                "actions": actions,
                "solved_within_k": any(a[4] and a[8] is not False for a in attempts[:k]),
                "no_input": input_ok is False,  # None: not submitted, or scored before evidence was kept
            }
        )
    return answers


def _by_type(answers: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    for answer in answers:
        grouped[answer["type"]].append(answer)
    return dict(sorted(grouped.items()))


def _type_row(name: str, rows: list[dict], k: int) -> dict:
    no_input = sum(r["no_input"] for r in rows)
    rows = [r for r in rows if not r["no_input"]]
    submitted = [r for r in rows if r["submitted"]]
    correct = sum(r["correct"] for r in submitted)
    low, high = wilson_interval(correct, len(submitted))
    wall = median_iqr([r["wall_ms"] for r in submitted if r["wall_ms"] is not None])
    active = median_iqr([r["active_ms"] for r in submitted if r["active_ms"] is not None])
    actions = [r["actions"] for r in submitted if r["actions"] is not None]
    return {
        "type": name,
        "attempts": len(submitted),
        "puzzles": len({r["puzzle"] for r in submitted}),
        "correct": correct,
        "pass1": correct / len(submitted) if submitted else None,
        "ci_low": low,
        "ci_high": high,
        "submitted": len(submitted),
        "started": len(rows),
        "submission_rate": len(submitted) / len(rows) if rows else None,
        "wall_median_ms": wall[0],
        "wall_q1_ms": wall[1],
        "wall_q3_ms": wall[2],
        "active_median_ms": active[0],
        "active_q1_ms": active[1],
        "active_q3_ms": active[2],
        "mean_actions": sum(actions) / len(actions) if actions else None,
        "pass_k": (sum(r["solved_within_k"] for r in submitted) / len(submitted)) if k > 1 and submitted else None,
        "no_input": no_input,
    }


def _overall(answers: list[dict]) -> dict:
    rows = [_type_row(name, rows, 1) for name, rows in _by_type(answers).items()]
    no_input = sum(a["no_input"] for a in answers)
    submitted = [a for a in answers if a["submitted"] and not a["no_input"]]
    rates = [r["pass1"] for r in rows if r["pass1"] is not None]
    correct = sum(a["correct"] for a in submitted)
    low, high = wilson_interval(correct, len(submitted))
    return {
        "mean_pass1_over_types": sum(rates) / len(rates) if rates else None,  # as published
        "attempts": len(submitted),
        "puzzles": len({a["puzzle"] for a in submitted}),
        "correct": correct,
        "pass1_pooled": correct / len(submitted) if submitted else None,
        "ci_low": low,
        "ci_high": high,
        "no_input": no_input,
    }


def _agreement(answers: list[dict]) -> dict:
    """Agreement on correctness among people who answered the same puzzle."""
    per_puzzle: dict[int, list[bool]] = defaultdict(list)
    for answer in answers:
        if answer["submitted"]:
            per_puzzle[answer["puzzle"]].append(answer["correct"])
    outcomes = list(per_puzzle.values())
    kappa, kappa_n = fleiss_kappa_binary(outcomes)
    units = [[int(v) for v in o] for o in outcomes if len(o) >= 2]
    return {
        "fleiss_kappa": kappa,
        "fleiss_n": kappa_n,
        "krippendorff_alpha": krippendorff_alpha_nominal(units),
        "alpha_n": len(units),
    }


# --- agents --------------------------------------------------------------------------------
def agents_on(pool: set[int]) -> list[dict]:
    """Every agent run with rollouts on these puzzles, each on its own: harness and imported runs."""
    types = dict(Puzzle.objects.filter(pk__in=pool).values_list("pk", "type"))
    runs = AgentRun.objects.filter(rollouts__puzzle_id__in=pool).distinct().order_by("created_at", "pk")
    return [_run_summary(run, pool, types) for run in runs]


def _run_summary(run: AgentRun, pool: set[int], types: dict[int, str]) -> dict:
    """One run's Pass@k on the pool, from exactly k rollouts per puzzle (the first k that did not fail)."""
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
    summary = _agent_summary(run.name, run.source, complete, types, k)
    summary.update(
        {
            "run": run.pk,
            "model": run.model,
            "protocol": run.protocol,
            "failed": sum(failed.values()),
            "failed_by_type": dict(sorted(failed.items())),
            "short_puzzles": len(reached - set(complete)),  # fewer than k rollouts left: left out
        }
    )
    for row in summary["types"]:
        row["failed"] = failed.get(row["type"], 0)
    return summary


def _agent_summary(name: str, source: str, outcomes: dict[int, list[bool]], types: dict[int, str], k: int) -> dict:
    counts = {puzzle: (len(r), sum(r)) for puzzle, r in outcomes.items()}
    ks = [n for n in (1, 5) if n <= k]
    by_type: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for puzzle, count in counts.items():
        by_type[types[puzzle]].append(count)
    rows = [
        {
            "type": t,
            "puzzles": len(c),
            "pass1": mean_pass_at_k(c, 1),
            "pass_k": {str(n): mean_pass_at_k(c, n) for n in ks if n > 1},
        }
        for t, c in sorted(by_type.items())
    ]
    return {
        "name": name,
        "source": source,
        "rollouts_per_puzzle": k,
        "types": rows,
        "mean_pass1_over_types": sum(r["pass1"] for r in rows) / len(rows) if rows else None,
        "pass_at": {str(n): mean_pass_at_k(list(counts.values()), n) for n in ks} if counts else {},
    }
