"""Replay throughput: puzzles verified per second with W parallel pages in one Chromium.

    python bench/replay.py [--per-type 10] [--workers 4 8 12]

Generates the first N test puzzles of every type (Hold_Button included), then replays them once
per W through the live page and the server's verdict. Uses a throwaway SQLite database unless
DATABASE_URL is set (use PostgreSQL for deployment figures). The goal: the full test split
(4,000 puzzles) in 10 minutes, 6.7 puzzles/s.
"""

import argparse
import time

from _setup import django_for_bench


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-type", type=int, default=10)
    parser.add_argument("--workers", type=int, nargs="+", default=[4, 8, 12])
    args = parser.parse_args()
    django_for_bench()
    from annotation.agents.replay import replay_puzzles
    from puzzles.selectors import puzzle_selection
    from puzzles.services import bank_generate

    bank_generate(split="test", per_type=args.per_type)
    ids = puzzle_selection(split="test", per_type=args.per_type)
    for workers in args.workers:
        started = time.perf_counter()
        outcomes = replay_puzzles(ids, workers=workers)
        elapsed = time.perf_counter() - started
        verified = sum(o.verified for o in outcomes)
        print(
            f"W={workers:<3} {len(ids)} puzzles in {elapsed:.1f} s: {len(ids) / elapsed:.2f} puzzles/s, "
            f"{verified}/{len(ids)} verified; the full test split (4,000) would take "
            f"{4000 / (len(ids) / elapsed) / 60:.1f} min"
        )


if __name__ == "__main__":
    main()
