"""People in a study report: each included person's first attempt per puzzle (an `Answer`), the
per-type rows with Pass@1 and Pass@k, their intervals clustered by annotator (exact with few
people), the figures over every type, outcomes, times, halves of each run, agreement, and the
types without people's Pass@1 with why. The counting rules are in reports.py (`RULES`), what
each figure is in docs/reports.md.

`people_counts` is what every other section reads of people: the rows, the counted answers as
columns and the one cluster bootstrap over them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, TypedDict

import numpy as np
from django.db.models import BooleanField, Case, Count, ExpressionWrapper, F, Q, QuerySet, Value, When
from django.db.models.functions import Coalesce

from annotation.live.scoring import time_up_from_ms
from annotation.models import Attempt, Enrollment, Study
from annotation.reporting.motion import motion_from, motion_values
from annotation.reporting.report_types import (
    Agreement,
    DroppedType,
    HalfFigures,
    Intervals,
    Overall,
    PositionRow,
    PositionSection,
    TimeSample,
    TypeRow,
)
from annotation.reporting.stats import (
    BOOTSTRAP_SEED,
    FEW_PEOPLE,
    MIN_PEOPLE_FOR_BOOTSTRAP,
    ClusterBootstrap,
    ClusterIntervals,
    effective_people,
    fleiss_kappa_binary,
    gwet_ac1,
    krippendorff_alpha_nominal,
    mean_of_present,
    median_iqr,
    people_interval,
    percent_agreement,
    wilson_interval,
)
from puzzles.models import Puzzle

TIME_SAMPLE = 5000  # per type, for the distribution charts
INTERVAL_METHOD = "cluster bootstrap over annotators"
MOTION = motion_values()
# The counts of a type row that add up over types.
Counted = Literal[
    "attempts",
    "puzzles",
    "correct",
    "wrong",
    "timed_out",
    "not_submitted",
    "started",
    "correct_within_k",
    "no_input",
]
Pool = Collection[int] | QuerySet[Any, Any]  # the puzzles reported on: their ids, or a query of them


class Answer(TypedDict):
    """One included person's answer to one puzzle: their first attempt, and whether one of the
    first k was correct."""

    participant: int
    puzzle: int
    type: str
    submitted: bool
    correct: bool
    timed_out: bool
    wall_ms: int | None
    active_ms: int | None
    actions: int | None
    position: int | None  # its place in the person's run, from 1; None: stored before positions were kept
    solved_within_k: bool
    no_input: bool  # False also when not submitted, or scored before evidence was kept
    motion: dict[str, Any] | None  # None: not submitted, or scored before motion was kept


@dataclass(frozen=True)
class PeopleCounts:
    """People's answers on a pool and what every section reads of them: the type rows (their
    clustered intervals filled in), the counted answers as columns, and the cluster bootstrap
    over those answers with its Pass@1 (and Pass@k) intervals."""

    answers: list[Answer]  # every included person's first attempt per puzzle
    counted: list[Answer]  # those not marked as without input evidence
    types: list[TypeRow]
    columns: CountedColumns
    boot: ClusterBootstrap
    pass1: ClusterIntervals
    pass_k: ClusterIntervals | None
    k: int  # attempts allowed per puzzle (Pass@k)


def people_counts(study: Study, pool: Pool) -> PeopleCounts:
    """Each included person's answers on the pool, counted per type with their intervals."""
    answers = first_answers(study, pool)
    counted = [a for a in answers if not a["no_input"]]  # the type rows and overall count the rest themselves
    k = study.attempts_allowed
    types = [type_row(name, rows, k) for name, rows in by_type(answers).items()]
    columns = counted_columns(counted, types)
    boot, pass1, pass_k = clustered(columns, types, k)
    return PeopleCounts(answers, counted, types, columns, boot, pass1, pass_k, k)


