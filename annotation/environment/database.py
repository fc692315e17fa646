"""The database as `env serve` reaches it from its event loop, and what happens when it goes away.

The server's database calls all run in asgiref's one thread for thread-sensitive calls, and no
request cycle ever ends there: Django closes a request's connection (giving it back to the pool)
when the request ends, but nothing ended one here, so that thread kept its first connection for
the life of the process, and after a PostgreSQL restart every call failed on it ("the connection
is closed"). So each call is a request of its own (`database`: Django's close_old_connections
before and after, as Channels' database_sync_to_async does): a dead connection is dropped and the
next call takes a fresh one from the pool, which renews them all on meeting a dead one
(arena_site/postgresql/). The agents' engine's own calls made during a frame (a turn recorded)
use the thread's connection as it is; the frame began with a fresh one (`database_ready`).

`database_ready` starts each reset and step: while the database is down the frame fails within
READY_TIMEOUT_S with a clear error before anything is done on the page, instead of acting and then
failing to record it after the pool's full wait.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connection

P = ParamSpec("P")
R = TypeVar("R")
READY_TIMEOUT_S = 2.0


class DatabaseUnavailable(Exception):
    """The database did not answer: nothing was done, the client may try again."""


def database(function: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """function, run in the database thread as a request of its own."""

    def cycle(*args: P.args, **kwargs: P.kwargs) -> R:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(cycle)


async def database_ready() -> None:
    """Return once a connection answers; DatabaseUnavailable within about READY_TIMEOUT_S if none does."""
    try:
        await sync_to_async(_probe)()
    except Exception as error:
        first = str(error).splitlines()[0] if str(error) else ""
        raise DatabaseUnavailable(f"the database is unavailable ({type(error).__name__}: {first})") from error


def _probe() -> None:
    close_old_connections()  # a connection left from before an outage is given back, not reused
    pool = getattr(connection, "pool", None)  # PostgreSQL's pool (settings: ARENA_DB_POOL), or None
    if pool is None:
        connection.ensure_connection()
        return
    with pool.connection(timeout=READY_TIMEOUT_S):
        pass  # the pool checks it before handing it out, and renews them all if it is dead
