"""Chance rates checked by guessing: each type's worked-out chance rate (`chance_rate`, from its
answer space) against blind guesses (`random_answer`, public data only) sent through the type's own
verifier, over generated puzzles. Seeded, so a run repeats exactly.

Goal (issue 42): the two agree within one percentage point for every type. Hold_Button has
nothing to guess (any hold long enough passes) and says so.

Usage: python bench/chance.py [--puzzles 40] [--guesses 1000] [--seed 42]
No database: the types are pure (puzzles/types).
"""

import argparse
import os
import resource
import sys
import time
from typing import Any

import numpy as np
from _setup import ROOT

sys.path.insert(0, str(ROOT))

from puzzles.registry import registry

LIMIT_PTS = 1.0  # the goal: worked out and guessed within one percentage point


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(puzzle_type: Any, puzzles: int, guesses: int, seed: int) -> tuple[float | None, float | None, float]:
    """(worked-out mean over the puzzles, share of guesses accepted, CPU s spent verifying)."""
    rng = np.random.default_rng([seed, sum(map(ord, puzzle_type.name))])
    rates: list[float] = []
    accepted = tried = 0
    cpu = 0.0
    for _ in range(puzzles):
        puzzle = puzzle_type.generate(rng)
        rate = puzzle_type.chance_rate(puzzle.truth, puzzle.masks)
        if rate is None:
            return None, None, 0.0
        rates.append(rate)
        started = cpu_seconds()
        for _ in range(guesses):
            answer = puzzle_type.random_answer(puzzle.public, rng)
            verdict = puzzle_type.verify(puzzle.truth, answer, puzzle.masks)
            if verdict.reason.startswith("malformed"):
                raise AssertionError(f"{puzzle_type.name}: a guess the verifier cannot read: {answer!r}")
            accepted += verdict.correct
            tried += 1
        cpu += cpu_seconds() - started
    return float(np.mean(rates)), accepted / tried, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--puzzles", type=int, default=40, help="generated puzzles per type")
    parser.add_argument("--guesses", type=int, default=1000, help="blind guesses per puzzle")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    print(f"load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{args.puzzles} puzzles x {args.guesses} guesses per type, seed {args.seed}")
    print(f"{'type':<18} {'worked out':>11} {'guessed':>9} {'diff pts':>9} {'verify CPU':>11}  {'rule'}")
    started, cpu_start = time.perf_counter(), cpu_seconds()
    failures = []
    for puzzle_type in registry().all():
        worked, guessed, cpu = measure(puzzle_type, args.puzzles, args.guesses, args.seed)
        if worked is None or guessed is None:
            print(f"{puzzle_type.name:<18} {'none':>11} {'-':>9} {'-':>9} {'-':>11}  {puzzle_type.chance_rule}")
            continue
        diff = 100 * (guessed - worked)
        failures += [puzzle_type.name] if abs(diff) > LIMIT_PTS else []
        per_guess = 1e6 * cpu / (args.puzzles * args.guesses)
        print(
            f"{puzzle_type.name:<18} {100 * worked:>10.3f}% {100 * guessed:>8.3f}% {diff:>+9.3f} "
            f"{per_guess:>8.1f} us  {puzzle_type.chance_rule}"
        )
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu_start
    print(f"wall {wall:.1f} s, CPU {cpu:.1f} s (generation included)")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if failures:
        print(f"FAIL: more than {LIMIT_PTS} percentage point apart: {', '.join(failures)}")
        sys.exit(1)
    print(f"all types within {LIMIT_PTS} percentage point")


if __name__ == "__main__":
    main()
