"""A live socket through database hiccups and floods: it keeps acknowledging, or closes in a way
the page sees (never open and silent)."""

import time

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from annotation.live import consumers
from tests.annotation.conftest import batch, socket_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def beat() -> dict:
    return {"k": "beat", "t": time.time() * 1000}


@database_sync_to_async
def drop_the_servers_database_connections() -> int:
    """What a database restart does to the connections the server keeps: they die under it.
    The test's own connections (this one, and the one the test database is torn down with) stay;
    each termination is waited for (up to 5 s), so the next write meets a dead connection."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> ALL(%s)",
            [KEPT],
        )
        return cursor.fetchone()[0]


KEPT: list[int] = []  # backends of the test itself


@pytest.fixture(autouse=True)
def _keep_the_tests_own_connection():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        KEPT[:] = [cursor.fetchone()[0]]


async def test_a_socket_keeps_acknowledging_after_the_database_drops_its_connections(open_attempt):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL backends to terminate")
    attempt, session = await database_sync_to_async(open_attempt)("Geometry_Click")
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    await socket.send_to(text_data=batch(1, beat()))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    assert await drop_the_servers_database_connections() >= 1  # the socket's writer held one
    await socket.send_to(text_data=batch(2, beat()))
    assert await socket.receive_json_from(timeout=10) == {"type": "ack", "seq": 2}  # a fresh connection
    await socket.disconnect()


async def test_a_handshake_right_after_the_database_dropped_its_connections_succeeds(open_attempt):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL backends to terminate")
    attempt, session = await database_sync_to_async(open_attempt)("Geometry_Click")
    first = socket_for(attempt.uid, session)
    assert (await first.connect())[0]
    await first.send_to(text_data=batch(1, beat()))
    assert await first.receive_json_from() == {"type": "ack", "seq": 1}
    await first.disconnect()
    assert await drop_the_servers_database_connections() >= 1  # the server held one: it is gone
    again = socket_for(attempt.uid, session)
    assert (await again.connect())[0]
    await again.send_to(text_data=batch(2, beat()))
    assert await again.receive_json_from(timeout=10) == {"type": "ack", "seq": 2}
    await again.disconnect()


async def test_a_flood_closes_with_a_code_the_websocket_library_accepts(open_attempt, monkeypatch):
    monkeypatch.setattr(consumers, "MAX_INBOX", 0)  # every batch is one too many
    attempt, session = await database_sync_to_async(open_attempt)("Geometry_Click")
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    await socket.send_to(text_data=batch(1, beat()))
    closed = await socket.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": consumers.TOO_FAST}
    # Applications may close with 1000 or 3000-4999 only (RFC 6455 section 7.4.2).
    assert 3000 <= consumers.TOO_FAST <= 4999 and 3000 <= consumers.RETRY_LATER <= 4999
