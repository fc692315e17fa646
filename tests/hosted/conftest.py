"""The stand-in server (standin.py), started as its own process for each test that asks for it."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

STANDIN = Path(__file__).with_name("standin.py")
# Red_Dot's time per hit in the tests: no test races the server's clock; late hits are made by
# moving the stand-in's clock (/_standin/advance), not by waiting.
GENEROUS_TIMEOUT_MS = 600_000


@dataclass
class StandIn:
    url: str
    process: subprocess.Popen[str]

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        """One request as a page would make it: the status and the raw body."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def json(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, raw = self.call(method, path, body)
        return status, json.loads(raw)

    def advance(self, ms: int) -> None:
        self.call("POST", f"/_standin/advance?ms={ms}")


def start_standin(timeout_ms: int = GENEROUS_TIMEOUT_MS) -> StandIn:
    command = [sys.executable, str(STANDIN), "--port", "0", "--timeout-ms", str(timeout_ms)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    port = process.stdout.readline().strip()  # printed once listening: no port race, no polling
    if not port.isdigit():
        process.kill()
        raise RuntimeError(f"the stand-in did not start (said {port!r})")
    return StandIn(f"http://127.0.0.1:{port}", process)


@pytest.fixture
def standin() -> Iterator[StandIn]:
    server = start_standin()
    try:
        yield server
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)


CDN_URL = "https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"
# The test's own "three.js": just what the stand-in's page uses of it.
LOCAL_THREE = b"window.THREE = {REVISION: '128', Object3D: function () { this.name = ''; }};\n"
BENCHMARK = "standin"


@pytest.fixture
def benchmark(standin, tmp_path, monkeypatch):
    """The stand-in registered as BENCHMARK, two puzzles of each family drawn, its CDN script
    pinned to a local copy."""
    from annotation.hosted.registry import benchmark_add, benchmark_draw

    monkeypatch.setenv("ARENA_HOSTED_ASSETS", str(tmp_path))  # read by the page server (its own process)
    digest = hashlib.sha256(LOCAL_THREE).hexdigest()
    (tmp_path / digest).write_bytes(LOCAL_THREE)
    added = benchmark_add(name=BENCHMARK, url=standin.url)
    added.assets = {CDN_URL: {"sha256": digest, "source": "written by the test"}}
    added.save(update_fields=["assets"])
    benchmark_draw(name=BENCHMARK, per_type=2, seed=3)
    return added
