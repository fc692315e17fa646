"""docker-compose.yml is read by tests, and each of its services is started here with its own command."""

import asyncio
import os
import re
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from annotation.agents.server import WEBSOCKET_MAX_BYTES
from annotation.environment.server import IDLE_TIMEOUT_S
from annotation.live.frames import MAX_FRAME_BYTES

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


NGINX_CONF = (ROOT / "deploy" / "nginx.conf").read_text()
SECRETS = ("SECRET_KEY", "PUZZLE_BANK_SECRET")


def test_compose_declares_the_whole_platform():
    assert set(SERVICES) == {"postgres", "redis", "migrate", "web", "nginx", "worker", "beat", "env"}
    for name in ("postgres", "redis", "web", "env"):
        assert SERVICES[name]["healthcheck"]["test"], name
    for name in ("migrate", "web", "worker", "env"):
        env = SERVICES[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and env["REDIS_URL"].startswith("redis://")
        assert env["DEBUG"] == "false"
    for name in ("web", "env"):  # env serve's page server is the site, as web is
        assert SERVICES[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert SERVICES[name]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert set(COMPOSE["volumes"]) == {"pgdata", "redisdata", "media", "private"}
    for name in ("migrate", "web", "worker", "env", "beat"):  # what one writes, the others read
        assert SERVICES[name]["environment"]["PRIVATE_ROOT"] == "/data/private"
        assert {"media:/data/media", "private:/data/private"} <= set(SERVICES[name]["volumes"])
    assert "pgdata:/var/lib/postgresql/data" in SERVICES["postgres"]["volumes"]


def _required(value: str, name: str) -> bool:
    """Whether a compose value is exactly ${NAME:?message}: compose refuses to start while NAME is unset or empty."""
    return re.fullmatch(rf"\$\{{{name}:\?[^}}]+\}}", value) is not None


def test_compose_takes_its_secrets_from_the_env_file_and_refuses_to_start_without_them():
    for name in ("migrate", "web", "worker", "env"):
        env = SERVICES[name]["environment"]
        for secret in SECRETS:
            assert _required(env[secret], secret), (name, secret, env[secret])
        assert "${POSTGRES_PASSWORD:?" in env["DATABASE_URL"]
    assert _required(SERVICES["postgres"]["environment"]["POSTGRES_PASSWORD"], "POSTGRES_PASSWORD")
    compose_text = (ROOT / "docker-compose.yml").read_text()
    assert "change-me" not in compose_text and "arena:arena@" not in compose_text
    # Every variable compose requires is in the committed example, with no value to copy.
    example = dict(
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if "=" in line and line[0] != "#"
    )
    for required in set(re.findall(r"\$\{(\w+):\?", compose_text)):
        assert example.get(required) == "", required
    # The filled-in file is never committed, nor built into the image.
    assert "/.env" in (ROOT / ".gitignore").read_text().splitlines()
    assert ".env" in (ROOT / ".dockerignore").read_text().splitlines()


def test_only_the_proxy_is_published_and_the_site_counts_it_as_a_hop():
    assert [name for name, service in SERVICES.items() if "ports" in service] == ["nginx"]
    assert "ports" not in SERVICES["web"] and SERVICES["web"]["expose"] == ["8000"]
    assert [p.split(":")[-1] for p in SERVICES["nginx"]["ports"]] == ["80"]
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in SERVICES["nginx"]["volumes"]
    assert SERVICES["nginx"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert SERVICES["web"]["environment"]["ARENA_PROXY_HOPS"] == "1"
    assert SERVICES["web"]["environment"]["SECRET_KEY"] == SERVICES["worker"]["environment"]["SECRET_KEY"]


def test_web_workers_and_environment_servers_scale_out():
    """`docker compose up --scale web=N --scale worker=M --scale env=E`: a replica cannot have a
    fixed name, host port or hostname (the second would clash with the first)."""
    for name in ("web", "worker", "env"):
        service = SERVICES[name]
        assert not {"container_name", "ports", "hostname"} & set(service), name
        assert service.get("deploy", {}).get("replicas", 1) >= 1
    # What dies comes back (tests/faults/ kills web processes mid-attempt); the one-shot migrate does not.
    for name in ("postgres", "redis", "web", "nginx", "worker", "beat", "env"):
        assert SERVICES[name]["restart"] == "unless-stopped", name
    assert "restart" not in SERVICES["migrate"]
    # Each process's PostgreSQL pool covers its database threads, and the README's example scale
    # (4 web processes, 2 workers of 2 processes each), with 2 environment servers (each with its
    # page server), fits PostgreSQL's default 100 connections.
    web, worker = SERVICES["web"]["environment"], SERVICES["worker"]["environment"]
    environment = SERVICES["env"]["environment"]
    assert int(web["ARENA_DB_POOL_MAX"]) >= int(web["ASGI_THREADS"]) + 1
    concurrency = int(SERVICES["worker"]["command"][SERVICES["worker"]["command"].index("--concurrency") + 1])
    workers = 2 * concurrency * int(worker["ARENA_DB_POOL_MAX"])
    assert 4 * int(web["ARENA_DB_POOL_MAX"]) + workers + 2 * 2 * int(environment["ARENA_DB_POOL_MAX"]) + 5 <= 100
    for env in (web, worker, environment):
        assert 0 <= int(env["ARENA_DB_POOL_MIN"]) <= int(env["ARENA_DB_POOL_MAX"])


def test_every_service_built_here_runs_a_command_the_tests_run():
    """The services made from this repository's image are exactly the ones whose commands the
    tests start (migrate, web, worker and env below; beat in tests/faults/test_gaps.py): a new one
    needs a test of its own."""
    built = {name for name, service in SERVICES.items() if service.get("build")}
    assert built == {"migrate", "web", "worker", "beat", "env"}
    assert all(SERVICES[name]["command"] for name in built)


@pytest.mark.django_db
def test_the_beat_service_schedules_the_gap_sweep_a_worker_runs(open_attempt):
    """One beat (its command: celery beat on this project's app) and the schedule's entry is a task
    the workers know; run as the entry names it, it scores a submit that waited out its gap."""
    import annotation.tasks  # noqa: F401  (a worker finds it by autodiscovery)
    from annotation.live.frames import Batch
    from annotation.live.intake import GAP_WAIT_S, events_append
    from arena_site.celery import app

    command = SERVICES["beat"]["command"]
    assert command[:4] == ["celery", "-A", "arena_site", "beat"] and "--schedule" in command
    assert not {"container_name", "ports"} & set(SERVICES["beat"])
    entry = app.conf.beat_schedule["resolve-gaps"]
    assert entry["schedule"] == settings.GAP_SWEEP_S and entry["task"] in app.tasks
    attempt, _ = open_attempt("Dice_Count")
    then = time.time() * 1000 - (GAP_WAIT_S + 1) * 1000
    events_append(attempt_id=attempt.pk, batch=Batch(1, [{"k": "beat", "t": then}]), received_ms=then)
    events_append(attempt_id=attempt.pk, batch=Batch(3, [{"k": "act.submit", "t": then}]), received_ms=then)
    app.tasks[entry["task"]].apply()
    attempt.refresh_from_db()
    assert attempt.submitted_at is not None and attempt.missing_batches == [2]


def _nginx_block(text: str, opening: str) -> str:
    """The body of the first `opening {...}` block (braces matched)."""
    start = text.index(opening)
    depth, i = 0, text.index("{", start)
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j]
    raise AssertionError(f"unclosed block {opening}")


def _directives(block: str) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in block.splitlines())
    return [" ".join(line.rstrip(";").split()) for line in lines if line]


def _live(conf: str) -> str:
    return "\n".join(line for line in conf.splitlines() if not line.lstrip().startswith("#"))


def test_the_proxy_reaches_every_web_replica_without_sticky_sessions():
    live = _live(NGINX_CONF)
    upstream = _directives(_nginx_block(live, "upstream arena_web"))
    (server,) = [d for d in upstream if d.startswith("server ")]
    # One name for all replicas, re-resolved while nginx runs (Docker's DNS answers `web` with every
    # replica's address): a replica added by --scale, or restarted with a new address, gets traffic.
    assert server.split()[1] == "web:8000" and "resolve" in server.split()[2:]
    assert any(d.startswith("zone arena_web ") for d in upstream)  # `resolve` needs a shared zone
    outside_servers = live[: live.index("server {")]
    (resolver,) = re.findall(r"^resolver\s+([^;]+);", outside_servers, flags=re.M)
    assert resolver.split()[0] == "127.0.0.11"  # Docker's embedded DNS
    valid = re.search(r"valid=(\d+)s", resolver)
    assert valid and int(valid.group(1)) <= 30
    # No affinity: any replica may take any request or socket.
    assert not {d.split()[0] for d in upstream} & {"ip_hash", "hash", "sticky"}
    # The upstream `resolve` parameter is in open-source nginx from 1.27.3 on.
    image = SERVICES["nginx"]["image"]
    version = tuple(int(part) for part in re.match(r"nginx:(\d+)\.(\d+)", image).groups())
    assert version >= (1, 28) or (version == (1, 27) and int(image.split(".")[2].split("-")[0]) >= 3)
    # Both locations go to the group, not to one address.
    server_block = _nginx_block(live, "server {")
    for location in ("location /ws/", "location / "):
        assert "proxy_pass http://arena_web" in _directives(_nginx_block(server_block, location))


def test_the_proxy_sends_env_to_every_environment_server_with_sockets_upgraded():
    """A trainer's base URL is http://host/env/<token>: nginx drops /env/ and any env replica takes
    the session, pinned to it by its WebSocket (no affinity beyond the connection itself)."""
    live = _live(NGINX_CONF)
    upstream = _directives(_nginx_block(live, "upstream arena_env"))
    (server,) = [d for d in upstream if d.startswith("server ")]
    port = SERVICES["env"]["command"][SERVICES["env"]["command"].index("--port") + 1]
    assert server.split()[1] == f"env:{port}" and "resolve" in server.split()[2:]
    assert SERVICES["env"]["expose"] == [port]
    assert any(d.startswith("zone arena_env ") for d in upstream) and "least_conn" in upstream
    assert not {d.split()[0] for d in upstream} & {"ip_hash", "hash", "sticky"}
    route = _directives(_nginx_block(_nginx_block(live, "server {"), "location /env/"))
    assert "proxy_pass http://arena_env/" in route  # the trailing slash: /env/<token>/ws reaches /<token>/ws
    assert "proxy_http_version 1.1" in route and "proxy_set_header Upgrade $http_upgrade" in route
    assert "proxy_set_header Connection $connection_upgrade" in route
    # The server closes an idle session itself, with its reason, before the proxy cuts the socket.
    (read_timeout,) = [int(d.split()[1].rstrip("s")) for d in route if d.startswith("proxy_read_timeout ")]
    assert read_timeout > IDLE_TIMEOUT_S


def test_the_proxy_bounds_bodies_and_passes_sockets_and_the_client_on():
    live = _live(NGINX_CONF)
    server = _nginx_block(live, "server {")
    (limit,) = re.findall(r"^\s*client_max_body_size\s+(\d+)([km]?);", server, flags=re.M)
    limit_bytes = int(limit[0]) * {"": 1, "k": 1024, "m": 1024 * 1024}[limit[1]]
    assert limit_bytes == int(SERVICES["web"]["environment"]["ARENA_MAX_BODY_BYTES"])
    assert limit_bytes >= MAX_FRAME_BYTES  # an event batch over HTTP still fits
    sockets = _directives(_nginx_block(server, "location /ws/"))
    assert "proxy_pass http://arena_web" in sockets and "proxy_http_version 1.1" in sockets
    assert "proxy_set_header Upgrade $http_upgrade" in sockets
    assert "proxy_set_header Connection $connection_upgrade" in sockets
    assert "map $http_upgrade $connection_upgrade {" in live
    pages = _directives(_nginx_block(server, "location / "))
    assert "proxy_pass http://arena_web" in pages
    for location in (sockets, pages):
        # The client's address for ARENA_PROXY_HOPS, the scheme for ARENA_BEHIND_HTTPS_PROXY, and
        # the Host with its port (the WebSocket origin check compares ports).
        assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for" in location
        assert "proxy_set_header X-Forwarded-Proto $scheme" in location
        assert "proxy_set_header Host $http_host" in location


def test_daphne_bounds_websocket_messages_as_composed_and_in_the_page_server():
    command = SERVICES["web"]["command"]
    for flag in ("--websocket-max-message-size", "--websocket-max-frame-size"):
        size = int(command[command.index(flag) + 1])
        assert size == WEBSOCKET_MAX_BYTES and MAX_FRAME_BYTES < size <= 1024 * 1024
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert f'"--websocket-max-message-size", "{WEBSOCKET_MAX_BYTES}"' in dockerfile


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def service_env(tmp_path):
    """Environment for a service process: its own database (PostgreSQL when the suite runs on it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE",)}
    env.update(
        SECRET_KEY=secrets.token_urlsafe(50),
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
        stylesheet = re.search(r'href="(/static/[0-9a-f]{12}/arena/site\.css)"', body)
        assert stylesheet, "the page links no versioned stylesheet"
        css = urllib.request.urlopen(f"http://127.0.0.1:{port}{stylesheet[1]}", timeout=5)
        assert css.status == 200 and "immutable" in css.headers["Cache-Control"]
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_env_service_serves_the_protocol_to_a_token_after_migrate(service_env):
    """The env service's command as composed (bound here to this host and a free port): healthy,
    a trainer's token opens its endpoints and its WebSocket (openenv-core's client), a made-up one
    nothing."""
    from openenv.core import GenericEnvClient

    _migrate(service_env)

    def manage(*arguments: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *arguments], cwd=ROOT, env=service_env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    manage(
        "puzzles",
        "generate",
        "--split",
        "train",
        "--per-type",
        "1",
        "--types",
        "Dice_Count",
        "--seed",
        "1",
        "--workers",
        "1",
    )
    made = manage("env", "token", "lab", "--datasets", "generated:1")
    key = made.split()[-1]
    port = _free_port()
    command = _compose_command("env")
    assert command[1:4] == ["manage.py", "env", "serve"]
    command[command.index("--port") + 1] = str(port)
    command[command.index("--host") + 1] = "127.0.0.1"
    server = subprocess.Popen(command, cwd=ROOT, env=service_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        health = None
        for _ in range(300):
            try:
                health = urllib.request.urlopen(f"{base}/health", timeout=5).read().decode()
                break
            except OSError:
                assert server.poll() is None, server.stdout.read().decode()[-3000:]
                time.sleep(0.2)
        assert health == '{"status": "healthy"}'
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/{'x' * 32}/state", timeout=5)  # /schema is public (OpenEnv 0.10)
        assert refused.value.code == 403

        async def state():
            async with GenericEnvClient(base_url=f"{base}/{key}") as env:
                return await env.state()

        assert asyncio.run(state())["step_count"] == 0
    finally:
        server.terminate()
        server.wait(timeout=30)


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
        client = _celery_client(redis_url)
        kwargs = {"split": "test", "per_type": 1, "types": ["Geometry_Click", "Dice_Count"]}
        first = _result(client.send_task("puzzles.tasks.bank_generate_task", kwargs=kwargs, queue=queue), worker)
        assert first == {"created": 2, "skipped": 0, "total": 2}
        second = _result(client.send_task("puzzles.tasks.bank_generate_task", kwargs=kwargs, queue=queue), worker)
        assert second == {"created": 0, "skipped": 2, "total": 2}  # the first run's puzzles were stored
    finally:
        worker.terminate()
        worker.wait(timeout=20)


def _celery_client(redis_url: str):
    """A client app for the broker that stays out of the way: not made the current app, where
    shared tasks (job chunks) would find it and send to Redis a test meant to run inline."""
    from celery import Celery

    return Celery(broker=redis_url, backend=redis_url, set_as_current=False)


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
        client = _celery_client(redis_url)
        kwargs = {"split": "test", "per_type": 1, "types": ["Dice_Count", "Bingo"]}
        _result(client.send_task("puzzles.tasks.bank_generate_task", kwargs=kwargs, queue=queue), worker)
        outcome = _result(
            client.send_task("annotation.tasks.replay_task", kwargs={**kwargs, "workers": 2}, queue=queue), worker
        )
        assert outcome == {"total": 2, "verified": 2, "failures": []}
    finally:
        worker.terminate()
        worker.wait(timeout=20)


def _make_target(name: str) -> tuple[dict[str, str], list[str]]:
    """A Makefile target's exported defaults and its recipe's lines, $(BIN) made this venv's."""
    text = (ROOT / "Makefile").read_text()
    exports = dict(re.findall(rf"^{name}: export (\w+) \?= (\S+)$", text, re.M))
    recipe = re.search(rf"^{name}: setup\n((?:\t.*\n)+)", text, re.M)
    assert recipe, f"no '{name}: setup' target"
    bin_dir = str(Path(sys.executable).parent)
    return exports, [line.strip().replace("$(BIN)", bin_dir) for line in recipe.group(1).splitlines()]


