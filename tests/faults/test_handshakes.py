"""Who may open which attempt's socket, over the real WebSocket against a live daphne (the
handshake's session and user lookup runs in the pool of database threads, arena_site/asgi.py):
the attempt's own signed-in participant is accepted; anyone else, or no one, is told why and closed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

import pytest

from annotation.agents.browser import session_for
from annotation.live.attempts import attempt_start
from annotation.models import Event
from tests.faults.harness import web_processes

pytestmark = pytest.mark.browser  # live processes, as the rest of tests/faults


def _load_batch() -> str:
    load = {"k": "load", "t": time.time() * 1000, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
    return json.dumps({"type": "batch", "seq": 1, "events": [load]})


async def _first_frames(base: str, uid: str, session: str | None) -> tuple[list[dict], int | None]:
    """Sends batch 1; returns the frames received until the server closes or acknowledges, and the close code."""
    import websockets

    headers = {"Origin": base, **({"Cookie": f"sessionid={session}"} if session else {})}
    url = base.replace("http", "ws") + f"/ws/attempts/{uid}/"
    frames: list[dict] = []
    async with websockets.connect(url, additional_headers=headers) as socket:
        try:
            # A refusal is sent the moment the socket opens: its frame and close may arrive before
            # batch 1 goes out, and then send() raises. What came before the close is still read.
            with contextlib.suppress(websockets.ConnectionClosed):
                await socket.send(_load_batch())
            while not frames or frames[-1]["type"] != "ack":
                frames.append(json.loads(await asyncio.wait_for(socket.recv(), 10)))
        except websockets.ConnectionClosed as closed:
            return frames, closed.rcvd.code if closed.rcvd else None
    return frames, None


def test_only_the_attempts_own_participant_opens_its_socket(puzzles_of, annotator):
    puzzle = puzzles_of("Geometry_Click")[0]
    owner, participant = annotator("owner")
    intruder, _ = annotator("mallory")
    attempt = attempt_start(participant=participant, puzzle=puzzle)
    with web_processes(1) as [server]:
        for session in (session_for(intruder), None):
            frames, code = asyncio.run(_first_frames(server.url, attempt.uid, session))
            assert [f.get("code") for f in frames] == ["not_allowed"] and code == 4403, (frames, code)
        assert not Event.objects.filter(attempt=attempt).exists()
        frames, code = asyncio.run(_first_frames(server.url, attempt.uid, session_for(owner)))
    assert (frames, code) == ([{"type": "ack", "seq": 1}], None)
    assert Event.objects.filter(attempt=attempt).count() == 1
