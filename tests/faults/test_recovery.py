"""Live attempts through faults in the real parts, counted event by event.

Real daphne processes on the test's PostgreSQL and Redis, real Chromium pages whose in-page
generator numbers every event (60 events/s a page, as a pointer moving all the time), a fault in the
middle of the stream, then the person's answer. Each scenario asserts that every generated number is
stored exactly once, nothing else is, and every attempt is scored; the time to recover is measured
and reported (tests/faults/report.py), never asserted.
"""

from __future__ import annotations

import asyncio
import json
import time

import psycopg
import psycopg.sql
import pytest
from django.db import connection

from annotation.agents.browser import chromium, perform, session_for, wait_submitted
from annotation.live.attempts import attempt_start
from annotation.live.intake import GAP_WAIT_S
from puzzles.registry import get_type
from tests.faults import report
from tests.faults.harness import PER_TICK, Daphne, Proxy, page_on, recovered, tally, web_processes

pytestmark = pytest.mark.browser

PAGES = 2  # attempts streaming at once in a scenario
BEFORE_S = AFTER_S = 1.5  # streaming before the fault, and after recovering from it
DROP_S = 3.0  # how long the database keeps dropping connections


def _attempts(puzzles_of, annotator, count: int = PAGES):
    puzzle = puzzles_of("Geometry_Click")[0]
    kind = get_type(puzzle.type)
    answer = kind.compile_actions(puzzle.truth, kind.layout(puzzle.public))
    attempts, sessions = [], []
    for i in range(count):
        user, participant = annotator(f"person{i}")
        attempts.append(attempt_start(participant=participant, puzzle=puzzle))
        sessions.append(session_for(user))
    return attempts, sessions, answer


async def _stream_through(fault, base_url: str, attempts, sessions, answer) -> tuple[list[int], list[float]]:
    """Pages stream; `fault()` is started and the pages' recovery measured meanwhile; they stream a
    little longer, stop generating and answer. Returns events generated and recovery s per page."""
    async with chromium() as browser:
        pages = [await page_on(browser, base_url, s, a.uid) for a, s in zip(attempts, sessions)]
        for page in pages:
            await page.evaluate(f"window.__gen.start({PER_TICK})")
        await asyncio.sleep(BEFORE_S)
        since, over = time.monotonic(), asyncio.Event()

        async def inject():
            await fault()
            over.set()

        _, *recoveries = await asyncio.gather(inject(), *(recovered(page, since, over) for page in pages))
        await asyncio.sleep(AFTER_S)
        generated = [await page.evaluate("window.__gen.stop()") for page in pages]
        for page in pages:
            for action in answer:
                await perform(page, action)
        for page in pages:
            await wait_submitted(page, 60)
        return generated, recoveries


def _count(row: report.Row, attempts, generated, recoveries) -> list[dict]:
    """Fill in the report's row first (kept even when an assertion below fails), then check."""
    tallies = []
    for attempt, made, recovery in zip(attempts, generated, recoveries):
        attempt.refresh_from_db()
        counted = tally(attempt, made)
        row.add(counted, scored=attempt.submitted_at is not None, recovery_s=recovery)
        tallies.append((attempt, counted))
    for attempt, counted in tallies:
        assert counted["generated"] > 0
        assert (counted["lost"], counted["duplicated"], counted["strangers"]) == (0, 0, []), counted
        assert attempt.submitted_at is not None and attempt.correct, (attempt.reason, attempt.input_problem)
        assert attempt.missing_batches in (None, []), attempt.missing_batches
    return [counted for _, counted in tallies]


def test_daphne_killed_and_restarted_mid_attempt(puzzles_of, annotator):
    attempts, sessions, answer = _attempts(puzzles_of, annotator)
    row = report.row("daphne killed (-9), restarted", "the wait includes daphne's own start-up")
    server = Daphne().start()
    try:

        async def fault():
            server.kill()  # mid-stream: writes in flight die with the process
            await asyncio.to_thread(server.start)  # a supervisor's restart, on the same port

        generated, recoveries = asyncio.run(_stream_through(fault, server.url, attempts, sessions, answer))
    finally:
        server.stop()
    _count(row, attempts, generated, recoveries)


def _backends_terminated(admin: psycopg.Connection, kept: list[int], *, busy_only: bool) -> tuple[int, int]:
    """From a connection of its own: end backends of the test database but the test's, as a
    database restart or failover would (busy_only: those in the middle of a query or a
    transaction, the writes in flight), each waited for. Returns (ended, ended while busy)."""
    return admin.execute(
        "SELECT count(pg_terminate_backend(pid, 5000)), count(*) FILTER (WHERE state <> 'idle') "
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND pid <> ALL(%s) AND backend_type = 'client backend' AND (state <> 'idle' OR NOT %s)",
        [kept, busy_only],
    ).fetchone()


