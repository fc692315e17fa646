"""The published CaptchaArena layout at the published scale: generate a bank, export it, import it.

Goal (issue 10): import 50,000 puzzles with their images in under 10 minutes on 2 cores
(83 puzzles/s). The published scale is 2,100 train, 200 val and 200 test puzzles of each of the
20 types: 50,000. --scale takes a share of that (0.1: 5,000 puzzles) and the figures say so.

Steps, each timed: bank_generate (the splits, --workers processes), export_captchaarena (each
split), import into a fresh dataset (import:bench-<stamp>, nothing skipped), then a check that
every puzzle came back with its truth and page data.

Beside the import's wall-clock, its CPU a puzzle over every process of ours (this one and its
worker processes, reaped when their pool ends) and the projected time for 50,000 on 2 cores if
they were ours alone; the PostgreSQL backend's CPU is read from /proc when the server runs here,
and printed apart (the server's, not ours); the load average as the import began and ended (CPU a
puzzle rises with the machine's load: other processes share its caches).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a fresh database> python bench/interop.py [--scale 1]

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures);
the export and the media go to a scratch folder, removed at the end unless --keep.
"""

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from _setup import cpu_seconds, django_for_bench

scratch = django_for_bench()

from django.db import connection  # noqa: E402

from puzzles.bank import SPLIT_SIZES  # noqa: E402
from puzzles.interop import export_captchaarena, import_plan, import_run  # noqa: E402
from puzzles.models import Puzzle  # noqa: E402
from puzzles.progress import Progress  # noqa: E402
from puzzles.registry import registry  # noqa: E402
from puzzles.services import bank_generate  # noqa: E402

GOAL_S = 600
GOAL_CPU_MS = 12  # CPU a puzzle, all our processes: 50,000 in 5 min of 2 cores, room to spare
CORES = 2
PUBLISHED = 50_000


def generate(seed: int, per_split: dict[str, int], workers: int) -> float:
    total = sum(per_split.values()) * len(registry().names())
    progress = Progress(total, "generate")
    started = time.perf_counter()
    for split, count in per_split.items():
        bank_generate(split=split, per_type=count, bank_seed=seed, workers=workers, on_progress=progress.advance)
    progress.close()
    return time.perf_counter() - started


def export(root: str, dataset: str, splits: list[str], workers: int) -> float:
    started = time.perf_counter()
    for split in splits:
        export_captchaarena(root, split=split, dataset=dataset, workers=workers)
    return time.perf_counter() - started


def server_cpu_seconds() -> float | None:
    """CPU time of this connection's PostgreSQL backend, when it runs on this machine; else None."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def check(original: str, copy: str) -> int:
    """Every puzzle back with its truth and page data (by type, split and id); the mismatches."""
    imported = {
        (p.type, p.split, p.source_id.rsplit(".", 1)[0]): (p.truth, p.public)
        for p in Puzzle.objects.filter(dataset=copy).only("type", "split", "source_id", "truth", "public")
    }
    bad = 0
    for p in Puzzle.objects.filter(dataset=original).only("type", "split", "source_id", "truth", "public"):
        bad += imported.get((p.type, p.split, p.source_id)) != (p.truth, p.public)
    return bad


def report_cpu(cpu_ms: float, server_before: float | None, server_after: float | None, imported: int) -> None:
    print(
        f"import CPU: {cpu_ms:.1f} ms a puzzle, this process and its workers (goal: at most {GOAL_CPU_MS}); "
        f"50,000 puzzles: {PUBLISHED * cpu_ms / 1000 / CORES / 60:.1f} min of CPU on {CORES} cores"
    )
    if server_before is not None and server_after is not None:
        server_ms = (server_after - server_before) * 1000 / max(1, imported)
        print(f"PostgreSQL backend CPU: {server_ms:.1f} ms a puzzle (the server's, not counted above)")


def _load(averages: tuple[float, ...]) -> str:
    return " ".join(f"{a:.2f}" for a in averages)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0, help="share of the published 50,000 (default: all)")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="worker processes for each step")
    parser.add_argument("--seed", type=int, default=50, help="the generated bank's seed")
    parser.add_argument("--keep", action="store_true", help="keep the export and media in the scratch folder")
    args = parser.parse_args()

    per_split = {split: max(1, round(size * args.scale)) for split, size in SPLIT_SIZES.items()}
    total = sum(per_split.values()) * len(registry().names())
    dataset = f"generated:{args.seed}"
    root = str(scratch / "export")
    print(f"database: {connection.vendor}; {os.cpu_count()} cores; {args.workers} workers; scratch {scratch}")
    print(f"bank: {total} puzzles ({per_split} per type, {len(registry().names())} types)", flush=True)

    generated_s = generate(args.seed, per_split, args.workers)
    print(f"generate: {total} puzzles in {generated_s:.0f} s = {total / generated_s:.1f} puzzles/s", flush=True)
    exported_s = export(root, dataset, list(per_split), args.workers)
    print(f"export: {total} puzzles in {exported_s:.0f} s = {total / exported_s:.1f} puzzles/s", flush=True)

    name = f"bench-{time.strftime('%Y%m%d-%H%M%S')}"
    load_before = os.getloadavg()
    started, cpu_before, server_before = time.perf_counter(), cpu_seconds(), server_cpu_seconds()
    plan = import_plan(root, name=name)
    progress = Progress(plan.total, "import")
    result = import_run(plan, workers=args.workers, on_progress=progress.advance, warn=print)
    progress.close()
    imported_s = time.perf_counter() - started
    cpu_ms = (cpu_seconds() - cpu_before) * 1000 / max(1, result.imported)
    server_after = server_cpu_seconds()
    rate = result.imported / imported_s
    print(
        f"import: {result.imported} imported, {result.skipped} skipped, {len(result.broken)} broken "
        f"in {imported_s:.0f} s = {rate:.1f} puzzles/s (plan included)"
    )
    report_cpu(cpu_ms, server_before, server_after, result.imported)
    print(f"load average (1, 5, 15 min): {_load(load_before)} as the import began, {_load(os.getloadavg())} at its end")
    mismatches = check(dataset, plan.dataset)
    print(f"check: {total - mismatches}/{total} puzzles back with the same truth and page data")
    projected = PUBLISHED / rate
    measured = "measured" if total >= PUBLISHED else f"projected from {total} at the same rate"
    print(
        f"50,000 puzzles: {projected / 60:.1f} min ({measured}; goal: under {GOAL_S // 60} min, "
        f"{PUBLISHED / GOAL_S:.0f} puzzles/s)"
    )
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(0 if result.imported == total and mismatches == 0 else 1)


if __name__ == "__main__":
    main()