def test_make_superuser_makes_a_staff_account_from_a_fresh_clone(tmp_path):
    """`make superuser` in a checkout with no settings of its own (no SECRET_KEY, no DATABASE_URL,
    no var/): a staff account where `make run` keeps its data. Run as its recipe runs, unattended."""
    exports, lines = _make_target("superuser")
    assert exports == {"DEBUG": "true"}  # what `make run` sets
    commands = [line.split() for line in lines]
    assert commands[-1][-1] == "createsuperuser"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "ARENA_VAR_DIR": str(tmp_path / "var"), **exports}
    env.update(DJANGO_SUPERUSER_USERNAME="boss", DJANGO_SUPERUSER_PASSWORD="a-long-pass", DJANGO_SUPERUSER_EMAIL="")
    for command in commands:
        extra = ["--noinput"] if command[-1] == "createsuperuser" else []
        done = subprocess.run(command + extra, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    with sqlite3.connect(tmp_path / "var" / "arena.sqlite3") as db:
        assert db.execute("SELECT is_staff, is_superuser FROM auth_user WHERE username = 'boss'").fetchall() == [(1, 1)]
    assert (tmp_path / "var" / "secret-key").exists()  # the key `make run` signs with


@pytest.mark.django_db
def test_make_run_the_readme_and_the_sign_in_page_give_make_superuser(client):
    _, run = _make_target("run")
    assert '@echo "    make superuser"' in run
    assert "`make superuser`" in (ROOT / "README.md").read_text()
    assert "<code>make superuser</code>" in client.get("/accounts/login/").content.decode()


def test_a_web_process_starts_without_scipy_stats(db):
    """scipy.stats is some 60 MB of a web process's memory at start (peak RSS 166 MB with it, 104
    without, measured by hand): the one report function that needs it imports it when called, so
    loading the site (settings, every URL's views, the ASGI application) leaves it out."""
    from annotation.agents.server import ROOT, daphne_command

    code = (
        "import sys, django; django.setup(); from django.urls import get_resolver; "
        "get_resolver().url_patterns; import arena_site.asgi; "
        "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))"
    )
    _, env = daphne_command("127.0.0.1", 0)  # this test's settings, as a web process gets them
    started = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert started.returncode == 0, started.stderr[-2000:]
    assert started.stdout.strip().splitlines()[-1] == "[]"
