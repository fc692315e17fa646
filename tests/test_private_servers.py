"""The private servers the restart tests stand on: a stop refuses connections, a start serves the
same data again on the same port, and a killed Redis comes back empty."""

from __future__ import annotations

import psycopg
import pytest
import redis

from tests.private_servers import private_postgres, private_redis


def test_a_private_postgres_keeps_its_data_across_a_restart_and_refuses_while_down():
    with private_postgres() as pg:
        with psycopg.connect(pg.url, autocommit=True) as conn:
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE tablename = 'annotation_attempt'").fetchone()
            assert tables == (1,)  # migrated
            conn.execute("CREATE TABLE kept (n int)")
            conn.execute("INSERT INTO kept VALUES (7)")
        pg.stop()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(pg.url, connect_timeout=5)
        pg.start()
        with psycopg.connect(pg.url) as conn:
            assert conn.execute("SELECT n FROM kept").fetchone() == (7,)


def test_a_private_redis_stopped_keeps_its_keys_and_killed_loses_them():
    with private_redis() as server:
        client = redis.Redis.from_url(server.url(3))
        client.set("kept", "1")
        server.stop()
        with pytest.raises(redis.ConnectionError):
            client.ping()
        server.start()
        assert client.get("kept") == b"1"
        server.kill()
        server.start()
        assert client.get("kept") is None
