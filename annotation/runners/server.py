"""A real ASGI server (daphne) in a child process, serving the live page to a runner's browser."""
from __future__ import annotations

import contextlib
from typing import Iterator

from daphne.testing import DaphneProcess
from django.db import connections

STARTUP_TIMEOUT_S = 30


def _after_fork() -> None:
    """Runs in the child before it serves. Threads do not survive a fork: asgiref's shared
    executor for thread-sensitive calls (the consumers' database work) would point at a thread
    that no longer exists, if the parent had used it, and every such call would hang."""
    from concurrent.futures import ThreadPoolExecutor

    from asgiref.sync import SyncToAsync

    SyncToAsync.single_thread_executor = ThreadPoolExecutor(max_workers=1)


def _application():
    # Built in the child, after the fork, like `daphne arena_site.asgi:application` would.
    from arena_site.asgi import application

    return application


@contextlib.contextmanager
def live_server(host: str = "127.0.0.1") -> Iterator[str]:
    """Serve the site on a free port for the duration of the block; yields its base URL."""
    # The child must open its own database connections, not share the parent's sockets.
    connections.close_all()
    process = DaphneProcess(host, _application, setup=_after_fork)
    process.start()
    try:
        if not process.ready.wait(STARTUP_TIMEOUT_S):
            detail = process.errors.get(False)[1] if not process.errors.empty() else "no error reported"
            raise RuntimeError(f"the page server did not start: {detail}")
        yield f"http://{host}:{process.port.value}"
    finally:
        process.terminate()
        process.join(10)

