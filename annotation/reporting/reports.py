"""Study reports: human Pass@1 and Pass@k per type with intervals clustered by annotator, outcomes
(correct, wrong, timed out, not submitted), times, agreement, agents beside people, and pointer
motion, people beside agents.

Counting rules (written into every report's `rules`):
- a person's answer to a puzzle is their first attempt on it in the study (Pass@1); with k
  attempts allowed, Pass@k is whether one of their first k attempts was correct;
- Pass@1 is over submitted first attempts; submission rate is submitted / started;
- practice and gold attempts, excluded annotators and retired puzzles are left out; an attempt
  whose assignment expired counts as started and not submitted;
- a submitted answer is correct, wrong or timed out: timed out when the study has a time limit, the
  answer is not correct and its submit reached the server within 5 s of the limit or after it (the
  page submits what is there when the limit runs out, the window the scoring gives the page's own
  submit); a time-out counts as not solved, like a wrong answer, and is counted apart from them;
- intervals (95%) are clustered by annotator, each with its method beside it (`ci_method`): where
  10 people or more answered, percentile intervals of a cluster bootstrap over annotators (each
  resample draws the annotators with replacement and keeps all of each one's answers; 2000
  resamples with the fixed seed 14, or every distinct resample when there are few enough); the mean
  over types and the pooled Pass@1 get theirs from the same resamples. Where fewer people answered
  (few participants), or where every resample gives the same share (no spread between people), the
  interval is Clopper-Pearson's exact one taking each person as one observation: n the effective
  number of people (Kish: (sum m)^2 / sum m^2 over people with m answers), successes the share
  times n; it is never of zero width (the Wilson interval, which takes answers as independent,
  stays in the data as wilson_low/high);
- an answer whose first attempt has no input evidence (semantic actions without the raw pointer or
  key input a person's hand leaves on the page) is left out too, and counted per type and overall
  as `no_input` ("excluded: n without input evidence"); nor can such an attempt solve within k;
  gold and practice attempts get the same check and their marks are counted apart
  (`no_input_beside_pool`), though never in Pass@1 either way. The check catches a page or script
  that sends the page's semantic actions with no raw input around them (no press at each action's
  place, no key on the focused control, no focus); it checks that the raw events the page would
  log are there, at the right places and times, not that a hand made them: a script of about 100
  lines with no browser that sends a pointerdown, pointermoves and a pointerup at each action's
  place passes it (seen on the click, drag, option and swap types), as does a browser driven with
  CDP or operating-system input;
- agents are matched on the study's puzzles, one entry per run: each puzzle counts with exactly k
  rollouts of that run (k its rollouts per puzzle), the first k that did not fail; a failed rollout
  (the model server or the page failed after retries) is left out and counted per type, and a
  puzzle with fewer than k rollouts left is left out and counted; an unsubmitted rollout, or one
  whose model never produced a usable action, counts as wrong;
- pointer motion (`motion`) is per type and group: people's counted, submitted answers (their
  first attempts, as for Pass@1) beside each agent run's rollouts on the same puzzles that reached
  the page; each figure is a median over the attempts that kept motion when scored (`measured`;
  `with_path`: those with pointer samples), the human-likeness score a mean, with its rule in
  `motion.rule`; it describes how the pointer moved and proves nothing about who moved it;
- by position (`by_position`): each person's run has the study's scored puzzles and gold places
  (`run_length`); an answer is in the first half when its place is at most run_length / 2, else
  in the second; Pass@1 and the median times per half are over the submitted, counted answers, per
  type and pooled over types; answers stored before places were kept are counted as `unplaced`;
- people against each agent run (`versus`) are paired by puzzle: on the puzzles both answered
  (people's counted, submitted first attempts; the run's k rollouts), per type the mean over
  puzzles of people's Pass@1 on each minus the run's, and over the types both answered (no other)
  the mean of the types'; its 95% interval follows Pass@1's rule (`ci_method`): where 10 people or
  more answered, the percentile interval of the same cluster bootstrap over people (each drawn
  person brings their answers, the run's Pass@1 on each of those puzzles beside it); with fewer,
  or no spread between resamples, an exact one taking each person as one observation: the
  Clopper-Pearson intervals of the two discordant shares (people right and the run wrong, the
  reverse), each at 97.5% on the effective number of people, combined by Bonferroni
  ([low_b - high_c, high_b - low_c], at least 95%); the puzzles and the run's Pass@1 on each are
  taken as given; a puzzle is solved by people when most of its answers are right, by the run
  when most of its rollouts are; the types one side has and the other not are named with why
  (`unpaired`);
- a type of the report's puzzles without people's Pass@1 (`dropped_types`) is named with why: the
  people who answered it were excluded (their reasons), its answers had no input evidence, were
  never submitted, or nobody has answered it yet; each agent's mean beside people's is over the
  types both have (`mean_pass1_shared`, `people_mean_pass1_shared`);
- training runs (`training`): each run fed by the training environment is one checkpoint of its
  trainer (the token's client), in the order its first episode began; its episodes on puzzles of
  the report's datasets, any split, count when they ended (submitted or not), success being the
  share with a correct answer, per type and over types (each type the same weight), beside
  people's Pass@1 on the type and their mean over the types the checkpoint played; episodes closed
  before their end are counted apart;
- a puzzle is trained on once a training environment episode played it, at any time and whatever
  became of the episode (`contamination`: how many of the report's puzzles, per type, by which
  runs, people's answers on them; `trained_on` per agent run, of its counted puzzles); a report
  made with exclude_trained leaves them out of every figure;
- puzzles whose truth is public (imported from a published dataset) count like the others, and
  the report states how many of the scored and gold puzzles they are (`public_truth_puzzles`):
  anyone can look their answers up, so results on them, an agent's above all, prove no skill.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypedDict

import numpy as np
from django.db.models import BooleanField, Case, Count, ExpressionWrapper, F, Q, QuerySet, Value, When
from django.db.models.functions import Coalesce

from annotation.live.scoring import time_up_from_ms
from annotation.models import AgentRun, Attempt, Enrollment, Rollout, Slot, Study
from annotation.reporting.motion import PEOPLE, Groups, add_agents, motion_from, motion_section, motion_values
from annotation.reporting.report_types import (
    AgentSummary,
    AgentTypeRow,
    Agreement,
    Contamination,
    DroppedType,
    HalfFigures,
    Intervals,
    MotionSection,
    Overall,
    PositionRow,
    PositionSection,
    ScatterPoint,
    StudyFacts,
    StudyReport,
    TimeSample,
    TrainingCheckpoint,
    TrainingSection,
    TrainingType,
    TypeRow,
    UnpairedType,
    Versus,
    VersusRow,
)
from annotation.reporting.stats import (
    BOOTSTRAP_SEED,
    FEW_PEOPLE,
    MIN_PEOPLE_FOR_BOOTSTRAP,
    ClusterBootstrap,
    ClusterIntervals,
    PairedCells,
    PairedPuzzles,
    effective_people,
    fleiss_kappa_binary,
    gwet_ac1,
    krippendorff_alpha_nominal,
    mean_pass_at_k,
    median_iqr,
    paired_interval,
    people_interval,
    percent_agreement,
    wilson_interval,
)
from puzzles.models import Puzzle
from puzzles.selectors import dataset_counts

RULES = __doc__.split("Counting rules (written into every report's `rules`):\n", 1)[1].strip()
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
# A puzzle is trained on once a training environment episode played it: the episode is a rollout
# of an environment run (docs/environment.md, "Contamination"; annotation/environment/contamination.py
# asks the same of an evaluation run). Lazy: each use is a subquery.
TRAINED_ON = Rollout.objects.filter(run__source=AgentRun.Source.ENVIRONMENT)
ENDED = (Rollout.Status.DONE, Rollout.Status.NO_ACTION)  # an episode's end, submitted or not


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


def study_report(*, study: Study, dataset: str | None = None, exclude_trained: bool = False) -> StudyReport:
    """The whole report of a study, as plain data (rendered by annotation.reporting.render); with a
    dataset, over the study's puzzles of that dataset only (`study.datasets` lists its pool's);
    with exclude_trained, without the puzzles environment episodes played (`contamination`)."""
    slots = Slot.objects.filter(study=study)
    datasets = dataset_counts(Puzzle.objects.filter(pk__in=slots.values("puzzle_id")))
    drawn = Puzzle.objects.filter(
        pk__in=(slots.filter(puzzle__dataset=dataset) if dataset else slots).values("puzzle_id")
    )
    retired = drawn.filter(status=Puzzle.Status.RETIRED).count()
    live = drawn.exclude(status=Puzzle.Status.RETIRED)
    trained = dict(live.filter(pk__in=TRAINED_ON.values("puzzle_id")).values_list("pk", "type"))
    # A subquery, not a list of ids: 4,000 ids bound on the client cost more than the queries using them.
    pool = (live.exclude(pk__in=TRAINED_ON.values("puzzle_id")) if exclude_trained else live).values("pk")
    answers = _first_answers(study, pool)
    counted = [a for a in answers if not a["no_input"]]  # the type rows and overall count the rest themselves
    excluded = Enrollment.objects.filter(study=study, excluded=True).count()
    k = study.attempts_allowed
    types = [_type_row(name, rows, k) for name, rows in _by_type(answers).items()]
    columns = _counted_columns(counted, types)
    boot, pass1, pass_k = _clustered(columns, types, k)
    puzzle_types = dict(Puzzle.objects.filter(pk__in=pool).values_list("pk", "type"))
    runs = _runs_on(pool, puzzle_types)
    people_pass1 = {row["type"]: row["pass1"] for row in types if row["pass1"] is not None}
    side = PeopleSide(_people_on_puzzles(counted), columns, boot, set(people_pass1), puzzle_types)
    dropped = _dropped_types(study, pool, puzzle_types, types)
    return {
        "study": _study_facts(study, datasets, dataset),
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rules": RULES,
        "annotators": len({a["participant"] for a in counted}),
        "excluded_annotators": excluded,
        "retired_puzzles": retired,
        "public_truth_puzzles": _public_truth(study, pool),
        "no_input_beside_pool": _no_input_beside_pool(study),
        "types": types,
        "dropped_types": dropped,
        "overall": _overall(types, k, boot, pass1, pass_k),
        "intervals": _intervals(boot),
        "agreement": _agreement(counted) if study.overlap >= 2 else None,
        "agents": [_run_summary(outcomes, puzzle_types, set(trained), people_pass1) for outcomes in runs],
        "motion": _motion(counted, pool),
        "times": _times(counted),
        "by_position": _by_position(counted, study.puzzles_total()),
        "versus": [_versus(outcomes, side) for outcomes in runs],
        "training": _training([dataset] if dataset else sorted(datasets), types),
        "contamination": _contamination(live.count(), trained, counted, exclude_trained),
    }


def _study_facts(study: Study, datasets: dict[str, int], dataset: str | None) -> StudyFacts:
    return {
        "id": study.pk,
        "name": study.name,
        "split": study.split,
        "overlap": study.overlap,
        "attempts_per_puzzle": study.attempts_allowed,  # as it applies: 1 with verdicts hidden (Study.attempts_allowed)
        "time_limit_s": study.time_limit_s,
        "datasets": datasets,  # the generated bank and each import its pool draws on, with their puzzles
        "dataset": dataset,  # the one this report keeps to, or None: all of them
    }


def _intervals(boot: ClusterBootstrap) -> Intervals:
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


def _times(answers: list[Answer]) -> dict[str, TimeSample]:
    """Per type, the times of up to TIME_SAMPLE submitted answers, for the distribution charts."""
    return {
        name: {
            "wall_ms": [r["wall_ms"] for r in rows if r["submitted"]][:TIME_SAMPLE],
            "active_ms": [r["active_ms"] for r in rows if r["submitted"]][:TIME_SAMPLE],
        }
        for name, rows in _by_type(answers).items()
    }


def _by_position(answers: list[Answer], run_length: int) -> PositionSection:
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


def _no_input_beside_pool(study: Study) -> dict[str, int]:
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


def _dropped_types(study: Study, pool: Pool, puzzle_types: dict[int, str], rows: list[TypeRow]) -> list[DroppedType]:
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


def _public_truth(study: Study, pool: Pool) -> int:
    """Scored and gold puzzles whose answers are published: a lookup away for any bot."""
    scored_or_gold = Q(pk__in=pool) | Q(pk__in=study.gold.values("pk"))
    return Puzzle.objects.filter(scored_or_gold, truth_public=True).count()


def _first_answers(study: Study, pool: Pool) -> list[Answer]:
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
    """An answer from a person's first attempt on a puzzle (a named row of _first_answers)."""
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