def test_database_connections_dropped_mid_stream_without_a_server_restart(puzzles_of, annotator):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL backends to terminate")
    attempts, sessions, answer = _attempts(puzzles_of, annotator)
    with connection.cursor() as cursor:  # the test's own connection stays
        cursor.execute("SELECT pg_backend_pid()")
        kept = [cursor.fetchone()[0]]
    db = connection.settings_dict
    dsn = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "user": db["USER"], "dbname": db["NAME"]}
    if db["PASSWORD"]:
        dsn["password"] = db["PASSWORD"]
    ended = [0, 0]
    row = report.row(f"database connections terminated ({DROP_S:g} s)")
    server = Daphne().start()
    try:

        def drop() -> None:
            """Every connection the server holds, at once; then for DROP_S every one caught busy."""
            with psycopg.connect(**dsn, autocommit=True) as admin:
                deadline, busy_only = time.monotonic() + DROP_S, False
                while time.monotonic() < deadline:
                    for i, n in enumerate(_backends_terminated(admin, kept, busy_only=busy_only)):
                        ended[i] += n
                    busy_only = True
                    time.sleep(0.002)

        async def fault():
            await asyncio.to_thread(drop)

        generated, recoveries = asyncio.run(_stream_through(fault, server.url, attempts, sessions, answer))
    finally:
        server.stop()
    row.note = f"{ended[0]} server connections ended, {ended[1]} of them in the middle of a query or transaction"
    assert ended[1] >= 1  # writes in flight met a dropped connection
    _count(row, attempts, generated, recoveries)


