"""Generation throughput: puzzles per second per type (one process) and overall (stored, all cores).
Every image is encoded as served, with the deployment's imprint (puzzles/imprint.py).

Goal (issue 2): the full published bank, 50,000 puzzles, in under 15 minutes = 56 puzzles/s overall.
Each run stores a fresh bank (a seed of its own), so the overall figure counts only puzzles made.
Usage: python bench/generation.py [--per-type N] [--stored-per-type M] [--workers W]
"""

import argparse
import os
import secrets
import statistics
import time

from _setup import cpu_seconds, django_for_bench

django_for_bench()

from puzzles.bank import bank_key  # noqa: E402
from puzzles.encoding import encode_puzzle  # noqa: E402
from puzzles.registry import registry  # noqa: E402
from puzzles.services import bank_generate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-type", type=int, default=20, help="puzzles per type for the per-type figure")
    parser.add_argument("--stored-per-type", type=int, default=50, help="puzzles per type for the overall figure")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()

    print(f"per type, one process, generate + encode ({args.per_type} puzzles each):")
    rates = []
    bank = bank_key(1)  # a bank of this deployment's secret, apart from its own (bench/ never touches that)
    for name in registry().names():
        started = time.perf_counter()
        for index in range(args.per_type):
            encode_puzzle((name, "train", index, bank))
        rate = args.per_type / (time.perf_counter() - started)
        rates.append(rate)
        print(f"  {name:<20} {rate:7.1f} puzzles/s  ({1000 / rate:5.1f} ms each)")
    print(f"  harmonic mean over types: {statistics.harmonic_mean(rates):.1f} puzzles/s on one core")

    # A fresh bank every run: on a database kept between runs a fixed seed would find its puzzles
    # stored, skip them all and report the skipping as speed.
    seed = secrets.randbelow(2**31)
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    result = bank_generate(split="train", per_type=args.stored_per_type, bank_seed=seed, workers=args.workers)
    elapsed = time.perf_counter() - started
    cpu_ms = 1000 * (cpu_seconds() - cpu_before) / max(result.created, 1)
    if result.skipped:
        print(f"  note: {result.skipped} puzzles of bank {seed} were stored already and are not counted")
    rate = result.created / elapsed
    print(
        f"overall, stored in the database with {args.workers} workers: {result.created} puzzles made "
        f"in {elapsed:.1f} s = {rate:.1f} puzzles/s, {cpu_ms:.1f} CPU ms a stored puzzle (this process and its workers)"
    )
    print(
        f"projected full bank (50,000 puzzles): {50000 / rate / 60:.1f} min here "
        f"(goal: under 15 min, 56/s); {50000 * cpu_ms / 1000 / 60:.1f} CPU min in all, "
        f"{50000 * cpu_ms / 1000 / 60 / args.workers:.1f} min on {args.workers} idle cores"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
