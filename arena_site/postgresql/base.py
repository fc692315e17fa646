"""Django's PostgreSQL backend whose pool sweeps out its dead connections together.

psycopg's pool checks a connection before it hands it out, and after a failed check it waits
before trying the next one: no wait, then about 1 s, 2 s, 4 s... (psycopg_pool's backoff, so that a
broken check does not spin). After a database restart or failover every idle connection is dead,
so a request walked through them one by one and waited 3 s with four of them, 7 s with five, while
the pages' batches piled up unacknowledged (measured in tests/faults/test_recovery.py). One dead
connection means the others likely are too: the first failed check checks every idle connection
at once (the pool's own check(), a round trip each) and replaces the dead ones, so the request's
next try gets a fresh connection instead of the next dead one.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool


class RecoveringPool(ConnectionPool):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, check=self._check_or_sweep, **kwargs)

    def _check_or_sweep(self, conn) -> None:
        try:
            self.check_connection(conn)
        except Exception:
            self.check()  # the idle ones; the failed one is discarded and replaced by the caller
            raise


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
