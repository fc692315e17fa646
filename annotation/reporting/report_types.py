"""The study report's shape (docs/reports.md): what study_report builds and every format reads.

TypedDicts, so that the report stays plain data (json.dumps and the templates take it as it is)
while mypy checks every key that is written or read. The JSON report is a public format: a key
added, renamed or dropped here is a change of that format. Pure: no Django, no database.
"""

from __future__ import annotations

from typing import TypedDict


class StudyFacts(TypedDict):
    """The study the report is of, as it applies."""

    id: int
    name: str
    split: str
    overlap: int
    attempts_per_puzzle: int  # 1 with verdicts hidden (Study.attempts_allowed)
    time_limit_s: int | None
    datasets: dict[str, int]  # the generated bank and each import its pool draws on, with their puzzles
    dataset: str | None  # the one this report keeps to, or None: all of them


class TypeRow(TypedDict):
    """People on one puzzle type: counts, Pass@1 (and Pass@k with k > 1), intervals and times."""

    type: str
    attempts: int
    puzzles: int
    annotators: int
    correct: int
    wrong: int
    timed_out: int
    not_submitted: int
    pass1: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str  # one of stats.INTERVAL_METHODS, "" without answers
    ci_people: float | None  # effective number of people (Kish) behind the interval
    wilson_low: float | None
    wilson_high: float | None
    submitted: int
    started: int
    submission_rate: float | None
    wall_median_ms: float | None
    wall_q1_ms: float | None
    wall_q3_ms: float | None
    active_median_ms: float | None
    active_q1_ms: float | None
    active_q3_ms: float | None
    mean_actions: float | None
    k: int
    correct_within_k: int | None
    pass_k: float | None
    pass_k_ci_low: float | None
    pass_k_ci_high: float | None
    pass_k_ci_method: str
    no_input: int


class DroppedType(TypedDict):
    """A type of the report's puzzles without people's Pass@1, and what its answers became."""

    type: str
    puzzles: int  # of the report's puzzles
    excluded_people: int  # excluded people who submitted an answer on it (left out, as all their answers)
    excluded_reasons: list[str]  # their exclusion reasons, distinct, as staff wrote them
    no_input: int  # included people's first attempts on it without input evidence (left out of Pass@1)
    not_submitted: int  # included people's answers on it started and never submitted


class Overall(TypedDict):
    """Every type together: the means over types, the pooled figures and the outcomes."""

    mean_pass1_over_types: float | None
    mean_ci_low: float | None
    mean_ci_high: float | None
    mean_ci_method: str
    attempts: int
    puzzles: int
    correct: int
    wrong: int
    timed_out: int
    not_submitted: int
    started: int
    pass1_pooled: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str
    ci_people: float | None  # effective number of people over every type
    wilson_low: float | None
    wilson_high: float | None
    k: int
    mean_pass_k_over_types: float | None
    mean_pass_k_ci_low: float | None
    mean_pass_k_ci_high: float | None
    mean_pass_k_ci_method: str
    pass_k_pooled: float | None
    pass_k_ci_low: float | None
    pass_k_ci_high: float | None
    pass_k_ci_method: str
    no_input: int


class Intervals(TypedDict):
    """How the intervals were made: the cluster bootstrap where enough people answered, else the
    exact interval over effective people (each cell's own method is beside it)."""

    method: str
    level: float
    interval: str
    annotators: int
    exact: bool  # every distinct resample, weighted by its probability
    resamples: int  # distinct resamples when exact, else draws
    seed: int | None
    min_people_for_bootstrap: int  # fewer people in a cell: few_people_method
    few_people_method: str


class Agreement(TypedDict):
    """Agreement on correctness among people who answered the same puzzle."""

    percent_agreement: float | None
    gwet_ac1: float | None
    agreement_n: int  # puzzles with 2 or more answers: percent agreement, AC1 and alpha
    fleiss_kappa: float | None
    fleiss_n: int
    krippendorff_alpha: float | None
    alpha_n: int


class AgentTypeRow(TypedDict):
    """One agent run on one puzzle type."""

    type: str
    puzzles: int
    pass1: float
    pass_k: dict[str, float]  # {"5": 0.6}: each k > 1 the run has rollouts for
    failed: int


class AgentSummary(TypedDict):
    """One agent run on the report's puzzles, from exactly k rollouts per puzzle."""

    name: str
    source: str
    rollouts_per_puzzle: int
    types: list[AgentTypeRow]
    mean_pass1_over_types: float | None  # over the run's own types
    shared_types: list[str]  # the types people have a Pass@1 on too
    mean_pass1_shared: float | None  # the run's mean Pass@1 over shared_types
    people_mean_pass1_shared: float | None  # people's mean Pass@1 over the same types
    pass_at: dict[str, float]  # {"1": 0.35, "5": 0.6}
    run: int
    model: str
    protocol: str
    failed: int
    failed_by_type: dict[str, int]
    short_puzzles: int  # fewer than k rollouts left: left out
    trained_on: int  # of its counted puzzles, those environment episodes played (contamination)


