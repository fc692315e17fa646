"""The staff dashboard through a PostgreSQL outage (issue 39): while the database is down the page
and its JSON answer 503 "database unavailable" (they hung for the pool's 10 s and answered 500),
an open dashboard socket says so (it said nothing), and once the database is back the socket sends
the summary again and the page answers as before, with nobody restarting anything.

A web process as deployed (daphne) on a private PostgreSQL that the test stops and starts again
(tests/private_servers.py). Times are measured into the fault table (recovery: the database's
start to the socket's next summary; the note: how long each answer took during the outage),
never asserted; bench/restarts.py prints them.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from annotation.agents.server import ROOT
from arena_site.errors import UNAVAILABLE_CODE
from tests.faults import report
from tests.faults.harness import Daphne
from tests.private_servers import private_postgres, process_environment

pytestmark = pytest.mark.restart

BACK_WITHIN_S = 120  # a generous ceiling for "back", so a broken recovery fails instead of hanging
SIGN_IN = """
from django.contrib.auth import get_user_model
from django.test import Client
client = Client()
client.force_login(get_user_model().objects.create_user("boss", is_staff=True))
print(client.cookies["sessionid"].value)
"""


def staff_session(env: dict[str, str]) -> str:
    """A signed-in staff member's session cookie, made in the database the environment names."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SIGN_IN], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def get(url: str, session: str, *, accept: str = "text/html") -> tuple[int, str, float]:
    """The status, the body and the seconds the answer took."""
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={session}", "Accept": accept})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, body = response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read().decode()
    return status, body, time.monotonic() - started


async def next_frame(socket, kind: str) -> dict:
    """The socket's next frame of type `kind`, the ones before it skipped."""
    while (frame := json.loads(await asyncio.wait_for(socket.recv(), BACK_WITHIN_S)))["type"] != kind:
        pass
    return frame


def test_the_dashboard_says_the_database_is_unavailable_and_comes_back_by_itself():
    import websockets

    with private_postgres() as pg:
        env = process_environment(pg.url)
        session = staff_session(env)
        server = Daphne()
        server.env = {**server.env, **env}
        server.start()
        try:
            outcome = asyncio.run(_through_an_outage(websockets, pg, server.url, session))
        finally:
            server.stop()
    during = outcome["during"]
    took = f"page {during['page'][2]:.2f} s, JSON {during['json'][2]:.2f} s, frame {during['frame_s']:.2f} s"
    row = report.row(
        "web process x PostgreSQL stopped: the staff dashboard",
        f"recovery: the database's start to the socket's summary; during the outage 503 in {took} after the stop",
    )
    row.add({"generated": 0, "stored": 0, "lost": 0, "duplicated": 0}, scored=True, recovery_s=outcome["back_s"])

    assert during["page"][0] == 503 and "The database is unavailable" in during["page"][1]
    assert during["json"][0] == 503 and json.loads(during["json"][1])["code"] == UNAVAILABLE_CODE
    assert during["frame"] == {"type": "error", "code": UNAVAILABLE_CODE, "message": during["frame"]["message"]}
    assert outcome["after"]["frame"]["type"] == "summary"  # the socket live again, not reopened
    assert outcome["after"]["page"][0] == 200 and 'id="dash-initial"' in outcome["after"]["page"][1]
    assert outcome["after"]["json"][0] == 200 and json.loads(outcome["after"]["json"][1])["type"] == "summary"


async def _through_an_outage(websockets, pg, base: str, session: str) -> dict:
    ws_url = base.replace("http://", "ws://") + "/ws/dashboard/"
    headers = {"Cookie": f"sessionid={session}", "Origin": base}
    page = f"{base}/dashboard/"
    summary = f"{base}/dashboard/summary.json"
    async with websockets.connect(ws_url, additional_headers=headers) as socket:
        await next_frame(socket, "summary")
        assert (await asyncio.to_thread(get, page, session))[0] == 200

        await asyncio.to_thread(pg.stop)
        stopped = time.monotonic()
        frame = await next_frame(socket, "error")
        during = {
            "frame": frame,
            "frame_s": time.monotonic() - stopped,
            "page": await asyncio.to_thread(get, page, session),
            "json": await asyncio.to_thread(get, summary, session, accept="application/json"),
        }

        await asyncio.to_thread(pg.start)
        started = time.monotonic()
        back = await next_frame(socket, "summary")
        back_s = time.monotonic() - started
    after = {
        "frame": back,
        "page": await asyncio.to_thread(get, page, session),
        "json": await asyncio.to_thread(get, summary, session, accept="application/json"),
    }
    return {"during": during, "after": after, "back_s": back_s}
