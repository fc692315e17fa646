"""A real ASGI server (daphne, as deployed) serving the live page to a runner's browser.

It runs as its own program, not a forked copy of this one: a Celery worker's pool processes may
not fork children, and a fresh process has no threads or connections inherited by accident. It
gets this process's settings that matter through its environment: the database in use (the
test database, in tests), the media and private folders, the secret key.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from annotation.live.frames import MAX_FRAME_BYTES

STARTUP_TIMEOUT_S = 30
# daphne refuses larger WebSocket messages outright (it would otherwise hold up to 1 MiB each). Twice
# the largest frame the site accepts, so an oversized frame still gets the site's own "too large".
# docker-compose.yml's web command passes the same number.
WEBSOCKET_MAX_BYTES = 2 * MAX_FRAME_BYTES
ROOT = Path(settings.BASE_DIR)


def database_url() -> str:
    """A URL for the database this process is using right now (the test database in tests)."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    credentials = quote(db["USER"] or "") + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    host = f"{db['HOST'] or 'localhost'}" + (f":{db['PORT']}" if db["PORT"] else "")
    return f"postgres://{credentials}@{host}/{quote(db['NAME'])}"


def _environment() -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "PRIVATE_ROOT": str(settings.PRIVATE_ROOT),
        "SECRET_KEY": settings.SECRET_KEY,
        "ARENA_SHOW_VERDICT": "true" if settings.ARENA_SHOW_VERDICT else "false",
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "arena_site.settings"),
    }


def daphne_command(host: str, port: int) -> tuple[list[str], dict[str, str]]:
    """One web process as deployed, serving the site on host:port: daphne's command line and the
    environment that carries this process's settings (database, folders, secret key) to it.
    The page server, the event-path bench and the fault tests all start theirs with this."""
    daphne = Path(sys.executable).with_name("daphne")  # this environment's daphne, whatever PATH holds
    command = [
        str(daphne),
        *("-b", host, "-p", str(port)),
        *("--websocket-max-message-size", str(WEBSOCKET_MAX_BYTES)),
        *("--websocket-max-frame-size", str(WEBSOCKET_MAX_BYTES)),
        "arena_site.asgi:application",
    ]
    return command, _environment()


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _wait_until_listening(process: subprocess.Popen, host: str, port: int, log: IO[str]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the page server exited with {process.returncode}: {log.read()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the page server did not listen on {host}:{port} within {STARTUP_TIMEOUT_S} s")


@contextlib.contextmanager
def live_server(host: str = "127.0.0.1") -> Iterator[str]:
    """Serve the site on a free port for the duration of the block; yields its base URL."""
    with web_process(host) as (url, _):
        yield url


@contextlib.contextmanager
def web_process(host: str = "127.0.0.1") -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """live_server's process itself, for a caller that watches it (bench/bounds.py reads its memory)."""
    port = _free_port(host)
    command, env = daphne_command(host, port)
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            _wait_until_listening(process, host, port, log)
            yield f"http://{host}:{port}", process
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