def test_a_long_database_outage_leaves_a_backlog_that_drains(puzzles_of, annotator):
    """For 20 s the test database takes no connection and every one the server holds is ended
    (ALLOW_CONNECTIONS false: as a database down, for this database only). 4 pages pile up about
    200 batches each, then catch up: nothing lost, every answer scored."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL")
    outage_s, count = 20.0, 4
    attempts, sessions, answer = _attempts(puzzles_of, annotator, count=count)
    with connection.cursor() as cursor:  # the test's own connection stays
        cursor.execute("SELECT pg_backend_pid()")
        kept = [cursor.fetchone()[0]]
    db = connection.settings_dict
    dsn = {"host": db["HOST"] or "127.0.0.1", "port": db["PORT"] or 5432, "user": db["USER"], "dbname": "postgres"}
    if db["PASSWORD"]:
        dsn["password"] = db["PASSWORD"]
    name = psycopg.sql.Identifier(db["NAME"])
    row = report.row(f"database down ({outage_s:g} s), {count} pages", "the wait includes the outage itself")
    server = Daphne().start()
    try:

        def outage() -> None:
            with psycopg.connect(**dsn, autocommit=True) as admin:
                admin.execute(psycopg.sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(name))
                try:
                    deadline = time.monotonic() + outage_s
                    while time.monotonic() < deadline:
                        admin.execute(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                            "AND pid <> ALL(%s) AND backend_type = 'client backend'",
                            [db["NAME"], kept],
                        )
                        time.sleep(0.2)
                finally:
                    admin.execute(psycopg.sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS true").format(name))

        async def fault():
            await asyncio.to_thread(outage)

        generated, recoveries = asyncio.run(_stream_through(fault, server.url, attempts, sessions, answer))
    finally:
        server.stop()
    _count(row, attempts, generated, recoveries)


def _through_a_black_hole(
    attempts, sessions, answer, *, hole_s: float, sit_out: bool
) -> tuple[list[int], list[float], list[int]]:
    """The pages stream through a proxy to one web process; the fault: every connection through it
    goes dead but stays open, and new ones too for hole_s (the fault lasts that long when sit_out).
    Returns events generated and recovery s per page, and how many sockets the hole caught."""
    carried: list[int] = []
    with web_processes(1) as [server]:

        async def scenario():
            proxy = await Proxy([(server.host, server.port)]).start()

            async def fault():
                carried.append(proxy.black_hole(new_for_s=hole_s))
                if sit_out:
                    await asyncio.sleep(hole_s)

            try:
                return await _stream_through(fault, proxy.url, attempts, sessions, answer)
            finally:
                await proxy.close()

        generated, recoveries = asyncio.run(scenario())
    return generated, recoveries, carried


def test_a_black_holing_proxy_between_the_page_and_daphne(puzzles_of, annotator):
    """Every connection through the proxy goes dead but stays open (nothing passes, nothing
    closes), and new ones too for HOLE_S; the page must notice and come back on its own."""
    hole_s = 6.0
    attempts, sessions, answer = _attempts(puzzles_of, annotator)
    row = report.row(f"black-holing proxy ({hole_s:g} s for new connections)")
    generated, recoveries, carried = _through_a_black_hole(attempts, sessions, answer, hole_s=hole_s, sit_out=False)
    assert carried == [PAGES]  # every page's socket went through the proxy, and went dead
    _count(row, attempts, generated, recoveries)


def test_a_long_black_hole_leaves_a_backlog_that_drains(puzzles_of, annotator):
    """30 s of a black hole at 60 events/s: each of 4 pages piles up about 300 unacknowledged
    batches, more than a server's inbox took at once before pages kept a window. They drain once
    the proxy passes again, with nothing lost and every answer scored."""
    hole_s, count = 30.0, 4
    attempts, sessions, answer = _attempts(puzzles_of, annotator, count=count)
    row = report.row(f"long black hole ({hole_s:g} s), {count} pages", "the wait includes the hole itself")
    generated, recoveries, carried = _through_a_black_hole(attempts, sessions, answer, hole_s=hole_s, sit_out=True)
    assert carried == [count]
    _count(row, attempts, generated, recoveries)


def test_one_of_two_web_processes_killed_behind_the_proxy(puzzles_of, annotator):
    """Scale-out without sticky sessions: the proxy spreads pages over two processes; the one
    holding the most sockets is killed for good, and its pages carry on through the other."""
    attempts, sessions, answer = _attempts(puzzles_of, annotator, count=3)
    row = report.row("1 of 2 web processes killed (-9), not restarted")
    killed: list[int] = []
    with web_processes(2) as servers:

        async def scenario():
            proxy = await Proxy([(s.host, s.port) for s in servers]).start()

            async def fault():
                victim = max(range(len(servers)), key=proxy.sockets_on)
                killed.append(proxy.sockets_on(victim))
                servers[victim].kill()

            try:
                return await _stream_through(fault, proxy.url, attempts, sessions, answer)
            finally:
                await proxy.close()

        generated, recoveries = asyncio.run(scenario())
    row.note = f"{killed[0]} of {len(attempts)} sockets were on the killed process"
    assert killed[0] >= 1
    _count(row, attempts, generated, recoveries)


def test_a_gap_that_is_never_filled_is_scored_after_the_wait(puzzles_of, annotator):
    """The test's own client numbers its events and never sends batch 2: the submit behind it is
    scored after GAP_WAIT_S (the real wait) with what came, and the attempt names the gap."""
    import websockets

    (attempt,), (session,), _ = _attempts(puzzles_of, annotator, count=1)
    point = attempt.puzzle.truth["point"]
    row = report.row(f"gap never filled (batch 2 never sent; GAP_WAIT_S {GAP_WAIT_S:g} s)")

    def numbered(first: int, count: int, t: float) -> list[dict]:
        return [{"k": "keydown", "t": t + i, "key": f"gen{first + i}", "code": "Generated"} for i in range(count)]

    async def client(base: str) -> float:
        url = base.replace("http", "ws") + f"/ws/attempts/{attempt.uid}/"
        headers = {"Cookie": f"sessionid={session}", "Origin": base}
        async with websockets.connect(url, additional_headers=headers) as socket:
            now = time.time() * 1000
            load = {"k": "load", "t": now, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
            await socket.send(json.dumps({"type": "batch", "seq": 1, "events": [load, *numbered(0, 30, now)]}))
            assert json.loads(await socket.recv()) == {"type": "ack", "seq": 1}
            answer = [
                {"k": "act.click", "t": now + 100, "x": point[0], "y": point[1]},
                {"k": "act.submit", "t": now + 101},
            ]
            events = [*numbered(30, 30, now + 50), *answer]
            submitted = time.monotonic()
            await socket.send(json.dumps({"type": "batch", "seq": 3, "events": events}))
            while (frame := json.loads(await asyncio.wait_for(socket.recv(), GAP_WAIT_S + 30)))["type"] != "submitted":
                assert frame == {"type": "ack", "seq": 1}  # batch 2 is still missing
            return time.monotonic() - submitted

    with web_processes(1) as [server]:
        waited = asyncio.run(client(server.url))
    attempt.refresh_from_db()
    counted = tally(attempt, 60)
    row.add(counted, scored=attempt.submitted_at is not None, recovery_s=waited)
    row.note = "recovery: from the submit to its verdict (the wait for the missing batch)"
    assert (counted["lost"], counted["duplicated"], counted["strangers"]) == (0, 0, [])
    assert attempt.submitted_at is not None and attempt.missing_batches == [2]
