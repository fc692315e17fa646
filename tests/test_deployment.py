"""docker-compose.yml is read by tests, and each of its services is started here with its own command."""

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def test_compose_declares_the_whole_platform():
    assert set(SERVICES) == {"postgres", "redis", "migrate", "web", "worker"}
    for name in ("postgres", "redis", "web"):
        assert SERVICES[name]["healthcheck"]["test"], name
    for name in ("migrate", "web", "worker"):
        env = SERVICES[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and env["REDIS_URL"].startswith("redis://")
        assert env["DEBUG"] == "false" and env["SECRET_KEY"]
    assert SERVICES["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert set(COMPOSE["volumes"]) == {"pgdata", "redisdata", "media"}
    assert "pgdata:/var/lib/postgresql/data" in SERVICES["postgres"]["volumes"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def service_env(tmp_path):
    """Environment for a service process: its own database (PostgreSQL when the suite runs on it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE",)}
    env.update(
        SECRET_KEY="test",
        DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        MEDIA_ROOT=str(tmp_path / "media"),
        ARENA_VAR_DIR=str(tmp_path),
    )
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("postgresql"):
        import psycopg

        name = f"arena_service_{secrets.token_hex(4)}"
        params = {
            "host": db["HOST"] or "127.0.0.1",
            "port": db["PORT"] or 5432,
            "user": db["USER"],
            "dbname": "postgres",
        }
        with psycopg.connect(**params, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = f"postgres://{db['USER']}@{params['host']}:{params['port']}/{name}"
        yield env
        with psycopg.connect(**params, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'service.sqlite3'}"
        yield env


def _compose_command(name):
    command = [sys.executable if part == "python" else part for part in SERVICES[name]["command"]]
    return command


def _migrate(env):
    command = _compose_command("migrate")
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)


def test_web_service_serves_the_site_after_migrate(service_env):
    _migrate(service_env)
    port = _free_port()
    command = _compose_command("web")
    command[command.index("-p") + 1] = str(port)
    command[command.index("-b") + 1] = "127.0.0.1"
    command[0] = str(Path(sys.executable).parent / "daphne")
    server = subprocess.Popen(command, cwd=ROOT, env=service_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        body = None
        for _ in range(100):
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
                break
            except OSError:
                time.sleep(0.2)
        assert body is not None, server.stdout.read1().decode() if server.poll() is not None else "no answer"
        assert "Puzzle bank" in body and "Geometry_Click" in body
        css = urllib.request.urlopen(f"http://127.0.0.1:{port}/static/arena/site.css", timeout=5)
        assert css.status == 200
    finally:
        server.terminate()
        server.wait(timeout=10)


def _result(async_result, worker, timeout_s=120):
    """The task's result; fails with the worker's own output if the worker dies meanwhile."""
    from celery.exceptions import TimeoutError as CeleryTimeout

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            pytest.fail(f"the worker exited with {worker.returncode}:\n{worker.stdout.read().decode()[-3000:]}")
        try:
            return async_result.get(timeout=1)
        except CeleryTimeout:
            continue
    pytest.fail("no result from the worker in time")


def test_worker_service_runs_bank_generation(service_env):
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    service_env["REDIS_URL"] = redis_url
    _migrate(service_env)
    command = _compose_command("worker")
    command[0] = str(Path(sys.executable).parent / "celery")
    queue = f"test-{secrets.token_hex(4)}"  # our own queue: no other worker on this Redis takes the task
    worker = subprocess.Popen(
        command + ["-Q", queue, "--pool", "solo"],
        cwd=ROOT,
        env=service_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        from celery import Celery

        client = Celery(broker=redis_url, backend=redis_url)
        kwargs = {"split": "test", "per_type": 1, "types": ["Geometry_Click", "Dice_Count"]}
        first = _result(client.send_task("puzzles.tasks.bank_generate_task", kwargs=kwargs, queue=queue), worker)
        assert first == {"created": 2, "skipped": 0, "total": 2}
        second = _result(client.send_task("puzzles.tasks.bank_generate_task", kwargs=kwargs, queue=queue), worker)
        assert second == {"created": 0, "skipped": 2, "total": 2}  # the first run's puzzles were stored
    finally:
        worker.terminate()
        worker.wait(timeout=20)


@pytest.mark.browser
def test_worker_service_as_composed_replays_reference_answers_in_chromium(service_env):
    """The compose worker command exactly (prefork pool): a replay needs its own page server and
    browser processes, which a pool process must be able to start."""
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    service_env["REDIS_URL"] = redis_url
    _migrate(service_env)
    command = _compose_command("worker")
    command[0] = str(Path(sys.executable).parent / "celery")
    queue = f"test-{secrets.token_hex(4)}"
    worker = subprocess.Popen(
        command + ["-Q", queue], cwd=ROOT, env=service_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        from celery import Celery

        client = Celery(broker=redis_url, backend=redis_url)
        kwargs = {"split": "test", "per_type": 1, "types": ["Dice_Count", "Bingo"]}
        _result(client.send_task("puzzles.tasks.bank_generate_task", kwargs=kwargs, queue=queue), worker)
        outcome = _result(
            client.send_task("annotation.tasks.replay_task", kwargs={**kwargs, "workers": 2}, queue=queue), worker
        )
        assert outcome == {"total": 2, "verified": 2, "failures": []}
    finally:
        worker.terminate()
        worker.wait(timeout=20)
