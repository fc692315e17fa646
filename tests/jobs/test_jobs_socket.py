"""The Jobs page's socket (/ws/jobs/): staff get the jobs' counts at once and again when a worker
moves them; anybody else is refused."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from puzzles.jobs.models import Job
from tests.live_stream import session_of, socket_at


def jobs_socket(session: str | None) -> WebsocketCommunicator:
    return socket_at("/ws/jobs/", session)


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_staff_get_the_jobs_counts_at_once_and_again_when_they_move():
    job = await database_sync_to_async(Job.objects.create)(kind="generate", label="x", started_by="grace", total=40)
    socket = jobs_socket(await database_sync_to_async(session_of)("grace", staff=True))
    connected, _ = await socket.connect()
    assert connected
    first = await socket.receive_json_from(timeout=5)
    counts = {"pk": job.pk, "state": "running", "done": 0, "total": 40, "failed": 0, "cancel_requested": False}
    assert first == {"type": "jobs", "jobs": [{**counts, "error": ""}]}
    assert await socket.receive_nothing(timeout=1.5)  # nothing moved: nothing sent
    await database_sync_to_async(Job.objects.filter(pk=job.pk).update)(done=25)
    moved = await socket.receive_json_from(timeout=5)
    assert moved["jobs"][0]["done"] == 25
    await socket.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_annotators_and_strangers_are_refused():
    session = await database_sync_to_async(session_of)("ann", staff=False)
    for cookie in (session, None):
        socket = jobs_socket(cookie)
        await socket.connect()
        assert (await socket.receive_json_from(timeout=5))["code"] == "not_allowed"
        assert await socket.receive_output() == {"type": "websocket.close", "code": 4403}
        await socket.disconnect()
