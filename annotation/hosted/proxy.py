"""The reverse proxy: a peer's own page, served to a person at the attempt's own host (annotation/attempt_hosts.py).

Every request to a-<key>.<ARENA_HOSTED_DOMAIN> comes here (arena_site/asgi.py routes by host,
before Django) and is decided by `answer`, one branch per kind of request:

- a truth or debug route, a truth file, a debug switch: 403, never forwarded (truth.refused);
- `/`: the peer's page for the attempt's puzzle (another address is redirected to it), its pinned
  CDN URLs pointing at local copies (assets.py); `page_html` is where our recorder will be added;
- the fetch route (get_puzzle, get_puzzle_by_id, mode=sequential, whatever the page asks): the
  attempt's puzzle only, from the stored payload (a peer without addresses) or forwarded with its
  stored address, live, when the page asks (the peer's clock starts with the person's);
- check_answer: forwarded once per attempt (verdicts.forward_check), the page's own puzzle id and
  elapsed_time replaced by the pinned id and 0; the final reply says so in `x-arena-submitted` (the
  recorder's cue to send its submit) and, where the attempt hides verdicts, tells the page only that
  its answer was received;
- `/__arena/asset/<sha256>`: a pinned local copy;
- `/__arena/events` (POST): the recorder's HTTP fallback and beacon (live intake's one entry);
- any other GET (scripts, styles, media): forwarded as it is; any other method: 405.

The page at `/` gets our event recorder (static/arena/recorder.js) first in its <head>, with its
data (live/page.py, RecorderData), inline as one classic script that runs before the peer's
(bundle.py).
Its socket is a WebSocket to the same host, routed by AttemptHosts to the live consumer with the
attempt the host names.

Every JSON body the page receives passes strip_truth. Each response carries a CSP allowing only the
attempt's own origin, so a load the proxy did not see fails on the page instead of leaving; it may
be framed only by the site's own hosts (the play page: our study bar above the peer's page).
"""

from __future__ import annotations

import functools
import http.client
import json
import mimetypes
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from channels.db import database_sync_to_async
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.utils.html import json_script

from annotation.attempt_hosts import covers_hosted_domain, is_attempt_host, uid_of_host
from annotation.hosted.assets import ASSET_PATH, pins, read_copy, rewrite_page
from annotation.hosted.bundle import recorder_bundle
from annotation.hosted.client import MAX_BODY, TIMEOUT_S, PeerUnreachable, Reply
from annotation.hosted.dialects import Route
from annotation.hosted.truth import refused, strip_truth
from annotation.hosted.verdicts import ALREADY_ANSWERED, Pin, check_started, forward_check, pin_of
from annotation.live.attempts import attempt_serve
from annotation.live.intake import posted_receive
from annotation.live.page import RECORDER_EVENTS_PATH, recorder_data
from annotation.models import Attempt

PINS_KEPT = 4096  # attempts whose pin this process keeps in memory (a pin never changes)
CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; media-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "worker-src 'self' blob:; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'"
)
SECURITY_HEADERS = [
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
]
RECORDER_DATA_ID = "arena-recorder-data"
SUBMITTED_HEADER = "x-arena-submitted"  # on the final check reply: the recorder sends its submit
# What the page hears of its final check where the attempt hides verdicts: enough to move on.
RECEIVED = {"status": "submitted", "message": "Your answer was received."}
HEAD = re.compile(rb"<head(\s[^>]*)?>", re.IGNORECASE)
PASSED_HEADERS = frozenset({"content-type", "set-cookie", "last-modified", "etag"})
FORWARDED_REQUEST_HEADERS = ("content-type", "cookie", "accept", "if-none-match", "if-modified-since")
JSON_TYPE = "application/json"
NOT_FOUND = "no such attempt here"


@dataclass
class Request:
    method: str
    path: str
    query: str  # the raw query string
    headers: dict[str, str]
    body: bytes = b""
    raw_path: str = ""  # as the browser sent it, still percent-encoded: what is forwarded
    scheme: str = "http"

    @property
    def params(self) -> dict[str, str]:
        return dict(parse_qsl(self.query, keep_blank_values=True))

    @property
    def target(self) -> str:
        return self.path + (f"?{self.query}" if self.query else "")