def first_answers(study: Study, pool: Pool) -> list[Answer]:
    """Each included person's answer per puzzle: their first attempt, plus whether one of the
    first k was correct."""
    excluded = set(Enrollment.objects.filter(study=study, excluded=True).values_list("participant_id", flat=True))
    # Abandoned attempts stay in: they were started and not submitted (the submission rate);
    # only submitted attempts count towards Pass@1.
    rows = (
        Attempt.objects.filter(study=study, purpose=Attempt.Purpose.SCORED, puzzle_id__in=pool)
        .exclude(participant_id__in=excluded)
        .order_by("created_at", "pk")
        # Two booleans from the database rather than three timestamps per attempt: parsing them
        # would be a third of the report's time on a large study.
        .annotate(
            was_submitted=_boolean(Q(submitted_at__isnull=False)), late=submitted_late(study.time_limit_s), **MOTION
        )
        .values_list(
            "participant_id",
            "puzzle_id",
            "puzzle__type",
            "was_submitted",
            "correct",
            "wall_ms",
            "active_ms",
            "action_count",
            "position",
            "input_ok",
            "late",
            *MOTION,
            named=True,
        )
    )
    tries: dict[tuple[int, int], list[Any]] = defaultdict(list)
    for row in rows.iterator(chunk_size=5000):
        tries[(row.participant_id, row.puzzle_id)].append(row)
    k = study.attempts_allowed
    return [_answer(attempts[0], any(_solved(a) for a in attempts[:k])) for attempts in tries.values()]


def _solved(attempt: Any) -> bool:
    """Correct, and not without input evidence (None: scored before evidence was kept)."""
    return bool(attempt.correct) and attempt.input_ok is not False


def _answer(first: Any, solved_within_k: bool) -> Answer:
    """An answer from a person's first attempt on a puzzle (a named row of first_answers)."""
    return {
        "participant": first.participant_id,
        "puzzle": first.puzzle_id,
        "type": first.puzzle__type,
        "submitted": first.was_submitted,
        "correct": bool(first.correct),
        "timed_out": bool(first.was_submitted and first.late and not first.correct),
        "wall_ms": first.wall_ms,
        "active_ms": first.active_ms,
        "actions": first.action_count,
        "position": first.position,
        "solved_within_k": solved_within_k,
        "no_input": first.input_ok is False,  # None: not submitted, or scored before evidence was kept
        "motion": motion_from([getattr(first, name) for name in MOTION]),  # None: not measured
    }


def _boolean(condition: Q) -> ExpressionWrapper:
    return ExpressionWrapper(condition, output_field=BooleanField())


def submitted_late(limit_s: int | None) -> Case | Value:
    """In the database, whether an attempt's submit came at the study's time limit or after it, as
    the scoring takes a submit for the page's own at the limit (live/scoring.py, time_up_from_ms): by
    its time on screen (screen_ms); an attempt scored before that was kept, by the time from
    serving to its submit. Never without a limit. A submitted answer that is late and not correct
    timed out."""
    if not limit_s:
        return Value(False, output_field=BooleanField())
    late_ms = time_up_from_ms(limit_s)
    served = Coalesce(F("served_at"), F("created_at"))
    return Case(
        When(screen_ms__isnull=False, then=_boolean(Q(screen_ms__gte=late_ms))),
        default=_boolean(Q(submitted_at__gte=served + timedelta(milliseconds=late_ms))),
        output_field=BooleanField(),
    )


def by_type(answers: list[Answer]) -> dict[str, list[Answer]]:
    grouped: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        grouped[answer["type"]].append(answer)
    return dict(sorted(grouped.items()))


def type_row(name: str, rows: list[Answer], k: int) -> TypeRow:
    """A type's counts, Pass@1 (and Pass@k with k > 1), Wilson interval and times; the clustered
    intervals (ci_low, ci_high and pass_k_ci_*) are filled in by clustered."""
    no_input = sum(r["no_input"] for r in rows)
    rows = [r for r in rows if not r["no_input"]]
    submitted = [r for r in rows if r["submitted"]]
    correct = sum(r["correct"] for r in submitted)
    late = sum(r["timed_out"] for r in submitted)
    within_k = sum(r["solved_within_k"] for r in submitted)
    low, high = wilson_interval(correct, len(submitted))
    wall = median_iqr([r["wall_ms"] for r in submitted if r["wall_ms"] is not None])
    active = median_iqr([r["active_ms"] for r in submitted if r["active_ms"] is not None])
    actions = [r["actions"] for r in submitted if r["actions"] is not None]
    return {
        "type": name,
        "attempts": len(submitted),
        "puzzles": len({r["puzzle"] for r in submitted}),
        "annotators": len({r["participant"] for r in submitted}),
        "correct": correct,
        "wrong": len(submitted) - correct - late,
        "timed_out": late,
        "not_submitted": len(rows) - len(submitted),
        "pass1": correct / len(submitted) if submitted else None,
        "ci_low": None,
        "ci_high": None,
        "ci_method": "",
        "ci_people": None,
        "wilson_low": low if submitted else None,
        "wilson_high": high if submitted else None,
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
        "k": k,
        "correct_within_k": within_k if k > 1 else None,
        "pass_k": (within_k / len(submitted)) if k > 1 and submitted else None,
        "pass_k_ci_low": None,
        "pass_k_ci_high": None,
        "pass_k_ci_method": "",
        "no_input": no_input,
    }


