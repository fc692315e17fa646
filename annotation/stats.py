"""Statistics for the reports, and the reader of a published agent's output folders.

Pure: Python and numpy only, no Django and no database.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

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


# --- a published agent's output folders ----------------------------------------------------

OUTCOME_KEYS = ("correct", "success", "is_correct", "passed")  # booleans
SCORE_KEYS = ("reward", "score")  # numbers: correct when >= 1.0
TYPE_KEYS = ("type", "puzzle_type", "captcha_type")
ROLLOUT_DIR = re.compile(r"rollout_(\d+)")


@dataclass
class AgentOutputs:
    rollouts: dict[str, list[bool]]  # puzzle id -> correctness, in rollout order
    types: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def read_agent_outputs(root: Path) -> AgentOutputs:
    """Every rollout under root: <puzzle>/[rollout_<n>/]summary.json, or <puzzle>.json, at any depth.

    A JSON file other than summary.json that lies in a puzzle's folder (one holding a summary.json
    itself or in its rollout_<n> folders) is another artifact of that run and is skipped. Files
    that cannot be read, and a second file for the same puzzle and rollout, become problems.
    """
    root = Path(root)
    if not root.is_dir():
        return AgentOutputs({}, problems=[(str(root), "not a folder")])
    found: dict[tuple[str, int], tuple[bool, Path]] = {}
    types: dict[str, str] = {}
    models: set[str] = set()
    problems: list[tuple[str, str]] = []
    for path in _candidates(root):
        where = _puzzle_and_rollout(path, root)
        summary, reason = _read_summary(path) if where else (None, "no puzzle folder above it")
        if not reason and where in found:
            reason = f"rollout {where[1]} of {where[0]} was already read from {found[where][1]}"
        if reason:
            problems.append((str(path), reason))
            continue
        found[where] = (summary["correct"], path)
        if summary["type"]:
            types.setdefault(where[0], summary["type"])
        if summary["model"]:
            models.add(summary["model"])
    if len(models) > 1:
        problems.append((str(root), f"several models: {', '.join(sorted(models))}"))
    rollouts: dict[str, list[bool]] = {}
    for (puzzle, _), (correct, _) in sorted(found.items()):
        rollouts.setdefault(puzzle, []).append(correct)
    return AgentOutputs(rollouts, types, models.pop() if len(models) == 1 else None, problems)


def _candidates(root: Path) -> list[Path]:
    """The JSON files below root that may be summaries, in path order."""
    return [p for p in sorted(root.rglob("*.json"))
            if p.is_file() and (p.name == "summary.json" or not _in_puzzle_folder(p))]


def _in_puzzle_folder(path: Path) -> bool:
    """Whether a non-summary JSON file sits in a puzzle's folder or in one of its rollout folders."""
    folder = path.parent
    return (folder / "summary.json").is_file() or any(
        ROLLOUT_DIR.fullmatch(p.parent.name) for p in folder.glob("rollout_*/summary.json"))


def _puzzle_and_rollout(path: Path, root: Path) -> tuple[str, int] | None:
    """(puzzle id, rollout number) from a file's place below root; None when it names no puzzle."""
    parts = path.relative_to(root).parts[:-1]
    rollout = 0
    if parts and (match := ROLLOUT_DIR.fullmatch(parts[-1])):
        rollout, parts = int(match.group(1)), parts[:-1]
    if path.name != "summary.json":
        return path.stem, rollout
    return (parts[-1], rollout) if parts else None


def _read_summary(path: Path) -> tuple[dict | None, str | None]:
    """({correct, type, model}, None) from a summary file, or (None, why it cannot be used)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return None, f"unreadable: {error}"
    if not isinstance(data, dict):
        return None, "not a JSON object"
    correct, reason = _outcome(data)
    if reason:
        return None, reason
    kind = next((data[k] for k in TYPE_KEYS if isinstance(data.get(k), str) and data[k]), None)
    model = data["model"] if isinstance(data.get("model"), str) and data["model"] else None
    return {"correct": correct, "type": kind, "model": model}, None


def _outcome(data: dict) -> tuple[bool | None, str | None]:
    """Correctness from the first outcome key present (null counts as absent), or why there is none."""
    for key in OUTCOME_KEYS + SCORE_KEYS:
        value = data.get(key)
        if value is None:
            continue
        if key in OUTCOME_KEYS:
            return (value, None) if isinstance(value, bool) else (None, f"{key} is not true or false")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None, f"{key} is not a number"
        return value >= 1.0, None
    return None, f"no outcome ({', '.join(OUTCOME_KEYS + SCORE_KEYS)})"
