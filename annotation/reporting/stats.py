"""Statistics for the reports.

Pure: Python, numpy and scipy.stats (imported where used) only, no Django and no database.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z_95 = 1.959963984540054  # two-sided 95% normal quantile


# --- proportions ---------------------------------------------------------------------------


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for successes out of n; (0.0, 1.0) when n is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p, z2 = successes / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct: 1 - C(n-c, k)/C(n, k) (Chen et al. 2021)."""
    if k < 1 or k > n or c < 0 or c > n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def mean_pass_at_k(counts: list[tuple[int, int]], k: int) -> float:
    """Mean pass@k over puzzles given as (samples, correct); every puzzle needs k samples."""
    if not counts:
        raise ValueError("no puzzles")
    short = sum(1 for n, _ in counts if n < k)
    if short:
        raise ValueError(f"{short} of {len(counts)} puzzles have fewer than k={k} samples")
    return sum(pass_at_k(n, c, k) for n, c in counts) / len(counts)


# --- exact intervals for few people ---------------------------------------------------------


def clopper_pearson(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """The Clopper-Pearson (exact binomial) interval of successes out of n, through the beta
    quantiles, so that both may be effective (non-integer) counts as in Korn and Graubard (1998);
    (0.0, 1.0) when n is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    # Imported here, not with the module: scipy.stats is about 85 MB of memory and 0.7 s of start-up,
    # and this module is imported by every web process and worker (through the URLs), though only a
    # report with few people calls this.
    from scipy.stats import beta

    tail = (1 - level) / 2
    low = 0.0 if successes == 0 else float(beta.ppf(tail, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1 - tail, successes + 1, n - successes))
    return low, high


def effective_people(answers_per_person: Sequence[float] | np.ndarray) -> float:
    """Kish's effective number of clusters, (sum m)^2 / sum m^2 over people with m answers: the
    sample size of a share when each person's answers move together (intra-class correlation 1,
    the largest design effect). Equal to the number of people when all answered as many."""
    sizes = np.asarray(answers_per_person, dtype=float)
    sizes = sizes[sizes > 0]
    return float(sizes.sum() ** 2 / (sizes * sizes).sum()) if len(sizes) else 0.0


# Each interval's method. The cluster bootstrap needs enough people to see the spread between
# them: with fewer than MIN_PEOPLE_FOR_BOOTSTRAP in a cell (or when every resample gives the same
# share, so that it would print a zero-width interval) the exact interval over effective people
# is used instead.
MIN_PEOPLE_FOR_BOOTSTRAP = 10
BY_BOOTSTRAP = "cluster bootstrap"
FEW_PEOPLE = "Clopper-Pearson over people (few participants)"
NO_SPREAD = "Clopper-Pearson over people (no spread between people)"
INTERVAL_METHODS = (BY_BOOTSTRAP, FEW_PEOPLE, NO_SPREAD)


def people_interval(
    share: float | None,
    answers_per_person: Sequence[float] | np.ndarray,
    bootstrapped: tuple[float | None, float | None],
) -> tuple[float | None, float | None, str]:
    """(low, high, method) of a share: the bootstrap's interval where at least
    MIN_PEOPLE_FOR_BOOTSTRAP people answered and it has a width, else few_people_interval;
    (None, None, "") without a share."""
    if share is None:
        return None, None, ""
    people = int((np.asarray(answers_per_person) > 0).sum())
    low, high = bootstrapped
    if people >= MIN_PEOPLE_FOR_BOOTSTRAP and low is not None and high is not None and high > low:
        return low, high, BY_BOOTSTRAP
    low, high = few_people_interval(share, answers_per_person)
    return low, high, FEW_PEOPLE if people < MIN_PEOPLE_FOR_BOOTSTRAP else NO_SPREAD


def few_people_interval(share: float, answers_per_person: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """A share's 95% interval taking each person as one observation: Clopper-Pearson on the
    effective number of people n (effective_people), with share x n successes."""
    n = effective_people(answers_per_person)
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"a share is between 0 and 1, got {share}")
    return clopper_pearson(min(share * n, n), n)


# --- agreement -----------------------------------------------------------------------------


def fleiss_kappa(ratings: list[list[int]]) -> float | None:
    """Fleiss' kappa from per-item category counts, m >= 2 raters on every item; None if undefined."""
    if not ratings:
        return None
    table = np.asarray(ratings, dtype=float)
    if table.ndim != 2 or table.shape[1] < 1 or (table < 0).any():
        raise ValueError("ratings must be rows of equal length holding counts >= 0")
    per_item = table.sum(axis=1)
    m = per_item[0]
    if m < 2 or (per_item != m).any():
        raise ValueError("every item needs the same number (>= 2) of ratings")
    observed = ((table * table).sum(axis=1) - m) / (m * (m - 1))
    shares = table.sum(axis=0) / table.sum()
    expected = float((shares * shares).sum())
    if expected >= 1.0 - 1e-12:
        return None
    return float((observed.mean() - expected) / (1.0 - expected))


