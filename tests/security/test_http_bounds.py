"""Bounds at the HTTP layer: request bodies (through the real ASGI application), control
characters in parameters, and staff sign-in throttling."""

import asyncio
import contextlib
import re
import select
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client

from annotation.agents.server import web_process
from annotation.live.frames import MAX_FRAME_BYTES
from annotation.models import Enrollment
from annotation.studies.setup import study_create
from tests.asgi_http import exchange, http_scope

CHUNK = 64 * 1024


class Exchange:
    """One HTTP request through the ASGI application, its body in chunks, with what was read and answered."""

    def __init__(self, *, path: str = "/accounts/login/", content_length: int | None, chunks: int | None):
        self.headers = [(b"host", b"testserver"), (b"content-type", b"application/x-www-form-urlencoded")]
        if content_length is not None:
            self.headers.append((b"content-length", str(content_length).encode()))
        self.path = path
        self.chunks = chunks  # None: the client sends forever
        self.read = 0
        self.sent: list[dict] = []  # what the application answered, once run

    async def receive(self):
        if self.chunks is not None and self.read >= self.chunks:
            await asyncio.sleep(3600)  # nothing more: the application waits for a disconnect
        self.read += 1
        more = self.chunks is None or self.read < self.chunks
        return {"type": "http.request", "body": b"a" * CHUNK, "more_body": more}

    def run(self) -> tuple[int, str]:
        start, body, self.sent = exchange(http_scope("POST", self.path, self.headers), self.receive)
        return start["status"], body.decode()


def test_the_default_limit_fits_the_largest_legitimate_body(settings):
    assert MAX_FRAME_BYTES <= settings.ARENA_MAX_BODY_BYTES <= 4 * 1024 * 1024


def test_a_declared_oversized_body_is_refused_before_any_of_it_is_read(settings):
    settings.ARENA_MAX_BODY_BYTES = 4 * CHUNK
    exchange = Exchange(content_length=64 * 1024 * 1024, chunks=None)
    status, text = exchange.run()
    assert status == 413 and exchange.read == 0
    assert "Request body too large: this site accepts at most 256 KiB (262144 bytes)" in text


@pytest.mark.parametrize("declared", [None, 100], ids=["chunked", "understated"])
def test_a_streamed_body_is_cut_off_as_soon_as_it_passes_the_limit(settings, declared):
    settings.ARENA_MAX_BODY_BYTES = 4 * CHUNK
    exchange = Exchange(content_length=declared, chunks=64 * 1024 * 1024 // CHUNK)  # 64 MiB
    status, text = exchange.run()
    assert status == 413 and "Request body too large" in text
    assert exchange.read == 5  # the chunk that passed the limit was the last one read
    assert [m["type"] for m in exchange.sent] == ["http.response.start", "http.response.body"]  # ours alone


def test_a_body_within_the_limit_reaches_the_site(settings):
    settings.ARENA_MAX_BODY_BYTES = 4 * CHUNK
    exchange = Exchange(content_length=4 * CHUNK, chunks=4)
    status, _ = exchange.run()
    assert status == 403 and exchange.read == 4  # read whole; refused by the site itself (no CSRF token)


# --- through a real daphne, as deployed --------------------------------------------------------
BIG = 64 * 1024 * 1024  # an attacker's body; the limit is 1 MiB (the default, as deployed)


@pytest.fixture
def daphne_server(db, monkeypatch):
    """A web process as deployed (annotation/agents/server.py's command): (its port, its process id)."""
    monkeypatch.delenv("ARENA_MAX_BODY_BYTES", raising=False)  # the deployed default, 1 MiB
    with web_process() as (url, process):
        yield urlsplit(url).port, process.pid


def _peak_memory_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status)[1])


