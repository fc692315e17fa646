"""Verification throughput: verdicts per second in-process, per type, masks already loaded.

Goal (issue 2): 100,000 verdicts/s or more for mask types.
Usage: python bench/verification.py [--puzzles N] [--answers M]
"""

import argparse
import time

import numpy as np
from _setup import (
    ROOT,  # noqa: F401  (puts the project on sys.path)
    django_for_bench,
)

django_for_bench()

from puzzles.bank import generate_puzzle  # noqa: E402
from puzzles.registry import registry  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--puzzles", type=int, default=5)
    parser.add_argument("--answers", type=int, default=40000, help="verdicts timed per type")
    args = parser.parse_args()
    print(f"{'type':<20} {'verdicts/s':>12}  (mix of right and wrong answers, {args.answers} per type)")
    for puzzle_type in registry().all():
        puzzles = [generate_puzzle(puzzle_type.name, "test", i, 1) for i in range(args.puzzles)]
        work = []
        for puzzle in puzzles:
            answers = [puzzle_type.solution(puzzle.truth)]
            answers += puzzle_type.perturbations(puzzle.truth, puzzle.masks, np.random.default_rng(0))
            work += [(puzzle.truth, answer, puzzle.masks) for answer in answers]
        repeats = args.answers // len(work) + 1
        batch = (work * repeats)[: args.answers]
        verify = puzzle_type.verify
        started = time.perf_counter()
        for truth, answer, masks in batch:
            verify(truth, answer, masks)
        rate = len(batch) / (time.perf_counter() - started)
        mask_note = "  (mask)" if "mask" in puzzles[0].truth else ""
        print(f"{puzzle_type.name:<20} {rate:>12,.0f}{mask_note}")


if __name__ == "__main__":
    main()
