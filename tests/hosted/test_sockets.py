"""The recorder's socket on an attempt's own host, and the site's defences around the hosted domain
(docs/hosted.md, "The recorder"), through the full ASGI application.

- a socket on an attempt's host opens only from that very host (Origin = Host) and stores for the
  attempt the host names: no session, no other uid, no forged host;
- the site's own sockets never take a hosted page's origin;
- CSRF_TRUSTED_ORIGINS reaching the hosted domain is refused at start; the attempt's page may be
  framed by the site's own hosts only.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured

from annotation.attempt_hosts import attempt_host, covers_hosted_domain
from annotation.hosted.proxy import Request, frame_ancestors
from annotation.live.attempts import attempt_start, participant_for_user
from annotation.models import Attempt
from arena_site.asgi import application, refuse_trusting_the_hosted_domain
from puzzles.models import Puzzle
from tests.hosted.conftest import BENCHMARK

pytestmark = pytest.mark.django_db(transaction=True)
PORT = ":8000"


@pytest.fixture
def attempt(benchmark) -> Attempt:
    user = get_user_model().objects.create_user(username="pat", password="pw")
    puzzle = Puzzle.objects.filter(type=f"{BENCHMARK}:Dice_Roll_Path").order_by("index").first()
    return attempt_start(participant=participant_for_user(user=user), puzzle=puzzle)


def talk(path_uid: str, host: str, origin: str) -> list[dict[str, Any]] | None:
    """Open a socket as a page on `origin` would, send one batch: the frames back, or None when refused."""

    async def go() -> list[dict[str, Any]] | None:
        socket = WebsocketCommunicator(
            application, f"/ws/attempts/{path_uid}/", headers=[(b"host", host.encode()), (b"origin", origin.encode())]
        )
        opened, _ = await socket.connect()
        if not opened:
            return None
        batch = {"type": "batch", "seq": 1, "events": [{"k": "beat", "t": time.time() * 1000}]}
        await socket.send_to(text_data=json.dumps(batch))
        frames = [await socket.receive_json_from(timeout=20)]
        await socket.disconnect()
        return frames

    return asyncio.run(go())


def test_the_recorders_socket_opens_from_its_own_host_and_stores_for_that_attempt(attempt, settings):
    settings.ALLOWED_HOSTS = ["arena.example"]  # the hosted domain is not in it, and need not be
    host = attempt_host(attempt.uid) + PORT
    assert talk(attempt.uid, host, f"http://{host}") == [{"type": "ack", "seq": 1}]
    assert attempt.events.count() == 1  # stored for the attempt the host names, with no session


def test_the_recorders_socket_is_refused_from_elsewhere_or_for_another_attempt(attempt, settings):
    settings.ALLOWED_HOSTS = ["arena.example"]
    host = attempt_host(attempt.uid) + PORT
    other = attempt_start(participant=attempt.participant, puzzle=attempt.puzzle)
    assert talk(attempt.uid, host, "http://arena.example:8000") is None  # the site's page: not its origin
    assert talk(attempt.uid, host, f"http://{attempt_host(other.uid)}{PORT}") is None  # a sibling host
    forged = f"a-{attempt.uid}-{'0' * 20}.{settings.ARENA_HOSTED_DOMAIN}{PORT}"
    assert talk(attempt.uid, forged, f"http://{forged}") is None  # a host without its MAC
    said = talk(other.uid, host, f"http://{host}")  # another attempt's uid in the path
    assert said is not None and said[0]["code"] == "not_allowed"
    assert attempt.events.count() == other.events.count() == 0


def test_the_sites_own_socket_never_takes_a_hosted_pages_origin(attempt, settings):
    settings.ALLOWED_HOSTS = ["arena.example"]
    page = f"http://{attempt_host(attempt.uid)}{PORT}"
    assert talk(attempt.uid, "arena.example:8000", page) is None


def test_trusting_the_hosted_domain_is_refused_at_start(settings):
    settings.ARENA_HOSTED_DOMAIN = "pages.example.net"
    for entry in ("https://*.example.net", "https://a-1.pages.example.net", "https://*.pages.example.net"):
        settings.CSRF_TRUSTED_ORIGINS = [entry]
        with pytest.raises(ImproperlyConfigured, match="reaches the hosted domain"):
            refuse_trusting_the_hosted_domain()
    settings.CSRF_TRUSTED_ORIGINS = ["https://studies.example.org", "https://pages.example.net.evil.org"]
    refuse_trusting_the_hosted_domain()
    assert not covers_hosted_domain("arena.example.org") and covers_hosted_domain(".example.net")


def test_the_attempts_page_may_be_framed_by_the_sites_own_hosts_only(settings):
    settings.ARENA_HOSTED_DOMAIN = "pages.example.net"
    settings.ALLOWED_HOSTS = ["arena.example.org", ".studies.example.org", "*", ".pages.example.net"]
    request = Request("GET", "/", "", {"host": "a-x.pages.example.net"}, scheme="https")
    directive = next(d for d in frame_ancestors(request).split("; ") if d.startswith("frame-ancestors"))
    assert directive == "frame-ancestors 'self' https://arena.example.org https://*.studies.example.org"


def test_the_play_page_may_frame_attempt_hosts_and_nothing_else(settings):
    from django.test import RequestFactory

    from arena_site.middleware import content_security_policy

    settings.ARENA_HOSTED_DOMAIN = "pages.example.net"
    settings.ALLOWED_HOSTS = ["arena.example.org"]
    request = RequestFactory().get("/", secure=True, HTTP_HOST="arena.example.org:8443")
    directives = content_security_policy(request).split("; ")
    assert "frame-src https://*.pages.example.net:8443" in directives
    assert "frame-ancestors 'none'" in directives  # our own pages are never framed


def test_behind_the_tls_proxy_the_framing_site_is_https(settings):
    settings.ARENA_HOSTED_DOMAIN = "pages.example.net"
    settings.ALLOWED_HOSTS = ["arena.example.org"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    headers = {"host": "a-x.pages.example.net", "x-forwarded-proto": "https"}
    policy = frame_ancestors(Request("GET", "/", "", headers, scheme="http"))  # daphne behind it sees http
    assert "frame-ancestors 'self' https://arena.example.org" in policy


def test_the_recorders_fallback_on_its_own_host_goes_through_intakes_entry(attempt):
    from annotation.hosted.proxy import answer
    from annotation.hosted.verdicts import pin_of

    pin = pin_of(attempt.uid)
    assert pin is not None
    batches = [{"type": "batch", "seq": n, "events": [{"k": "beat", "t": time.time() * 1000}]} for n in (1, 2)]
    said = answer(pin, Request("POST", "/__arena/events", "", {}, json.dumps(batches).encode()))
    assert (said.status, json.loads(said.body)) == (200, [{"type": "ack", "seq": 1}, {"type": "ack", "seq": 2}])
    beacon = {"type": "batch", "seq": 3, "events": [{"k": "beat", "t": time.time() * 1000}]}
    said = answer(pin, Request("POST", "/__arena/events", "csrf=", {}, json.dumps(beacon).encode()))
    assert json.loads(said.body) == [{"type": "ack", "seq": 3}]
    assert attempt.events.count() == 3
    assert answer(pin, Request("GET", "/__arena/events", "", {})).status == 405


def test_the_recorder_is_inline_in_the_pages_head_before_the_peers_scripts(attempt):
    from annotation.hosted.proxy import RECORDER_DATA_ID, answer
    from annotation.hosted.verdicts import pin_of

    pin = pin_of(attempt.uid)
    assert pin is not None
    page = answer(pin, Request("GET", "/", pin.page.partition("?")[2], {})).body.decode()
    head = page[page.index("<head>") : page.index("</head>")]
    ours, peers = head.index(f'id="{RECORDER_DATA_ID}"'), head.index("<script src=")
    assert ours < head.index("function toStage") < head.index("class Transport") < peers
    # events.js and stage.js inside, each in its own scope; nothing a classic script cannot run
    assert not any(line.startswith(("import ", "export ")) for line in head.splitlines())
    assert answer(pin, Request("GET", "/__arena/static/x/recorder.js", "", {})).status == 404  # no file of ours