def _post(port: int, *, declared: int | None, size: int) -> tuple[int, bytes]:
    """POSTs size bytes in 64 KiB chunks (chunked transfer when declared is None), stopping as soon
    as the server answers, as curl does; returns the body bytes sent and the answer."""
    framing = f"Content-Length: {declared}" if declared is not None else "Transfer-Encoding: chunked"
    # Connection: close, so the answer ends with the connection (not after daphne's keep-alive wait).
    head = f"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{framing}\r\n\r\n".encode()
    chunk = b"a" * CHUNK if declared is not None else b"%x\r\n%s\r\n" % (CHUNK, b"a" * CHUNK)
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=120) as client:
        client.sendall(head)
        while sent < size and not select.select([client], [], [], 0)[0]:
            try:
                client.sendall(chunk)
            except OSError:  # cut off: the answer is already waiting
                break
            sent += CHUNK
        if sent >= size and declared is None:
            client.sendall(b"0\r\n\r\n")  # the end of a chunked body
        return sent, _answer(client)


def _answer(client: socket.socket) -> bytes:
    received = b""
    with contextlib.suppress(OSError):
        while data := client.recv(65536):
            received += data
            if b"\r\n\r\n" in received and b"Request body too large" in received:
                break
    return received


@pytest.mark.parametrize("declared", [BIG, None], ids=["declared", "chunked"])
def test_daphne_stops_reading_an_oversized_body_and_holds_none_of_it(daphne_server, declared):
    """daphne on its own takes the whole body (into a temporary file, then all of it into memory
    for the application) before anything of ours runs: the client sent all 64 MiB and the server's
    peak memory grew by about as much. Refused while it arrives, the sender is answered and stopped."""
    port, pid = daphne_server
    peak_before = _peak_memory_kib(pid)
    sent, answer = _post(port, declared=declared, size=BIG)
    assert answer.startswith(b"HTTP/1.1 413") and b"at most 1 MiB (1048576 bytes)" in answer
    assert sent < BIG // 2  # the client was answered and stopped long before the end
    assert _peak_memory_kib(pid) - peak_before < 16 * 1024  # KiB: nothing like the body was held


def test_daphne_passes_a_body_within_the_limit_to_the_site(daphne_server):
    port, _ = daphne_server
    sent, answer = _post(port, declared=512 * 1024, size=512 * 1024)
    assert sent == 512 * 1024 and answer.startswith(b"HTTP/1.1 403")  # the site's own CSRF refusal


# --- invite pages -------------------------------------------------------------------------------
def test_anonymous_visits_of_an_invite_page_write_no_session_and_the_start_button_still_joins(study):
    """Invite links are public: every anonymous GET used to store a session row (the crowd ids,
    empty or not), so anyone could fill the session table by reloading. The session starts at
    the consent POST, which carries the CSRF token from the page (cookie, not session) and the
    crowd ids in the link it posts back to."""
    link = f"/s/{study.token}/?PROLIFIC_PID=p42&STUDY_ID=s1"
    for _ in range(20):
        page = Client().get(link)
        assert page.status_code == 200 and "I agree, start" in page.content.decode()
        Client().get(f"/s/{study.token}/")
    assert Session.objects.count() == 0
    browser = Client(enforce_csrf_checks=True)
    page = browser.get(link).content.decode()
    assert browser.post(link).status_code == 403  # no token, no join
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    started = browser.post(link, {"csrfmiddlewaretoken": token})
    assert started.status_code == 302 and Session.objects.count() == 1
    assert Enrollment.objects.get(study=study).external_ids == {"PROLIFIC_PID": "p42", "STUDY_ID": "s1"}


# --- control characters -------------------------------------------------------------------------
@pytest.fixture
def study(verified):
    verified(types=("Dice_Count",), per_type=1)
    return study_create(name="bounds", split="test", puzzles_per_annotator=1)


@pytest.mark.parametrize(
    ("query", "name"),
    [("STUDY_ID=a%00b", "STUDY_ID"), ("SESSION_ID=%1b%5b2J", "SESSION_ID"), ("x%00y=1", "x\\x00y")],
)
def test_a_control_character_in_a_query_parameter_is_a_clear_400(study, query, name):
    page = Client().get(f"/s/{study.token}/?{query}")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/plain")
    assert f"Bad request: the parameter {name} must be printable text" in page.content.decode()