@dataclass
class Response:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def json(cls, status: int, data: Any) -> Response:
        return cls(status, json.dumps(data).encode(), [("content-type", JSON_TYPE), ("cache-control", "no-store")])

    @classmethod
    def error(cls, status: int, message: str) -> Response:
        return cls.json(status, {"error": message})


class AttemptHosts:
    """ASGI: requests to an attempt's host go to the proxy, all others to the site (arena_site/asgi.py);
    `sockets`: the application of the recorder's socket on an attempt's host (annotation/routing.py)."""

    def __init__(self, site: Any, sockets: Any = None) -> None:
        self.site = site
        self.proxy = HostedProxy(sockets)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        host = next((value for name, value in scope.get("headers", ()) if name == b"host"), b"")
        app = self.proxy if is_attempt_host(host.decode("latin1")) else self.site
        await app(scope, receive, send)


class HostedProxy:
    """The ASGI application of the attempts' hosts."""

    def __init__(self, sockets: Any = None) -> None:
        self.pins: dict[str, Pin] = {}
        self.sockets = sockets

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            await self._socket(scope, receive, send)
            return
        request = await _request(scope, receive)
        request.scheme = scope.get("scheme", "http")
        pin = await self._pin(request.headers.get("host", ""))
        if pin is None:
            response = Response.error(404, NOT_FOUND)
        else:
            response = await database_sync_to_async(answer, thread_sensitive=False)(pin, request)
        await _send(send, response, frame_ancestors(request))

    async def _socket(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The recorder's socket: to the live consumer with the attempt its host names (the MAC
        checked here), or refused."""
        host = next((value for name, value in scope.get("headers", ()) if name == b"host"), b"")
        uid = uid_of_host(host.decode("latin1"))
        if uid is None or self.sockets is None:
            await WebsocketDenier()(scope, receive, send)
            return
        await self.sockets({**scope, "hosted_uid": uid}, receive, send)

    async def _pin(self, host: str) -> Pin | None:
        uid = uid_of_host(host)
        if uid is None:
            return None
        if uid not in self.pins:
            pin = await database_sync_to_async(pin_of, thread_sensitive=False)(uid)
            if pin is None:
                return None
            if len(self.pins) >= PINS_KEPT:
                self.pins.pop(next(iter(self.pins)))
            self.pins[uid] = pin
        return self.pins[uid]


def answer(pin: Pin, request: Request) -> Response:
    """The response for one request of the attempt's page (the module docstring lists the branches)."""
    why = refused(pin.dialect, request.path, request.params)
    if why:
        return Response.error(403, f"refused: {why}")
    if request.path == RECORDER_EVENTS_PATH:
        return _events(pin, request) if request.method == "POST" else Response.error(405, "events take a POST")
    if request.path.startswith(ASSET_PATH):
        return _asset(pin, request.path.removeprefix(ASSET_PATH))
    route = pin.dialect.route_of(request.path)
    if route is Route.CHECK:
        return _check(pin, request) if request.method == "POST" else Response.error(405, "check_answer takes a POST")
    if request.method not in ("GET", "HEAD"):
        return Response.error(405, f"{request.method} {request.path} is not forwarded")
    if request.path == "/":
        return _page(pin, request)
    if route is Route.FETCH:
        return _fetch(pin)
    return _passed(pin, _forward(pin, request))


def page_html(pin: Pin, html: str) -> str:
    """A page as the person's browser gets it: its pinned CDN URLs pointing at local copies."""
    return rewrite_page(html, pin.assets)