def fleiss_kappa_binary(outcomes: list[list[bool]]) -> tuple[float | None, int]:
    """Fleiss' kappa of per-puzzle correctness from distinct people, and how many puzzles it used.

    Puzzles with fewer than 2 ratings are left out. Fleiss' kappa needs the same number of raters
    on every item, so only puzzles with the most common count m are used (a tie goes to the
    larger m); use krippendorff_alpha_nominal to keep every puzzle.
    """
    rated = [o for o in outcomes if len(o) >= 2]
    if not rated:
        return None, 0
    tally = Counter(len(o) for o in rated)
    m = max(tally, key=lambda size: (tally[size], size))
    used = [o for o in rated if len(o) == m]
    table = [[len(o) - sum(map(bool, o)), sum(map(bool, o))] for o in used]
    return fleiss_kappa(table), len(used)


def krippendorff_alpha_nominal(units: list[list[int]]) -> float | None:
    """Krippendorff's alpha for nominal values, any number of ratings per unit; None if undefined.

    Units with fewer than 2 ratings are not pairable and are left out.
    """
    agree, totals = 0.0, Counter[int]()
    for unit in units:
        if len(unit) < 2:
            continue
        seen = Counter(unit)
        agree += sum(c * (c - 1) for c in seen.values()) / (len(unit) - 1)
        totals.update(seen)
    n = sum(totals.values())
    by_chance = sum(c * (c - 1) for c in totals.values())
    if n == 0 or n * (n - 1) == by_chance:
        return None
    return ((n - 1) * agree - by_chance) / (n * (n - 1) - by_chance)


def percent_agreement(units: list[list[int]]) -> float | None:
    """Observed agreement: over units with 2 or more ratings, the mean share of pairs of ratings that
    agree (sum over values of c(c - 1), over m(m - 1), m ratings on the unit); None without such a unit."""
    tallies = [Counter(unit) for unit in units if len(unit) >= 2]
    return _pairs_agreeing(tallies)


def _pairs_agreeing(tallies: list[Counter]) -> float | None:
    shares = [sum(c * (c - 1) for c in tally.values()) / (m * (m - 1)) for tally in tallies for m in [tally.total()]]
    return sum(shares) / len(shares) if shares else None


def gwet_ac1(units: list[list[int]], categories: Sequence[int]) -> float | None:
    """Gwet's AC1 (Gwet 2008) for nominal values, any number of ratings per unit; None if undefined.

    Units with fewer than 2 ratings are left out. AC1 = (pa - pe) / (1 - pe), pa the percent
    agreement, pe = sum_k pi_k (1 - pi_k) / (q - 1) over the q categories, pi_k the mean over units of
    the share of the unit's ratings in category k. Unlike kappa and alpha, it stays near the observed
    agreement when nearly every rating falls in one category (the kappa paradox).
    """
    tallies = [Counter(unit) for unit in units if len(unit) >= 2]
    q = len(categories)
    if not tallies or q < 2:
        return None
    unknown = {value for tally in tallies for value in tally} - set(categories)
    if unknown:
        raise ValueError(f"ratings outside the categories: {sorted(unknown)}")
    pa = _pairs_agreeing(tallies)
    assert pa is not None
    shares = [sum(tally[k] / tally.total() for tally in tallies) / len(tallies) for k in categories]
    pe = sum(pi * (1 - pi) for pi in shares) / (q - 1)
    return (pa - pe) / (1 - pe)


# --- intervals clustered by annotator -------------------------------------------------------

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 14  # fixed: the same data gives the same interval, run after run


@dataclass(frozen=True)
class ClusterIntervals:
    """Percentile intervals from one cluster bootstrap: per column (puzzle type), pooled over every
    column (a ratio of sums), and of the unweighted mean over columns. (None, None) where there is
    none: a column that fewer than 2 clusters have trials in, or nothing at all."""

    columns: list[tuple[float | None, float | None]]
    pooled: tuple[float | None, float | None]
    mean: tuple[float | None, float | None]


