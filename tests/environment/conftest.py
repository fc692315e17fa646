"""The environment server as trainers reach it: `manage.py env serve` in its own process, against
this test's (committed) data, spoken to by openenv-core's published client."""

import contextlib
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from annotation.agents.server import ROOT, _free_port, daphne_command
from annotation.environment.tokens import token_create
from puzzles.models import Puzzle
from puzzles.services import bank_generate

STARTUP_S = 60


@pytest.fixture(autouse=True)
def private_root(settings, tmp_path):
    """Every test's own PRIVATE_ROOT, its env serve's too: rollout ids restart in each test database,
    so a folder shared between them would mix their rollouts' screenshots."""
    settings.PRIVATE_ROOT = tmp_path / "private"
    return settings.PRIVATE_ROOT


@pytest.fixture
def env_server(transactional_db, private_root):
    """start(sessions=N, idle_timeout=S) -> the server's base URL (http://127.0.0.1:P)."""
    with contextlib.ExitStack() as stack:

        def start(*, sessions: int = 2, idle_timeout: float = 300.0) -> str:
            return serve(stack, sessions=sessions, idle_timeout=idle_timeout)[0]

        yield start


def serve(stack: contextlib.ExitStack, *, sessions: int = 2, idle_timeout: float = 300.0, env: dict | None = None):
    """`env serve` on a free port until the stack closes: (its base URL, its process). Its
    environment is this test's database, folders and secret key, unless `env` is given."""
    port = _free_port("127.0.0.1")
    env = env or daphne_command("127.0.0.1", port)[1]
    command = [sys.executable, "manage.py", "env", "serve", "--port", str(port)]
    command += ["--sessions", str(sessions), "--idle-timeout", str(idle_timeout)]
    log = stack.enter_context(tempfile.TemporaryFile("w+"))  # noqa: SIM115  # the caller's stack closes it
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    stack.callback(_stop, process)
    base = f"http://127.0.0.1:{port}"
    _wait_healthy(base, process, log)
    return base, process


def _wait_healthy(base: str, process: subprocess.Popen, log) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"env serve exited with {process.returncode}: {log.read()[-3000:]}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{base}/health", timeout=5) as answer:
            if answer.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError("env serve did not answer /health in time")


def _stop(process: subprocess.Popen) -> None:
    process.terminate()  # daphne stops, then the page server it started
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def bank(transactional_db):
    """bank(*types, seed=11) -> one stored puzzle of each type (all 20 without types)."""

    def make(*types: str, seed: int = 11) -> list[Puzzle]:
        bank_generate(split="test", per_type=1, types=list(types) or None, bank_seed=seed, workers=1)
        found = Puzzle.objects.filter(dataset=f"generated:{seed}", index=0)
        return list(found.filter(type__in=types) if types else found.order_by("type"))

    return make


@pytest.fixture
def key(transactional_db):
    """key(name, datasets, splits, sessions) -> a new token's key (the bank's puzzles are of the test split)."""

    def make(
        name: str = "trainer",
        datasets: tuple[str, ...] = ("generated:11",),
        splits: tuple[str, ...] = ("test",),
        sessions: int = 10,
    ) -> str:
        return token_create(name=name, datasets=list(datasets), splits=list(splits), max_sessions=sessions)[1]

    return make