class MotionRow(TypedDict):
    """Pointer motion of one group (people, or an agent run) on one type or on all types."""

    type: str
    group: str
    attempts: int
    measured: int
    with_path: int
    path_px: float | None
    straightness: float | None
    peak_speed: float | None
    pause_ms: float | None
    density: float | None
    human_likeness: float | None
    humanlike_share: float | None


class MotionSection(TypedDict):
    """The rows per type, the rows over all types, and the human-likeness rule."""

    rows: list[MotionRow]
    overall: list[MotionRow]
    rule: str


class TimeSample(TypedDict):
    """A type's submitted answers' times, for the distribution charts."""

    wall_ms: list[int | None]
    active_ms: list[int | None]


class HalfFigures(TypedDict):
    """People's submitted, counted answers in one half of their runs."""

    answers: int
    people: int
    correct: int
    pass1: float | None
    wall_median_ms: float | None
    active_median_ms: float | None


class PositionRow(TypedDict):
    """One type (or "all types", pooled) in the first and the second half of each person's run."""

    type: str
    first: HalfFigures
    second: HalfFigures
    change: float | None  # second half's Pass@1 minus the first's


class PositionSection(TypedDict):
    """Pass@1 and times by where in their run people met the puzzle: learning and fatigue."""

    run_length: int  # places in each person's run: scored puzzles and gold (Study.puzzles_total)
    rows: list[PositionRow]
    overall: PositionRow
    unplaced: int  # answers without a position (stored before positions were kept): in neither half


class Beside(TypedDict):
    """Beside people against a run on a type (or over types): what a blind guess scores and the
    run's effort over people's (annotation/reporting/effort.py)."""

    chance_rate: float | None  # the mean chance rate of the type's puzzles (puzzles/chance.py); over types, the mean
    actions_ratio: float | None  # the median over puzzles of the run's actions over people's median
    time_ratio: float | None  # the same for active time
    effort_puzzles: int  # puzzles with an actions multiple


class VersusRow(TypedDict):
    """People against one agent run on one type's puzzles that both answered (or "all types")."""

    type: str
    puzzles: int  # answered by people and by the run (k rollouts)
    answers: int  # people's answers on them
    people_pass1: float | None  # mean over the puzzles of people's Pass@1 on each
    agent_pass1: float | None  # mean over the puzzles of the run's Pass@1 on each
    difference: float | None  # people minus the agent; over types: the mean of the types'
    ci_low: float | None  # 95% interval of the difference, by ci_method
    ci_high: float | None
    ci_method: str  # stats.PAIRED_METHODS: cluster bootstrap over people, or exact over few people
    people: int  # people with answers on the puzzles
    ci_people: float | None  # effective number of people (Kish) behind an exact interval
    people_right_agent_wrong: float | None  # the discordant shares: difference = this - the next
    agent_right_people_wrong: float | None
    people_only: int  # puzzles most of whose people were right, the agent not (most rollouts wrong)
    agent_only: int  # the reverse
    both: int
    neither: int
    people_only_share: float | None  # of the puzzles
    agent_only_share: float | None
    chance_rate: float | None  # as Beside's
    actions_ratio: float | None
    time_ratio: float | None
    effort_puzzles: int


class ScatterPoint(TypedDict):
    """Puzzles of a type with the same people's and agent's Pass@1, for the scatter."""

    type: str
    people: float
    agent: float
    puzzles: int


class UnpairedType(TypedDict):
    """A type that people or the run have and the comparison has not."""

    type: str
    people_puzzles: int  # puzzles of it with people's counted answers (0: see dropped_types)
    run_puzzles: int  # puzzles of it with the run's k rollouts
    run_failed: int  # the run's failed rollouts on it


class Versus(TypedDict):
    """People against one agent run on the same puzzles (docs/reports.md "People against an agent")."""

    name: str
    run: int
    rows: list[VersusRow]  # types with puzzles both answered
    overall: VersusRow  # Pass@1 and difference: means over those types; counts: summed
    resamples: int  # the report's cluster bootstrap (Intervals): distinct resamples when exact, else draws
    seed: int | None  # None: every distinct resample
    unpaired: list[UnpairedType]  # types left out of the comparison, one side having none
    points: list[ScatterPoint]


