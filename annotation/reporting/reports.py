"""Study reports: `study_report` assembles a study's report from one module per population:
people (`people.py`: Pass@1 and Pass@k per type with intervals clustered by annotator, outcomes,
times, halves of each run, agreement), agent runs (`agent_runs.py`: each run's Pass@k, people
against each run paired by puzzle, pointer motion people beside agents) and training runs
(`training.py`: checkpoints against people, the puzzles trained on); hosted benchmarks (`hosted.py`:
another project's families served by its own server, per benchmark).

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
- beside each type of people against a run: its chance rate, what a blind guess scores (each
  puzzle's from its type's answer space, puzzles/types: `chance_rate`; the mean over the type's
  puzzles in the report; over types, the mean of the types'), and the run's effort over people's
  (`actions_ratio`, `time_ratio`): per puzzle, the run's median semantic actions and active time
  over its counted rollouts that reached the page, over people's median over their counted
  answers; per type the median of its puzzles' multiples, over types the median over all their
  puzzles (annotation/reporting/effort.py);
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
  anyone can look their answers up, so results on them, an agent's above all, prove no skill;
- a hosted benchmark's families (`hosted`) are puzzle types named <benchmark>:<Family>, counted by
  every rule above, their verdict the peer's own (its check_answer, forwarded once per attempt);
  per benchmark, the mean over its families weighs each family the same, with its interval over
  the people who answered them by Pass@1's rule; the families never served are named with why
  (the peer's API did not accept its own truth, or its page could not submit a correct answer),
  and the report says where the puzzles came from (the peer's seeds, indices or ids) and whether
  they are the benchmark paper's published set.
"""

from __future__ import annotations

from datetime import UTC, datetime

from annotation.models import Enrollment, Slot, Study
from annotation.reporting import agent_runs, hosted, people, training
from annotation.reporting.agent_runs import agents_on
from annotation.reporting.effort import report_effort, versus_beside
from annotation.reporting.people import submitted_late
from annotation.reporting.report_types import StudyFacts, StudyReport, Versus
from annotation.reporting.training import TRAINED_ON
from puzzles.chance import chance_rates, type_chance
from puzzles.models import Puzzle
from puzzles.selectors import dataset_counts

# agents_on and submitted_late are read from here by the agents' and the studies' code.
__all__ = ["RULES", "agents_on", "study_report", "submitted_late"]

RULES = __doc__.split("Counting rules (written into every report's `rules`):\n", 1)[1].strip()


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
    counts = people.people_counts(study, pool)
    counted, types = counts.counted, counts.types
    puzzle_types = dict(Puzzle.objects.filter(pk__in=pool).values_list("pk", "type"))
    runs = agent_runs.runs_on(pool, puzzle_types)
    people_pass1 = {row["type"]: row["pass1"] for row in types if row["pass1"] is not None}
    side = agent_runs.PeopleSide.of(counts, puzzle_types)
    return {
        "study": _study_facts(study, datasets, dataset),
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rules": RULES,
        "annotators": len({a["participant"] for a in counted}),
        "excluded_annotators": Enrollment.objects.filter(study=study, excluded=True).count(),
        "retired_puzzles": retired,
        "public_truth_puzzles": people.public_truth(study, pool),
        "no_input_beside_pool": people.no_input_beside_pool(study),
        "types": types,
        "dropped_types": people.dropped_types(study, pool, puzzle_types, types),
        "overall": people.overall_figures(types, counts.k, counts.boot, counts.pass1, counts.pass_k),
        "intervals": people.interval_facts(counts.boot),
        "agreement": people.agreement(counted) if study.overlap >= 2 else None,
        "agents": [agent_runs.run_summary(outcomes, puzzle_types, set(trained), people_pass1) for outcomes in runs],
        "motion": agent_runs.motion_beside_agents(counted, pool),
        "times": people.time_samples(counted),
        "by_position": people.by_position(counted, study.puzzles_total()),
        "versus": _versus(runs, side, counted, puzzle_types),
        "training": training.training_section([dataset] if dataset else sorted(datasets), types),
        "contamination": training.contamination(live.count(), trained, counted, exclude_trained),
        "hosted": hosted.hosted_section(
            study=study, counts=counts, pool=pool, datasets=[dataset] if dataset else datasets
        ),
    }


def _versus(
    runs: list[agent_runs.RunOutcomes],
    side: agent_runs.PeopleSide,
    counted: list[people.Answer],
    puzzle_types: dict[int, str],
) -> list[Versus]:
    """People against each run, each type's chance rate and the run's effort beside."""
    if not runs:
        return []  # the chance rates read every puzzle's truth: only when there is a run to compare
    chance = {name: entry["rate"] for name, entry in type_chance(chance_rates(puzzle_types), puzzle_types).items()}
    efforts = report_effort(counted, puzzle_types)
    return [versus_beside(agent_runs.versus(outcomes, side), efforts, chance) for outcomes in runs]


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
