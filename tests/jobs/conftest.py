"""Jobs on real Celery workers: worker processes started as docker-compose starts them, on this
machine's Redis and the test database, killed with SIGKILL when a test says so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest
import redis
from celery import Celery
from django.conf import settings

from annotation.agents.server import database_url
from arena_site.celery import app
from puzzles.jobs.models import Chunk, Job

# Short, so a killed worker's chunk comes back within a test: Redis gives an unacknowledged task
# to another worker after VISIBILITY_S, and a chunk whose holder is silent LEASE_S is taken over.
VISIBILITY_S = 20
LEASE_S = 10
JOB_DEADLINE_S = 600  # a hung job fails the test instead of hanging it
SHOTS = Path(os.environ.get("ARENA_SCREENSHOTS", "/tmp/arena-screens"))  # the pages' screenshots

needs_redis = pytest.mark.skipif(not settings.REDIS_URL, reason="real workers need a broker: set REDIS_URL")


@dataclass
class Worker:
    name: str
    process: subprocess.Popen
    log: IO[str]
    killed: bool = False

    def kill(self) -> None:
        """SIGKILL to the worker and everything it started (its pool process, page server, Chromium)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.killed = True

    def holds(self, pid: int) -> bool:
        try:
            return os.getpgid(pid) == self.process.pid
        except ProcessLookupError:
            return False

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()


@dataclass
class Workers:
    started: list[Worker] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # over worker_environment(): another database or broker

    def start(self, count: int) -> list[Worker]:
        for _ in range(count):
            self.started.append(_start_worker(f"w{len(self.started) + 1}", self.env))
        running = sum(not w.killed and w.name != "beat" for w in self.started)
        wait_for(lambda: self.answering() >= running, f"{running} workers to answer", 120)
        return self.started

    def start_beat(self, folder: Path) -> Worker:
        """`celery -A arena_site beat` as docker-compose's beat service runs it (its schedule in `folder`)."""
        beat = _start_celery("beat", ["beat", "--schedule", str(folder / "beat-schedule")], self.env)
        self.started.append(beat)
        return beat

    def answering(self) -> int:
        """How many workers answer a ping on their broker."""
        url = self.env.get("REDIS_URL")
        if not url:
            return len(app.control.ping(timeout=0.5) or [])
        # An app of its own: a ping goes out through the app's producer pool, bound to its broker.
        with Celery("ping", broker=url, set_as_current=False) as on_that_broker:
            return len(on_that_broker.control.ping(timeout=0.5) or [])

    def holding(self, chunk: Chunk) -> Worker | None:
        pid = int(chunk.holder.split(":")[1]) if chunk.holder else 0
        return next((w for w in self.started if not w.killed and pid and w.holds(pid)), None)

    def logs(self) -> str:
        return "\n".join(f"--- {w.name}\n{w.output()[-3000:]}" for w in self.started)

    def stop(self) -> None:
        for worker in self.started:
            if worker.process.poll() is None:
                os.killpg(worker.process.pid, signal.SIGTERM)
        for worker in self.started:
            try:
                worker.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(worker.process.pid, signal.SIGKILL)
                worker.process.wait()
            worker.log.close()


def worker_environment() -> dict[str, str]:
    """This test's settings, carried to the workers: the test database, its folders and secrets."""
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": str(settings.REDIS_URL),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "PRIVATE_ROOT": str(settings.PRIVATE_ROOT),
        "SECRET_KEY": settings.SECRET_KEY,
        "PUZZLE_BANK_SECRET": settings.PUZZLE_BANK_SECRET,
        "ARENA_TASK_VISIBILITY_TIMEOUT_S": str(VISIBILITY_S),
        "ARENA_JOB_LEASE_S": str(LEASE_S),
        "ARENA_DB_POOL_MIN": "1",
        "ARENA_DB_POOL_MAX": "4",
        "DJANGO_SETTINGS_MODULE": "arena_site.settings",
    }


def _start_worker(name: str, env: dict[str, str] | None = None) -> Worker:
    """`celery -A arena_site worker` as docker-compose's worker service runs it, one pool process."""
    arguments = ["worker", "--loglevel", "info", "--concurrency", "1", "--hostname", f"{name}@%h"]
    return _start_celery(name, arguments, env or {})


def _start_celery(name: str, arguments: list[str], env: dict[str, str]) -> Worker:
    celery = Path(sys.executable).with_name("celery")
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115  (Workers.stop closes it)
    process = subprocess.Popen(
        [str(celery), "-A", "arena_site", *arguments],
        cwd=settings.BASE_DIR,
        env={**worker_environment(), **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: a kill takes its children with it
    )
    return Worker(name, process, log)


@pytest.fixture(autouse=True)
def _private_in_tmp(settings, tmp_path):
    """Exports and screenshots in this test's own folder (the workers are told it too)."""
    settings.PRIVATE_ROOT = tmp_path / "private"


@pytest.fixture
def workers(transactional_db) -> Iterator[Workers]:
    """Real worker processes on an emptied Redis (this run's number); all ended after the test."""
    broker = redis.Redis.from_url(str(settings.REDIS_URL))
    broker.flushdb()
    started = Workers()
    try:
        yield started
    finally:
        started.stop()
        broker.flushdb()
        broker.close()


def wait_for(condition, what: str, deadline_s: float = JOB_DEADLINE_S, poll_s: float = 0.2):
    """Poll until condition() is truthy; returns it. A deadline only so a hang fails instead of hanging."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(poll_s)
    raise AssertionError(f"gave up waiting for {what}")


def kill_a_worker_mid_chunk(job: Job, workers: Workers) -> tuple[Worker, Chunk]:
    """SIGKILL the worker of a chunk that is running and has done part of its items."""

    def running_chunk():
        for chunk in Chunk.objects.filter(job=job, state=Chunk.State.RUNNING, done__gt=0):
            if chunk.done < chunk.size and workers.holding(chunk):
                return chunk
        if Job.objects.get(pk=job.pk).state != Job.State.RUNNING:
            raise AssertionError(f"job {job.pk} ended before a worker could be killed mid-chunk\n{workers.logs()}")
        return None

    chunk = wait_for(running_chunk, "a chunk part done", poll_s=0.02)
    worker = workers.holding(chunk)
    assert worker is not None
    worker.kill()
    return worker, chunk


def follow(job: Job) -> list[int]:
    """The job's progress as it moves, until it ends; returns each `done` seen."""
    seen: list[int] = []

    def ended() -> bool:
        job.refresh_from_db()
        if not seen or seen[-1] != job.done:
            seen.append(job.done)
        return job.state != Job.State.RUNNING

    wait_for(ended, f"job {job.pk} to end")
    return seen