def with_recorder(pin: Pin, body: bytes) -> bytes:
    """The peer's page with our recorder first in its <head>, before the peer's scripts: its data
    (a load of its own: live/page.py, recorder_data) and the script, classic so that it runs (and
    listens, and sees the check's reply) before any of the peer's (bundle.py). Inline, not a file:
    each attempt is an origin of its own, so no browser cache would keep a file from one attempt
    to the next, and a file would cost every load a request before the peer's scripts. At `/` only."""
    attempt = Attempt.objects.select_related("puzzle", "study").get(pk=pin.attempt_id)
    attempt_serve(attempt=attempt)  # the page check opens the host alone: the time runs from here too
    data = json_script(recorder_data(attempt=attempt), RECORDER_DATA_ID)
    tags = f"{data}<script>".encode() + recorder_bundle() + b"</script>"
    found = HEAD.search(body)
    return body[: found.end()] + tags + body[found.end() :] if found else tags + body


def _page(pin: Pin, request: Request) -> Response:
    if request.target != pin.page:  # the page reads its address from its URL: give it the pinned one
        return Response(302, b"", [("location", pin.page), ("cache-control", "no-store")])
    response = _passed(pin, _forward(pin, request))
    if response.status == 200 and _kind(response).startswith("text/html"):
        response.body = with_recorder(pin, response.body)
        response.headers = [(name, value) for name, value in response.headers if name not in ("etag", "last-modified")]
        response.headers.append(("cache-control", "no-store"))  # each load is a load of its own
    return response


def _kind(response: Response) -> str:
    return next((value for name, value in response.headers if name == "content-type"), "")


def _events(pin: Pin, request: Request) -> Response:
    """The recorder's HTTP fallback and beacon: live intake's one entry, as live/views.py's events."""
    attempt = Attempt.objects.select_related("puzzle", "study").get(pk=pin.attempt_id)
    replies, held = posted_receive(attempt=attempt, raw=request.body, received_ms=time.time() * 1000)
    return Response.json(200 if held else 400, replies)


def _fetch(pin: Pin) -> Response:
    if pin.payload is not None:
        return Response.json(200, pin.payload)
    if pin.stateful and check_started(pin):  # a fresh fetch would reset the peer's state mid-answer
        return Response.error(409, ALREADY_ANSWERED)
    try:
        reply = pin.client().request("GET", pin.dialect.fetch_route, query=pin.dialect.fetch_query(pin.address))
    except PeerUnreachable:
        return Response.error(502, "The benchmark's server did not answer. Please try again.")
    said = reply.body.get("puzzle_id") if isinstance(reply.body, dict) else None
    if reply.error() is None and said != pin.puzzle_id:
        return Response.error(409, f"{pin.benchmark} now serves another puzzle at this address")
    return Response.json(reply.status, strip_truth(pin.dialect, reply.body))


def _check(pin: Pin, request: Request) -> Response:
    try:
        sent = json.loads(request.body or b"{}")
    except ValueError:
        return Response.error(400, "check_answer takes a JSON body")
    if not isinstance(sent, dict) or "answer" not in sent:
        return Response.error(400, "check_answer needs an answer")
    try:
        forwarded = forward_check(pin, sent["answer"])
    except PeerUnreachable:
        return Response.error(502, "The benchmark's server did not answer. Please submit again.")
    reply: Reply = forwarded.reply
    if not forwarded.final:
        return Response.json(reply.status, strip_truth(pin.dialect, reply.body))
    # The sequence ended: the page learns its verdict only where the attempt shows verdicts.
    response = Response.json(reply.status, strip_truth(pin.dialect, reply.body))
    if not forwarded.show_verdict:
        response = Response.json(200, RECEIVED)
    response.headers.append((SUBMITTED_HEADER, "1"))
    return response


def _asset(pin: Pin, sha256: str) -> Response:
    url = next((pinned.url for pinned in pins(pin.assets) if pinned.sha256 == sha256), None)
    data = read_copy(sha256) if url else None
    if url is None or data is None:
        return Response.error(404, f"no local copy of this pinned file (manage.py benchmarks assets {pin.benchmark})")
    kind = mimetypes.guess_type(urlsplit(url).path)[0] or "application/octet-stream"
    return Response(200, data, [("content-type", kind), ("cache-control", "public, max-age=31536000, immutable")])