def _annotator_rows(submitted: list[Answer]) -> dict[int, int]:
    """Each annotator's row in the cluster bootstrap: by participant id, those with a submitted answer."""
    return {p: i for i, p in enumerate(sorted({a["participant"] for a in submitted}))}


@dataclass(frozen=True)
class CountedColumns:
    """People's submitted, counted answers as columns: each one's annotator (their row in the
    report's cluster bootstrap), type (its column, in the type rows' order), puzzle, and whether
    it was right and solved within k."""

    people: int
    types: list[str]
    person: np.ndarray
    type: np.ndarray
    puzzle: np.ndarray
    right: np.ndarray
    within_k: np.ndarray

    def table(self, which: np.ndarray | None = None) -> np.ndarray:
        """Answers (or those where `which` holds) per annotator and type: the bootstrap's table."""
        shape = (self.people, len(self.types))
        weights = None if which is None else which.astype(float)
        counted = np.bincount(self.person * shape[1] + self.type, weights=weights, minlength=shape[0] * shape[1])
        return counted.astype(float).reshape(shape)


def counted_columns(answers: list[Answer], rows: list[TypeRow]) -> CountedColumns:
    submitted = [a for a in answers if a["submitted"]]
    people = _annotator_rows(submitted)
    columns = {row["type"]: j for j, row in enumerate(rows)}
    return CountedColumns(
        people=len(people),
        types=list(columns),
        person=np.array([people[a["participant"]] for a in submitted], dtype=np.int64),
        type=np.array([columns[a["type"]] for a in submitted], dtype=np.int64),
        puzzle=np.array([a["puzzle"] for a in submitted], dtype=np.int64),
        right=np.array([a["correct"] for a in submitted], dtype=bool),
        within_k=np.array([a["solved_within_k"] for a in submitted], dtype=bool),
    )


def clustered(
    answers: CountedColumns, rows: list[TypeRow], k: int
) -> tuple[ClusterBootstrap, ClusterIntervals, ClusterIntervals | None]:
    """The cluster bootstrap over the annotators of the counted answers; the intervals of Pass@1
    (and of Pass@k with k > 1) go into the type rows, each the bootstrap's where enough people
    answered the type, else the exact one over people (stats.people_interval); the bootstrap's
    are returned for the overall figures."""
    trials = answers.table()
    solved = answers.table(answers.right)
    within_k = answers.table(answers.within_k)
    boot = ClusterBootstrap(trials)
    pass1 = boot.intervals(solved)
    pass_k = boot.intervals(within_k) if k > 1 else None
    for j, row in enumerate(rows):
        sizes = trials[:, j]
        row["ci_low"], row["ci_high"], row["ci_method"] = people_interval(row["pass1"], sizes, pass1.columns[j])
        row["ci_people"] = effective_people(sizes) if row["pass1"] is not None else None
        if pass_k is not None:
            row["pass_k_ci_low"], row["pass_k_ci_high"], row["pass_k_ci_method"] = people_interval(
                row["pass_k"], sizes, pass_k.columns[j]
            )
    return boot, pass1, pass_k