def test_the_review_search_and_the_address_too(client, db):
    page = client.get("/review/?q=%00")
    assert page.status_code == 400 and "the parameter q must be printable text" in page.content.decode()
    page = client.get("/s/ab%00cd/")
    assert page.status_code == 400 and "the address must be printable text" in page.content.decode()


def test_a_control_character_in_a_form_field_is_a_clear_400(db):
    page = Client().post("/accounts/login/", {"username": "boss\x00", "password": "x"})
    assert page.status_code == 400 and "the form field username must be printable text" in page.content.decode()
    # A textarea's own line breaks and tabs are text.
    page = Client().post("/accounts/login/", {"username": "boss\r\n\tx", "password": "x"})
    assert page.status_code == 200


def test_json_bodies_are_left_to_their_own_validation(db):
    page = Client().post("/attempts/nope/events/", '{"note": "a\\u0000b\x00"}', content_type="application/json")
    assert "must be printable text" not in page.content.decode()


# --- sign-in throttling ------------------------------------------------------------------------
PASSWORD = "a long pass phrase"


@pytest.fixture
def boss(db):
    return get_user_model().objects.create_superuser(username="boss", password=PASSWORD)


def sign_in(address: str, password: str, *, ip: str = "10.0.0.1", **headers) -> tuple[int, Client]:
    browser = Client(REMOTE_ADDR=ip, **headers)
    page = browser.post(address, {"username": "boss", "password": password})
    return page.status_code, browser


def signed_in(browser: Client) -> bool:
    return "_auth_user_id" in browser.session


@pytest.mark.parametrize("address", ["/accounts/login/", "/admin/login/"])
def test_five_failures_lock_the_name_from_that_address_even_with_the_right_password(boss, address):
    assert [sign_in(address, "wrong")[0] for _ in range(4)] == [200] * 4
    status, _ = sign_in(address, "wrong")
    assert status == 429
    status, browser = sign_in(address, PASSWORD)
    assert status == 429 and not signed_in(browser)
    assert "Signing in is paused" in browser.post(address, {"username": "boss", "password": PASSWORD}).content.decode()
    # Another address is not locked out with it (the name and the address together).
    status, browser = sign_in(address, PASSWORD, ip="10.0.0.2")
    assert status == 302 and signed_in(browser)


def test_the_admin_and_the_sign_in_page_count_together(boss):
    for address in ["/admin/login/", "/accounts/login/"] * 2:
        assert sign_in(address, "wrong")[0] == 200
    assert sign_in("/admin/login/", "wrong")[0] == 429
    assert sign_in("/accounts/login/", PASSWORD)[0] == 429


def test_a_success_clears_the_count(boss):
    for _ in range(4):
        sign_in("/accounts/login/", "wrong")
    status, browser = sign_in("/accounts/login/", PASSWORD)
    assert status == 302 and signed_in(browser)
    assert [sign_in("/accounts/login/", "wrong")[0] for _ in range(4)] == [200] * 4


def test_behind_the_proxy_failures_count_per_client_not_per_proxy(boss, settings):
    """Every request comes from nginx's address; the client is ARENA_PROXY_HOPS back in X-Forwarded-For.
    Otherwise one person's failures would lock the name for everybody."""
    settings.ARENA_PROXY_HOPS = 1
    for _ in range(5):
        sign_in("/accounts/login/", "wrong", ip="172.18.0.5", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert sign_in("/accounts/login/", PASSWORD, ip="172.18.0.5", HTTP_X_FORWARDED_FOR="203.0.113.7")[0] == 429
    status, browser = sign_in("/accounts/login/", PASSWORD, ip="172.18.0.5", HTTP_X_FORWARDED_FOR="198.51.100.9")
    assert status == 302 and signed_in(browser)