class ClusterBootstrap:
    """A cluster (one-stage) bootstrap over annotators: each resample draws as many annotators as
    there are, with replacement, and keeps all of each drawn annotator's answers; an annotator
    drawn twice counts twice. Proportions are ratios of sums over the resample, and the interval is
    the percentile interval (the inverted CDF: the lowest resampled value whose cumulative share
    reaches (1 - level)/2, and likewise for (1 + level)/2).

    With few annotators every distinct resample is enumerated, each weighted by its multinomial
    probability (the exact bootstrap distribution); otherwise `resamples` are drawn with a fixed
    seed. Both are deterministic. Every interval of one ClusterBootstrap shares its resamples, so
    the mean over types carries the correlation between types that one annotator brings.

    trials: annotators x columns (answers of each annotator in each puzzle type).
    """

    def __init__(
        self,
        trials: np.ndarray,
        *,
        level: float = 0.95,
        resamples: int = BOOTSTRAP_RESAMPLES,
        seed: int = BOOTSTRAP_SEED,
    ):
        self.trials = np.asarray(trials, dtype=float)
        if self.trials.ndim != 2 or (self.trials < 0).any():
            raise ValueError("trials must be a table (annotators x columns) of counts >= 0")
        if not 0 < level < 1:
            raise ValueError(f"level must be between 0 and 1, got {level}")
        self.level = level
        clusters = self.trials.shape[0]
        self.clusters = clusters
        distinct = math.comb(2 * clusters - 1, clusters) if clusters else 0
        self.exact = 0 < distinct <= resamples
        if self.exact:
            counts = np.array(
                [
                    np.bincount(draw, minlength=clusters)
                    for draw in itertools.combinations_with_replacement(range(clusters), clusters)
                ],
                dtype=float,
            )
            ways = np.array(
                [math.factorial(clusters) / math.prod(math.factorial(int(c)) for c in row) for row in counts]
            )
            self.weights = ways / ways.sum()
        elif clusters:
            drawn = np.random.default_rng(seed).integers(0, clusters, size=(resamples, clusters), dtype=np.int32)
            offsets = (np.arange(resamples, dtype=np.int64) * clusters)[:, None]
            counts = np.bincount((drawn + offsets).ravel(), minlength=resamples * clusters).reshape(resamples, clusters)
            counts = counts.astype(float)
            self.weights = np.full(resamples, 1.0 / resamples)
        else:
            counts, self.weights = np.zeros((0, 0)), np.zeros(0)
        self.counts = counts  # resamples x clusters: how often each annotator was drawn
        self.resamples = len(self.weights)
        self._trials_drawn = counts @ self.trials if clusters else np.zeros((0, self.trials.shape[1]))

    def intervals(self, successes: np.ndarray) -> ClusterIntervals:
        """The intervals of successes / trials (same shape as trials) per column, pooled and the mean over columns."""
        successes = np.asarray(successes, dtype=float).reshape(self.trials.shape)
        if (successes < 0).any() or (successes > self.trials).any():
            raise ValueError("need 0 <= successes <= trials")
        return self._ratio_intervals(successes, self.trials, self._trials_drawn)

    def weighted_means(self, values: np.ndarray, weights: np.ndarray) -> ClusterIntervals:
        """The intervals of sum(values) / sum(weights) over the drawn annotators (annotators x
        columns, both), per column, pooled and the mean over columns: a weighted mean of
        per-answer values, which may be negative (a difference)."""
        values = np.asarray(values, dtype=float)
        weights = np.asarray(weights, dtype=float)
        if values.shape != weights.shape or weights.ndim != 2 or weights.shape[0] != self.clusters:
            raise ValueError("values and weights must both be tables of annotators x columns")
        if (weights < 0).any():
            raise ValueError("weights must be >= 0")
        drawn = self.counts @ weights if self.clusters else np.zeros((0, weights.shape[1]))
        return self._ratio_intervals(values, weights, drawn)

    def _ratio_intervals(
        self, numerators: np.ndarray, denominators: np.ndarray, drawn_denominators: np.ndarray
    ) -> ClusterIntervals:
        columns = denominators.shape[1]
        if not self.clusters or not columns:
            return ClusterIntervals([(None, None)] * columns, (None, None), (None, None))
        drawn = self.counts @ numerators
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = drawn / drawn_denominators  # nan where a resample has no answers in the column
            pooled = drawn.sum(axis=1) / drawn_denominators.sum(axis=1)
        answered = (denominators > 0).sum(axis=0)
        per_column = [self._percentiles(rates[:, j]) if answered[j] >= 2 else (None, None) for j in range(columns)]
        # The mean over the columns a resample has answers in (a column nobody drawn answered
        # is left out of that resample's mean).
        kept = ~np.isnan(rates)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(kept, rates, 0.0).sum(axis=1) / kept.sum(axis=1)
        enough = (answered > 0).any() and (denominators.sum(axis=1) > 0).sum() >= 2
        return ClusterIntervals(
            per_column,
            self._percentiles(pooled) if enough else (None, None),
            self._percentiles(mean) if enough else (None, None),
        )

    def _percentiles(self, values: np.ndarray) -> tuple[float | None, float | None]:
        keep = ~np.isnan(values)
        if not keep.any():
            return None, None
        return weighted_percentile_interval(values[keep], self.weights[keep], self.level)