def overall_figures(
    rows: list[TypeRow], k: int, boot: ClusterBootstrap, pass1: ClusterIntervals, pass_k: ClusterIntervals | None
) -> Overall:
    """Every type together: the mean over types (each type weighs the same, as published) and the
    pooled figures, with their intervals (the bootstrap's with enough people, else the exact ones
    over every person's answers), and the outcomes counted."""

    def total(key: Counted) -> int:
        return sum(row[key] or 0 for row in rows)

    answered = [row for row in rows if row["pass1"] is not None]
    attempts, correct = total("attempts"), total("correct")
    low, high = wilson_interval(correct, attempts)
    sizes = boot.trials.sum(axis=1)  # each person's answers over every type
    mean = mean_of_present([r["pass1"] for r in answered])
    pooled = correct / attempts if attempts else None
    mean_low, mean_high, mean_method = people_interval(mean, sizes, pass1.mean)
    pooled_low, pooled_high, pooled_method = people_interval(pooled, sizes, pass1.pooled)
    overall: Overall = {
        "mean_pass1_over_types": mean,
        "mean_ci_low": mean_low,
        "mean_ci_high": mean_high,
        "mean_ci_method": mean_method,
        "attempts": attempts,
        "puzzles": total("puzzles"),
        "correct": correct,
        "wrong": total("wrong"),
        "timed_out": total("timed_out"),
        "not_submitted": total("not_submitted"),
        "started": total("started"),
        "pass1_pooled": pooled,
        "ci_low": pooled_low,
        "ci_high": pooled_high,
        "ci_method": pooled_method,
        "ci_people": effective_people(sizes) if attempts else None,
        "wilson_low": low if attempts else None,
        "wilson_high": high if attempts else None,
        "k": k,
        "mean_pass_k_over_types": None,
        "mean_pass_k_ci_low": None,
        "mean_pass_k_ci_high": None,
        "mean_pass_k_ci_method": "",
        "pass_k_pooled": None,
        "pass_k_ci_low": None,
        "pass_k_ci_high": None,
        "pass_k_ci_method": "",
        "no_input": total("no_input"),
    }
    if pass_k is not None and answered:
        mean_k = mean_of_present([r["pass_k"] for r in answered])
        pooled_k = total("correct_within_k") / attempts
        mean_k_low, mean_k_high, mean_k_method = people_interval(mean_k, sizes, pass_k.mean)
        pooled_k_low, pooled_k_high, pooled_k_method = people_interval(pooled_k, sizes, pass_k.pooled)
        overall.update(
            {
                "mean_pass_k_over_types": mean_k,
                "mean_pass_k_ci_low": mean_k_low,
                "mean_pass_k_ci_high": mean_k_high,
                "mean_pass_k_ci_method": mean_k_method,
                "pass_k_pooled": pooled_k,
                "pass_k_ci_low": pooled_k_low,
                "pass_k_ci_high": pooled_k_high,
                "pass_k_ci_method": pooled_k_method,
            }
        )
    return overall


def interval_facts(boot: ClusterBootstrap) -> Intervals:
    return {
        "method": INTERVAL_METHOD,
        "level": 0.95,
        "interval": "percentile",
        "annotators": boot.clusters,
        "exact": boot.exact,  # every distinct resample, weighted by its probability
        "resamples": boot.resamples,  # distinct resamples when exact, else draws
        "seed": None if boot.exact else BOOTSTRAP_SEED,
        "min_people_for_bootstrap": MIN_PEOPLE_FOR_BOOTSTRAP,
        "few_people_method": FEW_PEOPLE,
    }


def dropped_types(study: Study, pool: Pool, puzzle_types: dict[int, str], rows: list[TypeRow]) -> list[DroppedType]:
    """The pool's types without a Pass@1 of people, and why: answered only by excluded people
    (with their reasons), only without input evidence, started and never submitted, or not yet."""
    with_pass1 = {row["type"] for row in rows if row["pass1"] is not None}
    missing = sorted(set(puzzle_types.values()) - with_pass1)
    if not missing:
        return []
    excluded = dict(
        Enrollment.objects.filter(study=study, excluded=True).values_list("participant_id", "excluded_reason")
    )
    answered_by_excluded = (
        Attempt.objects.filter(study=study, purpose=Attempt.Purpose.SCORED, participant_id__in=excluded)
        .filter(puzzle_id__in=pool, puzzle__type__in=missing, submitted_at__isnull=False)
        .values_list("puzzle__type", "participant_id")
        .distinct()
    )
    who: dict[str, set[int]] = defaultdict(set)
    for kind, participant in answered_by_excluded:
        who[kind].add(participant)
    puzzles = Counter(puzzle_types.values())
    by_type = {row["type"]: row for row in rows}
    return [
        {
            "type": kind,
            "puzzles": puzzles[kind],
            "excluded_people": len(who[kind]),
            "excluded_reasons": sorted({excluded[p] for p in who[kind]} - {""}),
            "no_input": by_type[kind]["no_input"] if kind in by_type else 0,
            "not_submitted": by_type[kind]["not_submitted"] if kind in by_type else 0,
        }
        for kind in missing
    ]


def no_input_beside_pool(study: Study) -> dict[str, int]:
    """Gold and practice attempts of included annotators without input evidence: a script
    answers them as readily as scored ones, so they are counted, though never in Pass@1."""
    excluded = Enrollment.objects.filter(study=study, excluded=True).values("participant_id")
    beside = (Attempt.Purpose.GOLD, Attempt.Purpose.PRACTICE)
    counts = dict(
        Attempt.objects.filter(study=study, purpose__in=beside, input_ok=False)
        .exclude(participant_id__in=excluded)
        .values("purpose")
        .annotate(n=Count("pk"))
        .values_list("purpose", "n")
        .order_by()
    )
    return {str(purpose): counts.get(purpose, 0) for purpose in beside}


