"""After a long outage a page holds hundreds of unacknowledged batches (about ten a second while a
pointer moves): they must drain in seconds once the server is reachable again, never livelock.

A raw client over the real WebSocket, against a live daphne on the test's PostgreSQL: batch 1 is
acknowledged, then `pending` batches made during the outage are sent, all of them at once on every
connection (as pages did before they kept a window: the hardest case for the server), reconnecting
and resending what is unacknowledged whenever the server closes. The time to catch up is reported
(tests/faults/report.py), not asserted; the ceiling only stops a livelock from hanging the run.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from tests.faults import report
from tests.faults.harness import PER_TICK, tally, web_processes
from tests.faults.test_recovery import _attempts

pytestmark = pytest.mark.browser  # live processes, as the rest of tests/faults

CEILING_S = 60.0


def _batch(seq: int, first: int, t: float) -> str:
    events = [{"k": "keydown", "t": t + i, "key": f"gen{first + i}", "code": "Generated"} for i in range(PER_TICK)]
    return json.dumps({"type": "batch", "seq": seq, "events": events})


async def _catch_up(base: str, uid: str, session: str, pending: int) -> tuple[float, int, set[int]]:
    """Returns the seconds from the first resend to the last ack, the connections it took, and
    the close codes met on the way."""
    import websockets

    url = base.replace("http", "ws") + f"/ws/attempts/{uid}/"
    headers = {"Cookie": f"sessionid={session}", "Origin": base}
    now = time.time() * 1000
    load = {"k": "load", "t": now, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
    async with websockets.connect(url, additional_headers=headers) as socket:
        await socket.send(json.dumps({"type": "batch", "seq": 1, "events": [load]}))
        assert json.loads(await socket.recv()) == {"type": "ack", "seq": 1}
    # The outage: batches 2..pending+1 were made and never acknowledged.
    unacked = {seq: _batch(seq, (seq - 2) * PER_TICK, now + seq) for seq in range(2, pending + 2)}
    acked, connections, codes = 1, 0, set()
    started = time.monotonic()
    while acked < pending + 1 and time.monotonic() - started < CEILING_S:
        connections += 1
        try:
            async with websockets.connect(url, additional_headers=headers) as socket:
                for seq in sorted(unacked):
                    await socket.send(unacked[seq])
                while acked < pending + 1:
                    frame = json.loads(await asyncio.wait_for(socket.recv(), 10))
                    if frame["type"] == "ack":
                        acked = max(acked, frame["seq"])
                        unacked = {seq: raw for seq, raw in unacked.items() if seq > acked}
        except websockets.ConnectionClosed as closed:
            codes.add(closed.rcvd.code if closed.rcvd else 1006)
            await asyncio.sleep(0.5)  # the page's first back-off
    assert acked == pending + 1, f"acknowledged {acked} of {pending + 1} in {CEILING_S:g} s; closes {codes}"
    return time.monotonic() - started, connections, codes


@pytest.mark.parametrize("pending", [300, 1000])
def test_a_reconnect_with_a_backlog_catches_up(puzzles_of, annotator, pending):
    (attempt,), (session,), _ = _attempts(puzzles_of, annotator, count=1)
    row = report.row(f"reconnect with {pending} batches pending (raw client, all sent at once)")
    with web_processes(1) as [server]:
        waited, connections, codes = asyncio.run(_catch_up(server.url, attempt.uid, session, pending))
    attempt.refresh_from_db()
    counted = tally(attempt, pending * PER_TICK)
    row.add(counted, scored=False, recovery_s=waited)
    row.note = f"recovery: from the first resend to the last ack; {connections} connection(s), closes {sorted(codes)}"
    assert (counted["lost"], counted["duplicated"], counted["strangers"]) == (0, 0, []), counted
    assert attempt.acked_seq == pending + 1
