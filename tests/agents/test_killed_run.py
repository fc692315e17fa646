"""`agent run` killed mid-rollout: the rollout it left open is failed, with the reason, when the run
is resumed (annotation/agents/players.py), and played again only when asked (--retry-failed)."""

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from annotation.agents.server import ROOT, daphne_command
from annotation.models import Rollout
from tests.agents.conftest import command
from tests.agents.fakes import FakeChatServer
from tests.agents.test_accounting import solve_geometry
from tests.environment.test_server_stop import descendants

pytestmark = pytest.mark.browser
CEILING_S = 60.0


def test_a_killed_run_s_open_rollout_is_failed_when_resumed(puzzles_of):
    (puzzle,) = puzzles_of("Geometry_Click")
    answering = threading.Event()

    def respond(body):
        answering.wait(CEILING_S)  # the first model call hangs until the run is killed
        return solve_geometry(puzzle)

    with FakeChatServer(respond) as fake:
        _, env = daphne_command("127.0.0.1", 0)  # this test's database and folders
        run = [sys.executable, "manage.py", "agent", "run", "--protocol", "openai-tools", "--model", "m"]
        run += ["--base-url", fake.url, "--split", "test", "--name", "killed", "--workers", "1"]
        process = subprocess.Popen(run, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        began = time.monotonic()
        while not fake.requests and time.monotonic() - began < CEILING_S and process.poll() is None:
            time.sleep(0.2)
        assert fake.requests, "the run never asked its model"
        children = descendants(process.pid)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        for pid in children:  # its page server and browser, orphaned by the kill
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        answering.set()
        assert Rollout.objects.get().status == Rollout.Status.PENDING  # open: nobody said otherwise yet
        command("agent", "run", "--resume", "killed")
        rollout = Rollout.objects.get()
        assert rollout.status == Rollout.Status.FAILED
        assert rollout.reason.startswith(f"its player stopped: agent run (pid {process.pid} on "), rollout.reason
        again = command("agent", "run", "--resume", "killed", "--retry-failed")
    assert again.strip().endswith("agent: 1/1 correct"), again
    assert Rollout.objects.get().status == Rollout.Status.DONE