def public_truth(study: Study, pool: Pool) -> int:
    """Scored and gold puzzles whose answers are published: a lookup away for any bot."""
    scored_or_gold = Q(pk__in=pool) | Q(pk__in=study.gold.values("pk"))
    return Puzzle.objects.filter(scored_or_gold, truth_public=True).count()


def time_samples(answers: list[Answer]) -> dict[str, TimeSample]:
    """Per type, the times of up to TIME_SAMPLE submitted answers, for the distribution charts."""
    return {
        name: {
            "wall_ms": [r["wall_ms"] for r in rows if r["submitted"]][:TIME_SAMPLE],
            "active_ms": [r["active_ms"] for r in rows if r["submitted"]][:TIME_SAMPLE],
        }
        for name, rows in by_type(answers).items()
    }


def by_position(answers: list[Answer], run_length: int) -> PositionSection:
    """Per type and pooled over types, Pass@1 and median times of the answers in the first half of
    each person's run (places 1 to run_length // 2) and in the second (the rest)."""
    submitted = [a for a in answers if a["submitted"]]
    placed = [a for a in submitted if a["position"] is not None]
    # Columns of numbers, so that the 20 types x 2 halves are masks rather than 40 passes in Python.
    codes: dict[str, int] = {}
    table = PlacedAnswers(
        types=np.array([codes.setdefault(a["type"], len(codes)) for a in placed], dtype=np.int64),
        people=np.array([a["participant"] for a in placed], dtype=np.int64),
        first=np.array([2 * (a["position"] or 0) <= run_length for a in placed], dtype=bool),
        correct=np.array([a["correct"] for a in placed], dtype=bool),
        wall=np.array([np.nan if a["wall_ms"] is None else a["wall_ms"] for a in placed], dtype=float),
        active=np.array([np.nan if a["active_ms"] is None else a["active_ms"] for a in placed], dtype=float),
    )
    everyone = np.ones(len(placed), dtype=bool)
    return {
        "run_length": run_length,
        "rows": [_position_row(name, table, table.types == codes[name]) for name in sorted(codes)],
        "overall": _position_row("all types", table, everyone),
        "unplaced": len(submitted) - len(placed),
    }


@dataclass(frozen=True)
class PlacedAnswers:
    """Submitted, counted answers with a place, as columns."""

    types: np.ndarray  # each type's code
    people: np.ndarray
    first: np.ndarray  # in the first half of the person's run
    correct: np.ndarray
    wall: np.ndarray  # nan: not measured
    active: np.ndarray


def _position_row(name: str, table: PlacedAnswers, rows: np.ndarray) -> PositionRow:
    early, late = _half(table, rows & table.first), _half(table, rows & ~table.first)
    change = None
    if early["pass1"] is not None and late["pass1"] is not None:
        change = late["pass1"] - early["pass1"]
    return {"type": name, "first": early, "second": late, "change": change}


def _half(table: PlacedAnswers, rows: np.ndarray) -> HalfFigures:
    answers, correct = int(rows.sum()), int(table.correct[rows].sum())
    return {
        "answers": answers,
        "people": len(np.unique(table.people[rows])),
        "correct": correct,
        "pass1": correct / answers if answers else None,
        "wall_median_ms": _median(table.wall[rows]),
        "active_median_ms": _median(table.active[rows]),
    }


def _median(values: np.ndarray) -> float | None:
    """The median of the measured values (nan: not measured); None without any."""
    measured = values[~np.isnan(values)]
    return float(np.median(measured)) if len(measured) else None


def agreement(answers: list[Answer]) -> Agreement:
    """Agreement on correctness among people who answered the same puzzle: percent agreement,
    Gwet's AC1, Fleiss' kappa and Krippendorff's alpha (a time-out counts as not correct)."""
    per_puzzle: dict[int, list[bool]] = defaultdict(list)
    for answer in answers:
        if answer["submitted"]:
            per_puzzle[answer["puzzle"]].append(answer["correct"])
    outcomes = list(per_puzzle.values())
    kappa, kappa_n = fleiss_kappa_binary(outcomes)
    units = [[int(v) for v in o] for o in outcomes if len(o) >= 2]
    return {
        "percent_agreement": percent_agreement(units),
        "gwet_ac1": gwet_ac1(units, (0, 1)),
        "agreement_n": len(units),  # puzzles with 2 or more answers: percent agreement, AC1 and alpha
        "fleiss_kappa": kappa,
        "fleiss_n": kappa_n,
        "krippendorff_alpha": krippendorff_alpha_nominal(units),
        "alpha_n": len(units),
    }
