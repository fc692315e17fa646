"""The PostgreSQL pool after a database restart or failover (arena_site/postgresql/base.py)."""

import logging
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from django.db import connection

from arena_site.env import NETWORK_LIMITS
from arena_site.postgresql.base import RecoveringPool

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    return {**connection.get_connection_params(), "autocommit": True}


def _backends(pool: RecoveringPool, count: int | None = None) -> list[int]:
    """The server pids of `count` of the pool's idle connections (all it keeps: min_size), each
    borrowed once and given back."""
    held = [pool.getconn() for _ in range(pool.min_size if count is None else count)]
    pids = [conn.info.backend_pid for conn in held]
    for conn in held:
        pool.putconn(conn)
    return pids


def test_a_restart_costs_a_request_one_dead_connection_not_one_per_idle_one(postgresql, caplog):
    """psycopg's pool waits 0 s, ~1 s, 2 s, 4 s... between failed checks: walking four dead
    connections took 7 s. The first failed check renews the pool, so the next try gets a fresh one."""
    with RecoveringPool(kwargs=postgresql, min_size=4, max_size=4, open=True) as pool:
        pool.wait()
        before = _backends(pool)
        assert _end(postgresql, before) == 4
        caplog.set_level(logging.INFO, logger="psycopg.pool")
        with pool.connection() as conn:
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        failed_checks = [r for r in caplog.records if r.getMessage().startswith("connection failed check")]
        assert len(failed_checks) == 1
        assert pid not in before
        pool.wait()  # refilled: every connection it holds now works
        assert not set(_backends(pool)) & set(before)


def _end(postgresql, pids: list[int]) -> int:
    with psycopg.connect(**postgresql) as admin:  # as a restart would: every backend ended
        return admin.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 30000)) FROM unnest(%s::int[]) AS pid", [pids]
        ).fetchone()[0]


def test_requests_failing_together_each_meet_one_dead_connection_at_most(postgresql, caplog):
    """Three at once among six dead connections: one renewal serves them all."""
    with RecoveringPool(kwargs=postgresql, min_size=6, max_size=6, open=True) as pool:
        pool.wait()
        before = _backends(pool)
        assert _end(postgresql, before) == 6
        caplog.set_level(logging.INFO, logger="psycopg.pool")

        def query(_):
            with pool.connection() as conn:
                return conn.execute("SELECT pg_backend_pid()").fetchone()[0]

        with ThreadPoolExecutor(3) as threads:
            pids = list(threads.map(query, range(3)))
        assert not set(pids) & set(before)
        failed = Counter(r.threadName for r in caplog.records if r.getMessage().startswith("connection failed check"))
        assert failed and max(failed.values()) == 1, failed
        pool.wait()
        assert pool.get_stats()["pool_size"] == 6  # renewed, not grown or shrunk


def test_a_late_failing_check_of_a_connection_the_renewal_covered_renews_nothing(postgresql):
    """On a network that drops everything a check waits for TCP to give up, so checks of the same
    outage fail seconds apart: the later ones must not close the renewal's fresh connections."""
    with RecoveringPool(kwargs=postgresql, min_size=4, max_size=4, open=True) as pool:
        pool.wait()
        held = pool.getconn()  # in use through the outage
        assert _end(postgresql, [held.info.backend_pid, *_backends(pool, 3)]) == 4
        with pool.connection() as conn:  # meets a dead idle one: renews
            conn.execute("SELECT 1")
        time.sleep(1.5)  # longer than any rate limit: only the connection's age may decide
        with pytest.raises(psycopg.OperationalError):
            pool._check_or_renew(held)  # its own check, failing late
        pool.putconn(held)  # closed and replaced: the renewal marked it
        pool.wait()
        assert pool.get_stats()["connections_num"] == 4 + 4  # opened at start, and once each after


def test_the_site_uses_the_recovering_pool_and_libpqs_network_limits(postgresql):
    assert connection.settings_dict["CONN_HEALTH_CHECKS"]
    assert isinstance(connection.pool, RecoveringPool)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
        applied = cursor.connection.info.get_parameters()  # what libpq itself holds for this connection
    assert {name: applied.get(name) for name in NETWORK_LIMITS} == {n: str(v) for n, v in NETWORK_LIMITS.items()}