class TrainingType(TypedDict):
    """One checkpoint's training episodes on one puzzle type, beside people's Pass@1 on the type."""

    type: str
    episodes: int  # that ended (submitted or not); failed ones are left out
    solved: int
    success: float  # solved / episodes
    people_pass1: float | None  # people's Pass@1 on the type in this report; None: no answers


class TrainingCheckpoint(TypedDict):
    """One checkpoint of a trainer: the environment run its episodes were recorded in."""

    checkpoint: str
    name: str
    run: int
    started_at: str | None  # its first episode
    episodes: int
    solved: int
    failed: int  # closed before their end: left out
    success_pooled: float | None  # solved / episodes over every type
    mean_success_over_types: float | None  # each type weighs the same, as people's mean does
    people_mean_pass1: float | None  # people's mean Pass@1 over the types of both (the human line)
    types: list[TrainingType]


class TrainingClient(TypedDict):
    """A trainer (an environment token's client) and its checkpoints, in the order they began."""

    client: str
    checkpoints: list[TrainingCheckpoint]


class TrainingSection(TypedDict):
    """Environment runs' success per checkpoint beside people (docs/reports.md "Training runs")."""

    datasets: list[str]  # the episodes counted are on puzzles of these, any split
    clients: list[TrainingClient]


class Contamination(TypedDict):
    """The report's puzzles that environment episodes played (trained on), at any time."""

    pool: int  # the report's puzzles (not retired), before any exclusion
    trained: int  # of them, trained on
    by_type: dict[str, int]
    people_answers: int  # people's counted, submitted answers on trained-on puzzles
    runs: list[str]  # the environment runs that played them
    excluded: bool  # the report left the trained-on puzzles out (exclude_trained)


class HostedFamily(TypedDict):
    """People on one served family of a hosted benchmark: its type row's figures (the same rules as
    our types), and the peer's addresses of its puzzles in the report."""

    family: str
    type: str  # the report's type name, <benchmark>:<Family>
    address: str  # how the peer addresses a puzzle: seed (its generator makes it), index, id or none
    addresses: list[str]  # the report's puzzles of it, as the peer addresses them ("seed=17", "index=3")
    puzzles: int  # of the report's pool
    set_aside_puzzles: int  # drawn addresses the peer's API or the page check did not accept: never served
    answers: int  # people's submitted, counted first attempts
    people: int
    correct: int
    pass1: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str  # as the type row's: stats.INTERVAL_METHODS
    ci_people: float | None
    wall_median_ms: float | None
    active_median_ms: float | None


class SetAsideFamily(TypedDict):
    """A family of the benchmark never served as scored work, and why."""

    family: str
    by: str  # "probe": the peer's API did not accept its own truth; "page check": its page could not
    reason: str


class HostedParticipant(TypedDict):
    """One person's counted answers on the benchmark's families."""

    enrollment: int | None  # as in the per-participant CSV
    families: int
    answers: int
    correct: int
    pass1: float | None
    wall_median_ms: float | None
    active_median_ms: float | None


class HostedOverall(TypedDict):
    """A benchmark's families together, with intervals over the people who answered them."""

    mean_pass1_over_families: float | None  # each family weighs the same
    mean_ci_low: float | None
    mean_ci_high: float | None
    mean_ci_method: str
    pass1_pooled: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str
    answers: int
    people: int
    ci_people: float | None  # effective number of people over its families


class HostedBenchmark(TypedDict):
    """People on one hosted benchmark's families (docs/reports.md "Hosted benchmarks")."""

    name: str
    dataset: str  # hosted:<name>
    dialect: str
    server: str  # the base URL the puzzles were drawn from
    published_set: bool  # its stored puzzles are the paper's published set (as registered)
    families: list[HostedFamily]
    overall: HostedOverall
    set_aside: list[SetAsideFamily]
    participants: list[HostedParticipant]


class StudyReport(TypedDict):
    """The whole report of a study (annotation.reporting.reports.study_report)."""

    study: StudyFacts
    generated_at: str
    rules: str
    annotators: int
    excluded_annotators: int
    retired_puzzles: int
    public_truth_puzzles: int
    no_input_beside_pool: dict[str, int]
    types: list[TypeRow]
    dropped_types: list[DroppedType]  # types of the report's puzzles without people's Pass@1, and why
    overall: Overall
    intervals: Intervals
    agreement: Agreement | None  # None with an overlap of 1
    agents: list[AgentSummary]
    motion: MotionSection
    times: dict[str, TimeSample]
    by_position: PositionSection
    versus: list[Versus]  # one per agent run, in the order of agents
    training: TrainingSection
    contamination: Contamination
    hosted: list[HostedBenchmark]  # one per hosted benchmark with puzzles in the report's datasets
