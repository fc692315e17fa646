"""The PostgreSQL pool after a database restart or failover (arena_site/postgresql/base.py)."""

import logging

import psycopg
import pytest
from django.db import connection

from arena_site.postgresql.base import RecoveringPool

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    return {**connection.get_connection_params(), "autocommit": True}


def _backends(pool: RecoveringPool) -> list[int]:
    """The server pids of the pool's idle connections, each borrowed once and given back."""
    held = [pool.getconn() for _ in range(pool.min_size)]
    pids = [conn.info.backend_pid for conn in held]
    for conn in held:
        pool.putconn(conn)
    return pids


def test_a_restart_costs_a_request_one_dead_connection_not_one_per_idle_one(postgresql, caplog):
    """psycopg's pool waits ~1 s, 2 s, 4 s... between failed checks: walking four dead connections
    took over 3 s. The first failed check sweeps the rest, so the next try gets a fresh one."""
    with RecoveringPool(kwargs=postgresql, min_size=4, max_size=4, open=True) as pool:
        pool.wait()
        before = _backends(pool)
        with psycopg.connect(**postgresql) as admin:  # as a restart would: every backend ended
            ended = admin.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM unnest(%s::int[]) AS pid",
                [before],
            ).fetchone()[0]
        assert ended == 4
        caplog.set_level(logging.INFO, logger="psycopg.pool")
        with pool.connection() as conn:
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        failed_checks = [r for r in caplog.records if r.getMessage().startswith("connection failed check")]
        assert len(failed_checks) == 1
        assert pid not in before
        pool.wait()  # refilled: every connection it holds now works
        assert not set(_backends(pool)) & set(before)


def test_the_site_uses_the_recovering_pool(postgresql):
    assert connection.settings_dict["CONN_HEALTH_CHECKS"]
    assert isinstance(connection.pool, RecoveringPool)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
