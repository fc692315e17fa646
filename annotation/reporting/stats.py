"""Statistics for the reports.

Pure: Python and numpy only, no Django and no database.
"""

from __future__ import annotations

import math
from collections import Counter

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
    agree, totals = 0.0, Counter()
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


# --- spread --------------------------------------------------------------------------------


def median_iqr(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """(median, first quartile, third quartile), interpolated linearly; Nones when empty."""
    if len(values) == 0:
        return None, None, None
    median, q1, q3 = np.percentile(np.asarray(values, dtype=float), [50, 25, 75])
    return float(median), float(q1), float(q3)