def _by_type(answers: list[Answer]) -> dict[str, list[Answer]]:
    grouped: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        grouped[answer["type"]].append(answer)
    return dict(sorted(grouped.items()))


def _type_row(name: str, rows: list[Answer], k: int) -> TypeRow:
    """A type's counts, Pass@1 (and Pass@k with k > 1), Wilson interval and times; the clustered
    intervals (ci_low, ci_high and pass_k_ci_*) are filled in by _clustered."""
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


def _counted_columns(answers: list[Answer], rows: list[TypeRow]) -> CountedColumns:
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


def _clustered(
    answers: CountedColumns, rows: list[TypeRow], k: int
) -> tuple[ClusterBootstrap, ClusterIntervals, ClusterIntervals | None]:
    """The cluster bootstrap over the annotators of the counted answers; the intervals of Pass@1
    (and of Pass@k with k > 1) go into the type rows, each the bootstrap's where enough people
    answered the type, else the exact one over people (stats.people_interval); the bootstrap's
    are returned for the overall figures."""
    shape = (answers.people, len(answers.types))
    cells = answers.person * shape[1] + answers.type

    def table(weights: np.ndarray | None = None) -> np.ndarray:
        """Answers (or the weighted ones) per annotator and type."""
        counted = np.bincount(cells, weights=weights, minlength=shape[0] * shape[1])
        return counted.astype(float).reshape(shape)

    trials = table()
    solved = table(answers.right.astype(float))
    within_k = table(answers.within_k.astype(float))
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