def weighted_percentile_interval(
    values: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray, level: float = 0.95
) -> tuple[float, float]:
    """The central interval of a discrete distribution (values with weights, renormalised): the
    lowest value whose cumulative weight reaches (1 - level)/2, and the lowest reaching (1 + level)/2."""
    values, weights = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    if not len(values) or len(values) != len(weights) or (weights < 0).any() or weights.sum() <= 0:
        raise ValueError("need as many weights >= 0 as values, not all 0")
    order = np.argsort(values, kind="stable")
    values, cumulative = values[order], np.cumsum(weights[order]) / weights.sum()
    tail = (1 - level) / 2

    def at(q: float) -> float:
        index = int(np.searchsorted(cumulative, q - 1e-12, side="left"))
        return float(values[min(index, len(values) - 1)])

    return at(tail), at(1 - tail)


# --- spread --------------------------------------------------------------------------------


def mean_of_present(values: Sequence[float | None]) -> float | None:
    """The mean of values that are all there (a type's Pass@k is wherever its Pass@1 is); None when empty."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def median_iqr(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """(median, first quartile, third quartile), interpolated linearly; Nones when empty."""
    if len(values) == 0:
        return None, None, None
    median, q1, q3 = np.percentile(np.asarray(values, dtype=float), [50, 25, 75])
    return float(median), float(q1), float(q3)


# --- people against an agent on the same puzzles --------------------------------------------


@dataclass(frozen=True)
class PairedPuzzles:
    """One type's puzzles that people and an agent run both answered: per puzzle, people's answers
    (one per person) and how many were right, and the agent's Pass@1 on it (correct / rollouts)."""

    answers: np.ndarray  # int, >= 1
    correct: np.ndarray  # int, 0..answers
    agent: np.ndarray  # float, 0..1

    @classmethod
    def of(cls, puzzles: Sequence[tuple[int, int, float]]) -> PairedPuzzles:
        """From (answers, correct, agent Pass@1) per puzzle."""
        table = np.asarray(puzzles, dtype=float).reshape(-1, 3)
        answers, correct, agent = table[:, 0].astype(int), table[:, 1].astype(int), table[:, 2]
        if (answers < 1).any() or (correct < 0).any() or (correct > answers).any() or ((agent < 0) | (agent > 1)).any():
            raise ValueError("need answers >= 1, 0 <= correct <= answers and 0 <= agent <= 1 per puzzle")
        return cls(answers, correct, agent)

    @property
    def people(self) -> np.ndarray:
        """People's Pass@1 per puzzle."""
        return self.correct / self.answers

    def difference(self) -> float:
        """Mean over the puzzles of people's Pass@1 minus the agent's."""
        return float((self.people - self.agent).mean())


