"""A live socket through database hiccups and floods: it keeps acknowledging, or closes in a way
the page sees (never open and silent)."""

import time
from unittest import mock

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from annotation.live import consumers
from annotation.reporting import consumers as dashboard
from tests.live_stream import batch, socket_for

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
    if connection.vendor != "postgresql":  # the tests that terminate backends skip themselves
        return
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


async def test_the_dashboards_thread_reads_again_after_the_database_dropped_its_connections():
    """The dashboard's summaries run in a thread that lives as long as the process. Channels' test
    communicator turns database_sync_to_async's connection checks off (as here), and a thread that
    kept its connection then met it dead on every later summary: the dashboard went silent."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL backends to terminate")
    with mock.patch("channels.db.close_old_connections", lambda: None):
        await dashboard._summarise()
        assert await drop_the_servers_database_connections() >= 1
        summary = await dashboard._summarise()
    assert summary["active_annotators"] == 0


async def test_a_flood_closes_with_a_code_the_websocket_library_accepts(open_attempt, monkeypatch):
    monkeypatch.setattr(consumers, "MAX_INBOX_BYTES", 0)  # every batch is one too many
    attempt, session = await database_sync_to_async(open_attempt)("Geometry_Click")
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    await socket.send_to(text_data=batch(1, beat()))
    # What is held is said first, so a page that floods still learns how far it got.
    assert await socket.receive_json_from(timeout=5) == {"type": "ack", "seq": 0}
    closed = await socket.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": consumers.TOO_FAST}
    # Applications may close with 1000 or 3000-4999 only (RFC 6455 section 7.4.2).
    assert 3000 <= consumers.TOO_FAST <= 4999 and 3000 <= consumers.RETRY_LATER <= 4999


async def test_many_sockets_at_once_store_every_batch_once_and_in_order(open_attempt):
    """Sockets that send faster than one write at a time share rounds of writes (the usual batches
    of many attempts in one statement); each batch is still stored once, in order, acknowledged
    only once stored, and a submit among them is scored."""
    import asyncio

    from annotation.models import Event

    pairs = [await database_sync_to_async(open_attempt)("Dice_Count") for _ in range(10)]
    sockets = [socket_for(attempt.uid, session) for attempt, session in pairs]
    for socket in sockets:
        assert (await socket.connect())[0]
    t = time.time() * 1000

    def numbered(i: int, seq: int) -> list[dict]:
        return [{"k": "keydown", "t": t + seq, "key": f"gen{i}:{seq}:{j}", "code": "Generated"} for j in range(6)]

    last = 8
    for seq in range(1, last + 1):  # every socket's batches, back to back, nobody waiting for acks
        for i, socket in enumerate(sockets):
            events = numbered(i, seq)
            if seq == 1:
                events.insert(0, {"k": "load", "t": t, "w": 1280, "h": 1080, "scale": 1, "state": "visible"})
            if i == 0 and seq == last:  # one of them answers in the middle of a round
                events += [{"k": "act.type", "t": t + 50, "text": "7"}, {"k": "act.submit", "t": t + 51}]
            await socket.send_to(text_data=batch(seq, *events))

    async def answers(socket, scored: bool) -> list[dict]:
        frames: list[dict] = []
        while {"type": "ack", "seq": last} not in frames or (scored and frames[-1]["type"] != "submitted"):
            frames.append(await socket.receive_json_from(timeout=20))
        return frames

    heard = await asyncio.gather(*(answers(socket, i == 0) for i, socket in enumerate(sockets)))
    for frames in heard:
        acks = [f["seq"] for f in frames if f["type"] == "ack"]
        assert acks == sorted(acks) and acks[-1] == last  # acknowledged in order, up to the last
    assert heard[0][-1] == {"type": "submitted", "verdict": None}
    for socket in sockets:
        await socket.disconnect()

    @database_sync_to_async
    def stored(attempt):
        rows = list(Event.objects.filter(attempt=attempt).order_by("seq", "index").values_list("seq", "data"))
        attempt.refresh_from_db()
        return rows, attempt

    for i, (attempt, _) in enumerate(pairs):
        rows, attempt = await stored(attempt)
        keys = [data["key"] for _, data in rows if "key" in data]
        assert keys == [f"gen{i}:{seq}:{j}" for seq in range(1, last + 1) for j in range(6)]  # once each, in order
        assert sorted({seq for seq, _ in rows}) == list(range(1, last + 1)) and attempt.acked_seq == last
        assert (attempt.submitted_at is not None) == (i == 0)
