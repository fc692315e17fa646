"""Jobs on real Celery workers: replay-verification and generation throughput with 1 and 2 worker
processes on this machine, the ratio, and CPU seconds per puzzle (every process of the workers:
pool processes, their page servers and Chromium), with the load average.

    DATABASE_URL=postgres://.../fresh REDIS_URL=redis://127.0.0.1:6379/N \\
        python bench/workers.py [--generate 400] [--replay 40] [--processes 1 2]

Needs PostgreSQL and Redis (workers are separate processes). Each run generates on a fresh seed of
its own, so nothing is ever skipped; the replay runs on puzzles generated for it. The Redis
database named in REDIS_URL is emptied first: give the bench one of its own.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _setup import ROOT, django_for_bench

TICKS = os.sysconf("SC_CLK_TCK")
REPLAY_TYPES = ["Geometry_Click", "Object_Match", "Dice_Count", "Bingo"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--generate", type=int, default=400, help="puzzles generated a measurement (20 types)")
    parser.add_argument("--replay", type=int, default=40, help="puzzles replayed a measurement")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2], help="worker processes to compare")
    parser.add_argument("--pages", type=int, default=2, help="pages a replay chunk opens at once")
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("bench/workers.py needs REDIS_URL and a PostgreSQL DATABASE_URL: the workers are other processes")
    django_for_bench()
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    rates: dict[str, dict[int, float]] = {"generate": {}, "replay": {}}
    for count in args.processes:
        workers = [_start_worker(f"bench{count}-{n}") for n in range(count)]
        try:
            _wait_ready(count)
            rates["generate"][count] = _measure("generate", count, workers, _generate_job(args.generate))
            rates["replay"][count] = _measure("replay", count, workers, _replay_job(args.replay, args.pages))
        finally:
            _stop(workers)
    for kind, by_count in rates.items():
        if 1 in by_count and 2 in by_count:
            print(f"{kind}: 2 workers / 1 worker = {by_count[2] / by_count[1]:.2f}x")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


def _generate_job(count: int):
    from puzzles.registry import registry
    from puzzles.tasks import generate_job_start

    names = registry().names()
    seed = secrets.randbelow(2**31)  # a fresh bank each time: nothing already stored to skip
    return lambda: generate_job_start(
        split="train", per_type=max(1, count // len(names)), types=None, bank_seed=seed, started_by="bench"
    )


def _replay_job(count: int, pages: int):
    from annotation.tasks import replay_job_start
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    def start():
        seed = secrets.randbelow(2**31)
        per_type = max(1, count // len(REPLAY_TYPES))
        bank_generate(split="test", per_type=per_type, types=REPLAY_TYPES, bank_seed=seed, workers=1)
        ids = list(Puzzle.objects.filter(dataset=f"generated:{seed}").values_list("pk", flat=True))
        return replay_job_start(ids, label=f"bench: {len(ids)} puzzles", pages=pages, started_by="bench")

    return start


def _measure(kind: str, count: int, workers: list[subprocess.Popen], start) -> float:
    from puzzles.jobs.models import Job

    cpu_before = _cpu_s(workers)
    started = time.perf_counter()
    job = start()
    if kind == "replay":  # the puzzles were generated in start(): time the replay alone
        cpu_before, started = _cpu_s(workers), time.perf_counter()
    while job.state == Job.State.RUNNING:
        time.sleep(0.2)
        job.refresh_from_db()
    elapsed = time.perf_counter() - started
    cpu = _cpu_s(workers) - cpu_before
    rate = job.done / elapsed
    print(
        f"{kind:<8} {count} worker process(es): {job.done}/{job.total} in {elapsed:.1f} s = {rate:.2f} puzzles/s, "
        f"{cpu / max(job.done, 1):.3f} CPU s a puzzle (workers), job {job.state}, failed {job.failed}; "
        f"load {os.getloadavg()[0]:.2f}"
    )
    return rate


def _cpu_s(workers: list[subprocess.Popen]) -> float:
    """CPU seconds of every process in the workers' process groups, with their reaped children."""
    groups = {worker.pid for worker in workers}
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[2]) in groups:  # pgrp
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / TICKS


def _start_worker(name: str) -> subprocess.Popen:
    from django.conf import settings

    from annotation.agents.server import database_url

    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "PRIVATE_ROOT": str(settings.PRIVATE_ROOT),
        "ARENA_DB_POOL_MIN": "1",
        "ARENA_DB_POOL_MAX": "4",
    }
    celery = Path(sys.executable).with_name("celery")
    command = [str(celery), "-A", "arena_site", "worker", "--loglevel", "warning", "--concurrency", "1"]
    log = tempfile.NamedTemporaryFile("w", prefix=f"{name}-", suffix=".log", delete=False)  # noqa: SIM115
    return subprocess.Popen(
        [*command, "--hostname", f"{name}@%h"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_ready(count: int) -> None:
    from arena_site.celery import app

    while len(app.control.ping(timeout=1.0) or []) < count:
        time.sleep(0.5)


def _stop(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        worker.wait()


if __name__ == "__main__":
    main()