@dataclass(frozen=True)
class PairedCells:
    """People's answers on the puzzles an agent run also answered, summed per person (row) and
    type (column). An answer y (1 right, 0 not) on puzzle p of a type with n paired puzzles, p
    answered by m_p people, weighs w = 1 / (n m_p): each puzzle weighs the same and a type's
    weights sum to 1, so that a type's difference mean_p (h_p - a_p) is the sum of w (y - a_p).
    It splits into the two discordant shares, people right and the agent wrong, w y (1 - a_p),
    less the reverse, w (1 - y) a_p (the cells b and c of McNemar's table when a_p is 0 or 1)."""

    weight: np.ndarray  # people x types
    difference: np.ndarray  # w (y - a)
    people_ahead: np.ndarray  # w y (1 - a)
    agent_ahead: np.ndarray  # w (1 - y) a

    @classmethod
    def of(
        cls,
        person: Sequence[int] | np.ndarray,
        column: Sequence[int] | np.ndarray,
        puzzle: Sequence[int] | np.ndarray,
        right: Sequence[bool] | np.ndarray,
        agent: Sequence[float] | np.ndarray,
        shape: tuple[int, int],
    ) -> PairedCells:
        """From one entry per answer: its person's row, its type's column, its puzzle (any id),
        whether it was right, and the agent's Pass@1 on its puzzle."""
        person, column = np.asarray(person, dtype=np.int64), np.asarray(column, dtype=np.int64)
        y, a = np.asarray(right, dtype=float), np.asarray(agent, dtype=float)
        _, on_puzzle, answers = np.unique(np.asarray(puzzle, dtype=np.int64), return_inverse=True, return_counts=True)
        puzzles_per_column = np.bincount(column[np.unique(on_puzzle, return_index=True)[1]], minlength=shape[1])
        w = 1.0 / (puzzles_per_column[column] * answers[on_puzzle]) if len(y) else np.zeros(0)
        cells = person * shape[1] + column

        def table(values: np.ndarray) -> np.ndarray:
            return np.bincount(cells, weights=values, minlength=shape[0] * shape[1]).reshape(shape)

        return cls(table(w), table(w * (y - a)), table(w * y * (1 - a)), table(w * (1 - y) * a))

    def over_types(self, columns: Sequence[int]) -> PairedCells:
        """The cells of the mean over these types (each weighing the same), as one column."""
        index = list(columns)
        share = 1.0 / len(index) if index else 0.0

        def mean(table: np.ndarray) -> np.ndarray:
            return table[:, index].sum(axis=1, keepdims=True) * share

        return PairedCells(mean(self.weight), mean(self.difference), mean(self.people_ahead), mean(self.agent_ahead))


# The paired difference's intervals follow the rule of Pass@1's: the cluster bootstrap over people
# from MIN_PEOPLE_FOR_BOOTSTRAP people, else an exact interval over the effective number of people.
PAIRED_FEW_PEOPLE = "Bonferroni-combined Clopper-Pearson of the discordant shares over people (few participants)"
PAIRED_NO_SPREAD = "Bonferroni-combined Clopper-Pearson of the discordant shares over people (no spread between people)"
PAIRED_METHODS = (BY_BOOTSTRAP, PAIRED_FEW_PEOPLE, PAIRED_NO_SPREAD)


def discordant_interval(
    people_ahead: float, agent_ahead: float, person_weights: Sequence[float] | np.ndarray, level: float = 0.95
) -> tuple[float, float]:
    """A conservative exact interval of a paired difference b - c (b: the share where people are
    right and the agent is not, c: the reverse), taking each person as one observation: the
    Clopper-Pearson intervals of b and of c, each at 1 - (1 - level) / 2 on the effective number
    of people n (Kish, each person weighing what their answers weigh), combined by Bonferroni into
    [low_b - high_c, high_b - low_c]. Both intervals hold together with probability level or
    more, and then so does the difference's."""
    if not (0.0 <= people_ahead <= 1.0 and 0.0 <= agent_ahead <= 1.0):
        raise ValueError(f"discordant shares are between 0 and 1, got {people_ahead} and {agent_ahead}")
    n = effective_people(person_weights)
    each = 1 - (1 - level) / 2
    low_b, high_b = clopper_pearson(min(people_ahead * n, n), n, level=each)
    low_c, high_c = clopper_pearson(min(agent_ahead * n, n), n, level=each)
    return low_b - high_c, high_b - low_c


def paired_interval(
    cells: PairedCells, column: int, bootstrapped: tuple[float | None, float | None]
) -> tuple[float | None, float | None, str]:
    """(low, high, method) of one column's difference: the bootstrap's interval where at least
    MIN_PEOPLE_FOR_BOOTSTRAP people answered and it has a width, else discordant_interval;
    (None, None, "") without answers."""
    weights = cells.weight[:, column]
    people = int((weights > 0).sum())
    if not people:
        return None, None, ""
    low, high = bootstrapped
    if people >= MIN_PEOPLE_FOR_BOOTSTRAP and low is not None and high is not None and high > low:
        return low, high, BY_BOOTSTRAP
    total = float(weights.sum())
    b, c = float(cells.people_ahead[:, column].sum()) / total, float(cells.agent_ahead[:, column].sum()) / total
    low, high = discordant_interval(min(b, 1.0), min(c, 1.0), weights)
    return low, high, PAIRED_FEW_PEOPLE if people < MIN_PEOPLE_FOR_BOOTSTRAP else PAIRED_NO_SPREAD