def _overall(
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
    mean = _mean([r["pass1"] for r in answered])
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
        mean_k = _mean([r["pass_k"] for r in answered])
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


def _mean(values: list[float | None]) -> float | None:
    """The mean of values that are all there (a type's Pass@k is wherever its Pass@1 is); None when empty."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _motion(answers: list[Answer], pool: Pool) -> MotionSection:
    """People's pointer motion per type (their counted, submitted answers) beside each agent run's
    rollouts on the same puzzles (reporting/motion.py)."""
    groups: Groups = defaultdict(list)
    for answer in answers:
        if answer["submitted"]:
            groups[(answer["type"], PEOPLE)].append(answer["motion"])
    add_agents(groups, Rollout.objects.filter(puzzle_id__in=pool))
    return motion_section(groups)


def _agreement(answers: list[Answer]) -> Agreement:
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


# --- agents --------------------------------------------------------------------------------
def agents_on(pool: Pool) -> list[AgentSummary]:
    """Every agent run with rollouts on these puzzles, each on its own: harness and imported runs."""
    types = dict(Puzzle.objects.filter(pk__in=pool).values_list("pk", "type"))
    trained = set(TRAINED_ON.filter(puzzle_id__in=pool).values_list("puzzle_id", flat=True))
    return [_run_summary(outcomes, types, trained, {}) for outcomes in _runs_on(pool, types)]


@dataclass(frozen=True)
class RunOutcomes:
    """One run on the pool: each complete puzzle's first k outcomes that did not fail, the failed
    rollouts per type, and every puzzle the run reached."""

    run: AgentRun
    complete: dict[int, list[bool]]
    failed: dict[str, int]
    reached: set[int]


def _runs_on(pool: Pool, types: dict[int, str]) -> list[RunOutcomes]:
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


def _run_summary(
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
        "mean_pass1_over_types": _mean([r["pass1"] for r in type_rows]),
        "shared_types": [r["type"] for r in shared],
        "mean_pass1_shared": _mean([r["pass1"] for r in shared]),
        "people_mean_pass1_shared": _mean([people_pass1[r["type"]] for r in shared]),
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


# --- people against each agent run, paired by puzzle ----------------------------------------


PeopleOnPuzzles = dict[int, tuple[str, int, int]]  # puzzle: its type, people's answers, how many right


def _people_on_puzzles(answers: list[Answer]) -> PeopleOnPuzzles:
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


def _versus(outcomes: RunOutcomes, side: PeopleSide) -> Versus:
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
        "people_pass1": _mean([r["people_pass1"] for r in rows]),
        "agent_pass1": _mean([r["agent_pass1"] for r in rows]),
        "difference": _mean([r["difference"] for r in rows]),
        **figures,
        "people_only": total("people_only"),
        "agent_only": total("agent_only"),
        "both": total("both"),
        "neither": total("neither"),
        "people_only_share": total("people_only") / puzzles if puzzles else None,
        "agent_only_share": total("agent_only") / puzzles if puzzles else None,
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


# --- training environment runs per checkpoint, and the puzzles they played --------------------


def _training(datasets: list[str], people: list[TypeRow]) -> TrainingSection:
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
        "mean_success_over_types": _mean([row["success"] for row in types]),
        "people_mean_pass1": _mean([row["people_pass1"] for row in both]),
        "types": types,
    }


def _contamination(pool: int, trained: dict[int, str], answers: list[Answer], excluded: bool) -> Contamination:
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
