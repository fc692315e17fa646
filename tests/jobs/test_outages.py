"""Done when (issue 39): a job and the command waiting on it come through a restart of the database
or the broker under them. Two real workers, the beat and the command (`--on-workers`) run as their
own processes on a private PostgreSQL or Redis (tests/private_servers.py) that the test restarts in
the middle of the job: the job ends done, each item once, no puzzle set aside for the outage, and
the command exits 0. The time from the server's return to the job's next progress is measured and
reported (tests/faults/report.py, bench/restarts.py), never asserted."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

from puzzles.jobs.models import Job
from puzzles.models import Puzzle
from tests.faults import report
from tests.jobs.conftest import Workers, needs_redis, wait_for, worker_environment
from tests.private_servers import private_postgres, private_redis

pytestmark = [needs_redis, pytest.mark.restart]


@contextmanager
def workers_and_beat(count: int, env: dict[str, str], folder: Path) -> Iterator[Workers]:
    """`count` workers and the beat, as docker-compose runs them, on the given database and broker."""
    started = Workers(env=env)
    try:
        started.start_beat(folder)
        started.start(count)
        yield started
    finally:
        started.stop()


@contextmanager
def command(*arguments: str, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """`manage.py <arguments>` in its own process, its output kept; killed if the test ends first."""
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", *arguments],
            cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        process.log = log  # type: ignore[attr-defined]
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def output(process: subprocess.Popen[str]) -> str:
    log = process.log  # type: ignore[attr-defined]
    log.seek(0)
    return log.read()


@contextmanager
def telling(workers: Workers, process: subprocess.Popen[str]) -> Iterator[None]:
    """A wait that gives up shows what the workers, the beat and the command said."""
    try:
        yield
    except (AssertionError, subprocess.TimeoutExpired) as error:
        raise AssertionError(f"{error}\n--- command\n{output(process)[-3000:]}\n{workers.logs()}") from error


def progress_after(read_done: Callable[[], int | None], since: int) -> float:
    """Seconds until the job's count moves past `since` (read_done() is None while the database is away)."""
    back = time.monotonic()
    wait_for(lambda: (read_done() or 0) > since, "the job's next progress")
    return time.monotonic() - back


def test_generation_through_a_redis_killed_and_started_again_ends_done_and_the_command_exits_0(
    transactional_db, tmp_path
):
    """Redis killed with what it held (the queued chunks' tasks, the unacknowledged ones), then
    started again: the beat sends the lost chunks again, the command exits 0 on the job's end."""
    with private_redis() as broker:
        env = {"REDIS_URL": broker.url(0)}
        with workers_and_beat(2, env, tmp_path) as workers:
            run = ["puzzles", "generate", "--split", "val", "--per-type", "40", "--seed", "81", "--on-workers"]
            run += ["--types", "Bingo", "Dice_Count", "Geometry_Click", "Object_Match", "--chunk-size", "8"]
            with command(*run, env={**worker_environment(), **env}) as generating:
                job = wait_for(lambda: Job.objects.filter(kind="generate", done__gte=16).first(), "work under way")
                broker.kill()
                time.sleep(1)
                broker.start()
                job.refresh_from_db()
                assert job.state == Job.State.RUNNING and job.done < job.total  # killed mid-job
                with telling(workers, generating):
                    recovery_s = progress_after(lambda: Job.objects.get(pk=job.pk).done, job.done)
                    generating.wait(600)
                said = output(generating)
            logs = workers.logs()
        job.refresh_from_db()
    stored = Puzzle.objects.filter(dataset="generated:81", split="val")
    keys = set(stored.values_list("type", "index"))
    row = report.row("generation job x Redis killed: 2 workers, beat, command", "units: puzzles")
    row.add(
        {"generated": 160, "stored": len(keys), "lost": 160 - len(keys), "duplicated": stored.count() - len(keys)},
        scored=job.state == Job.State.DONE,
        recovery_s=recovery_s,
    )
    assert generating.returncode == 0, f"{said}\n{logs}"
    assert (job.state, job.done, job.total, job.failed) == (Job.State.DONE, 160, 160, 0), f"{said}\n{logs}"
    assert stored.count() == len(keys) == 160  # all distinct
    assert f"generate: job {job.pk} done, 160/160" in said


@pytest.mark.browser
def test_a_replay_job_through_a_database_restart_checks_each_puzzle_once_and_sets_none_aside(tmp_path):
    """PostgreSQL stopped for a few seconds and started again under a replay job on two workers: the
    chunks that met it wait and are tried again, a replay the outage spoiled is done again (never
    recorded "failed verification"), and the command exits 0 on the job's end."""
    with private_postgres() as database, private_redis() as broker:
        env = {"DATABASE_URL": database.url, "REDIS_URL": broker.url(0)}
        environment = {**worker_environment(), **env}
        generate = ["puzzles", "generate", "--split", "test", "--per-type", "4", "--seed", "82"]
        with command(*generate, "--types", "Geometry_Click", "Dice_Count", env=environment) as generating:
            assert generating.wait(300) == 0, output(generating)
        with workers_and_beat(2, env, tmp_path) as workers:
            replay = ["replay", "--split", "test", "--on-workers", "--chunk-size", "2", "--workers", "1"]
            with command(*replay, env=environment) as replaying:
                wait_for(lambda: (_job_done(database.url) or 0) >= 2, "a chunk done, the others under way")
                done_before = _job_done(database.url) or 0
                database.restart(down_s=5)
                with telling(workers, replaying):
                    recovery_s = progress_after(lambda: _job_done(database.url), done_before)
                    replaying.wait(600)
                said = output(replaying)
            logs = workers.logs()
        with psycopg.connect(database.url) as reading:
            job = reading.execute("SELECT state, done, total, failed FROM jobs_job").fetchone()
            checks = reading.execute(
                "SELECT puzzle_id, count(*), bool_and(verified) FROM puzzles_replaycheck GROUP BY puzzle_id"
            ).fetchall()
            statuses = reading.execute("SELECT status, count(*) FROM puzzles_puzzle GROUP BY status").fetchall()
            replays = reading.execute(
                "SELECT count(*), count(DISTINCT a.puzzle_id) FROM annotation_attempt a "
                "JOIN annotation_participant p ON p.id = a.participant_id WHERE p.kind = 'replay'"
            ).fetchone()
    row = report.row("replay job x PostgreSQL restarted (5 s): 2 workers, beat, command", "units: puzzles")
    once = sum(count == 1 for _, count, _ in checks)
    row.add(
        {"generated": 8, "stored": len(checks), "lost": 8 - len(checks), "duplicated": len(checks) - once},
        scored=job == ("done", 8, 8, 0),
        recovery_s=recovery_s,
    )
    assert replaying.returncode == 0, f"{said}\n{logs}"
    assert job == ("done", 8, 8, 0), f"{said}\n{logs}"
    assert len(checks) == 8 and all(count == 1 and verified for _, count, verified in checks)  # each once
    assert dict(statuses) == {"verified": 8}  # none set aside for the outage
    assert replays == (8, 8)  # one replay attempt a puzzle: what the spoiled tries left is gone
    assert "replay: 8/8 verified" in said


def _job_done(url: str) -> int | None:
    """The job's count of items done, read from the private database; None while it is away."""
    try:
        with psycopg.connect(url, connect_timeout=2) as reading:
            row = reading.execute("SELECT done FROM jobs_job ORDER BY id DESC LIMIT 1").fetchone()
    except psycopg.OperationalError:
        return None
    return row[0] if row else None