def _forward(pin: Pin, request: Request) -> Response:
    """The request as the peer answers it (headers it needs only; never our cookies' names)."""
    parts = urlsplit(pin.base_url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.netloc, timeout=TIMEOUT_S)
    headers = {name: request.headers[name] for name in FORWARDED_REQUEST_HEADERS if name in request.headers}
    headers["accept-encoding"] = "identity"  # bodies are read (JSON stripped, HTML rewritten)
    try:
        target = (request.raw_path or request.path) + (f"?{request.query}" if request.query else "")
        connection.request(request.method, parts.path.rstrip("/") + target, request.body or None, headers)
        reply = connection.getresponse()
        body = reply.read(MAX_BODY)
        kept = [(name.lower(), value) for name, value in reply.getheaders() if name.lower() in PASSED_HEADERS]
        if reply.status in (301, 302, 303, 307, 308) and reply.getheader("location"):
            kept.append(("location", _own_location(pin, reply.getheader("location", ""))))
        return Response(reply.status, body, kept)
    except OSError:
        return Response.error(502, "The benchmark's server did not answer.")
    finally:
        connection.close()


def _own_location(pin: Pin, location: str) -> str:
    """A redirect the peer gives to its own address, kept on the attempt's host."""
    return location.removeprefix(pin.base_url) or "/"


def _passed(pin: Pin, response: Response) -> Response:
    """What the page may receive: JSON without truth, the page with its pinned assets local."""
    kind = _kind(response)
    if JSON_TYPE in kind or kind.endswith("+json"):
        try:
            data = json.loads(response.body)
        except ValueError:
            return Response.error(502, "the benchmark's server answered JSON that cannot be read")
        return Response.json(response.status, strip_truth(pin.dialect, data))
    if kind.startswith("text/html"):
        response.body = page_html(pin, response.body.decode("utf-8", "replace")).encode()
    return response


async def _request(scope: dict[str, Any], receive: Any) -> Request:
    headers = {name.decode("latin1").lower(): value.decode("latin1") for name, value in scope["headers"]}
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    query = scope.get("query_string", b"").decode("latin1")
    raw_path = scope.get("raw_path") or b""
    return Request(scope["method"], scope["path"], query, headers, b"".join(chunks), raw_path.decode("latin1"))


def frame_ancestors(request: Request) -> str:
    """Who may frame an attempt's page: the site's own hosts (ALLOWED_HOSTS; the play page shows our
    study bar above it), on the request's scheme and port, never a host under the hosted domain."""
    host = request.headers.get("host", "")
    port = host.rsplit(":", 1)[1] if ":" in host and not host.endswith("]") else ""
    return _ancestors(_scheme(request), port, tuple(settings.ALLOWED_HOSTS))


def _scheme(request: Request) -> str:
    """The scheme the browser used: the TLS proxy's word where SECURE_PROXY_SSL_HEADER trusts it
    (daphne behind it sees http), as Django and origins.py read it."""
    trusted = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if trusted:
        name = trusted[0].removeprefix("HTTP_").replace("_", "-").lower()
        if name in request.headers:
            return "https" if request.headers[name].split(",")[0].strip() == trusted[1] else "http"
    return "https" if request.scheme in ("https", "wss") else "http"


@functools.lru_cache(maxsize=64)
def _ancestors(scheme: str, port: str, hosts: tuple[str, ...]) -> str:
    suffix = f":{port}" if port else ""
    sources = ["'self'"]
    for host in hosts:
        if host == "*" or covers_hosted_domain(host):
            continue  # "*" would let any site frame the page; the hosted domain is the peers'
        sources.append(f"{scheme}://{'*' if host.startswith('.') else ''}{host}{suffix}")
    return CSP.replace("frame-ancestors 'self'", "frame-ancestors " + " ".join(sources))


async def _send(send: Any, response: Response, csp: str = CSP) -> None:
    headers = [(name.encode("latin1"), value.encode("latin1")) for name, value in response.headers]
    headers += [(b"content-security-policy", csp.encode()), *SECURITY_HEADERS]
    headers += [(b"content-length", str(len(response.body)).encode())]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body})
