"""Django's PostgreSQL backend whose pool renews its connections when one is found dead.

psycopg's pool checks a connection before it hands it out, and after a failed check it waits
before trying the next one: no wait, then about 1 s, 2 s, 4 s... (psycopg_pool's backoff, so that a
broken check does not spin). After a database restart or failover every idle connection is dead,
so a request walked through them one by one and waited 3 s with three of them, 7 s with four,
while the pages' batches piled up unacknowledged (3.3 s seen in tests/faults/test_recovery.py,
7.1 s in tests/test_database_pool.py without the renewal). One dead
connection means the others likely are too: the first failed check renews them all (the pool's
own drain(): the idle ones are closed, the ones in use are closed when given back, and new ones
are opened in the pool's workers), so the request's next try waits for a fresh connection instead
of checking the next dead one. Nothing is checked one by one, so a network that drops everything
costs no round trip per connection. While the database is down the pool tries again every
RECONNECT_MAX_DELAY_S at most, so a connection is there as soon as the database is back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool
from psycopg_pool.base import AttemptWithBackoff

# How often the pool tries to open a connection while the database refuses, at most. psycopg_pool's
# own back-off doubles from 1 s without bound (1, 2, 4, 8, 16 s...): after a 20 s outage its next
# try came up to 11 s after the database was back, and every request and socket handshake waited
# for it (a page's catch-up took 21 s, bench/recovery.py). A try costs a refused TCP connection.
RECONNECT_MAX_DELAY_S = 0.5


class _PromptReconnect(AttemptWithBackoff):
    """psycopg_pool's reconnection back-off, never longer than RECONNECT_MAX_DELAY_S."""

    INITIAL_DELAY = 0.25

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, RECONNECT_MAX_DELAY_S)


# How long a connection is waited for here, when shorter than the pool's own timeout (pool_wait).
# A context variable: asgiref's sync_to_async runs the database call in a copy of the caller's context.
_wait_s: ContextVar[float | None] = ContextVar("arena_pool_wait_s", default=None)


@contextmanager
def pool_wait(seconds: float) -> Iterator[None]:
    """Within the block a connection from the pool is waited for at most `seconds`, not the pool's
    timeout (ARENA_DB_POOL_TIMEOUT, a queue worth waiting in under load): with the database down,
    a query fails with OperationalError that soon. For a reader that would rather say "the
    database is unavailable" at once (the staff dashboard)."""
    token = _wait_s.set(seconds)
    try:
        yield
    finally:
        _wait_s.reset(token)


class RecoveringPool(ConnectionPool):
    def __init__(self, *args, configure=None, **kwargs):
        self._renewing = threading.Lock()
        self._renewed_at = float("-inf")  # time.monotonic() of the last renewal

        def opened(conn) -> None:
            conn.arena_opened_at = time.monotonic()
            if configure is not None:
                configure(conn)

        super().__init__(*args, configure=opened, check=self._check_or_renew, **kwargs)

    def _add_connection(self, attempt, growing: bool = False) -> None:
        """The pool's own, with its reconnection back-off capped (_PromptReconnect)."""
        super()._add_connection(attempt or _PromptReconnect(timeout=self.reconnect_timeout), growing)

    def getconn(self, timeout: float | None = None):
        """A connection, waited for at most the pool's timeout, or pool_wait's when shorter."""
        shorter = _wait_s.get()
        if timeout is None and shorter is not None:
            timeout = min(shorter, self.timeout)
        return super().getconn(timeout)

    def _check_or_renew(self, conn) -> None:
        try:
            self.check_connection(conn)
        except Exception:
            self._renew(conn)
            raise  # the pool discards this one and the request tries again

    def _renew(self, dead) -> None:
        """Once per outage: a dead connection opened before the last renewal is one that renewal
        already replaces (it is closed when given back), however late its check fails (on a
        network that drops everything a check waits for TCP to give up); one opened after it
        means a new outage."""
        with self._renewing:
            if getattr(dead, "arena_opened_at", float("-inf")) < self._renewed_at:
                return
            self._renewed_at = time.monotonic()
        self.drain()


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self):
        """Django's own pool (django/db/backends/postgresql/base.py), a RecoveringPool when
        connections are checked before use (CONN_HEALTH_CHECKS)."""
        options = self.settings_dict["OPTIONS"].get("pool")
        if not self.settings_dict["CONN_HEALTH_CHECKS"] or self.alias == NO_DB_ALIAS or not options:
            return super().pool
        if self.alias not in self._connection_pools:
            if self.settings_dict.get("CONN_MAX_AGE", 0) != 0:
                raise ImproperlyConfigured("Pooling doesn't support persistent connections.")
            connect_kwargs = {**self.get_connection_params(), "autocommit": True}  # Django sets it later
            pool = RecoveringPool(
                kwargs=connect_kwargs,
                open=False,  # opened on first use, as Django's
                configure=self._configure_connection,
                **({} if options is True else options),
            )
            self._connection_pools.setdefault(self.alias, pool)  # the first of racing threads wins
        return self._connection_pools[self.alias]
