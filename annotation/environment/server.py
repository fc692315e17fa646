"""The ASGI application `env serve` runs: OpenEnv's endpoints under each trainer's token.

    /<token>/ws       WebSocket: reset, step, state, close; one session (and episode) at a time each
    /<token>/health   GET  {"status": "healthy"} (also at /health, for a load balancer)
    /<token>/schema   GET  the action, observation and state JSON schemas
    /<token>/metadata GET  name and description
    /<token>/reset    POST a first observation, as OpenEnv's HTTP reset: stateless, the episode closed
    /<token>/step     POST the action checked; no episode lives over HTTP (409: use the WebSocket)
    /<token>/state    GET  the state of a fresh session, as OpenEnv's HTTP state

The published client sends no headers, so the token travels in the path. A WebSocket with an
unknown or revoked token is refused at the handshake (403). At most `max_sessions` sessions are
open at once: a connection past that is accepted, told CAPACITY_REACHED (OpenEnv's error) and
closed. A session that sends nothing for `idle_timeout_s` is told so and closed, its browser
context freed. All sessions share one Chromium, launched on the first.

`/health` answers 200 only when the database answers and the browser opens a page of the page
server (503 with the reasons otherwise), so a deployment's health check restarts a server that
cannot play. The server names itself on the rollouts it starts (a PlayerProcess) and says it is
alive every HEARTBEAT_S; on that beat it also fails the open rollouts of servers gone
(annotation/agents/players.py). The database is reached as database.py says, so the server
comes back by itself after a database restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS
from annotation.agents.players import HEARTBEAT_S, player_beat, rollouts_abandoned_fail
from annotation.environment.database import DatabaseUnavailable, database, database_ready
from annotation.environment.openapi import OPENAPI
from annotation.environment.protocol import (
    CAPACITY_REACHED,
    EXECUTION_ERROR,
    SCHEMAS,
    SESSION_ERROR,
    UNKNOWN_TYPE,
    BadRequest,
    action_call,
    error_data,
    frame,
    parse_frame,
)
from annotation.environment.sessions import Session
from annotation.environment.tokens import token_for, tokens_revoked
from annotation.models import EnvToken
from arena_env.models import VERSION

log = logging.getLogger(__name__)
# ASGI's two callables, its events as plain dicts (asgiref.typing's TypedDicts would want every key).
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
T = TypeVar("T")
HEALTHY = {"status": "healthy"}
README = (Path(__file__).resolve().parents[2] / "arena_env" / "README.md").read_text()
METADATA = {
    "name": "captcha_arena",
    "description": "CaptchaArena puzzles on the live page; reward: the server verifier's 0-1 score, verdict beside.",
    "version": VERSION,
    "readme_content": README,
    "author": "CaptchaArena human baseline",
    "documentation_url": "docs/environment.md",
}
# OpenEnv's JSON-RPC endpoint: no MCP tools are offered yet (the WebSocket plays), said as JSON-RPC.
MCP_NO_TOOLS = "this environment offers no MCP tools yet: play episodes over the WebSocket at /ws"
STATELESS = "HTTP reset is stateless, as OpenEnv's: an episode lives on a WebSocket at <base>/ws"
BODY_MAX = 1 << 20
LINGER_S = 30.0
IDLE_TIMEOUT_S = 300.0  # a session silent this long is closed (`env serve --idle-timeout`)
HEALTH_TIMEOUT_S = 3.0  # each check of /health; docker-compose.yml's health check waits 4 s in all
# A page opened this recently answers for the browser: opening one costs about 0.15 s of CPU, so
# a health check every 10 s (docker-compose.yml) opens one every third check, 0.5% of a core.
PAGE_CHECK_KEPT_S = 30.0
HEALTH_PAGE = "/accounts/login/"  # a page of the site that asks nothing of the database
REVOKED_CHECK_S = 1.0  # how often open sessions' tokens are read again: a revoked one's sockets close
PUBLIC = ("health", "metadata", "schema", "openapi.json", "mcp")  # answered without a key


class Open:
    """A WebSocket session of a token, as the server's revocation watch sees it."""

    def __init__(self, token_id: int) -> None:
        self.token_id = token_id
        self.revoked = asyncio.Event()


class EnvServer:
    def __init__(
        self, *, page_base: str, max_sessions: int, idle_timeout_s: float, player_id: int | None = None
    ) -> None:
        self.page_base, self.max_sessions, self.idle_timeout_s = page_base, max_sessions, idle_timeout_s
        self.player_id = player_id  # this process's PlayerProcess, when it holds its episodes' rollouts
        self.active = 0  # places taken: open sessions, and HTTP resets under way
        self.open: set[Open] = set()  # the WebSocket sessions, each with its token
        self.held: dict[int, int] = {}  # places taken per token: its cap is EnvToken.max_sessions
        self._watch: asyncio.Task[None] | None = None
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._launching = asyncio.Lock()
        self._page_check: asyncio.Task[None] | None = None
        self._page_checked_at = float("-inf")

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        key, endpoint = _route(scope)
        if scope["type"] == "websocket":
            await self._websocket(key, endpoint, receive, send)
        elif scope["type"] == "http":
            await self._http(scope["method"], key, endpoint, receive, send)

    async def browser(self) -> Browser:
        async with self._launching:
            if self._browser is None or not self._browser.is_connected():
                self._playwright = self._playwright or await async_playwright().start()
                self._browser = await self._playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            return self._browser

    async def close(self) -> None:
        """Stop the shared Chromium and its driver: run as the server shuts down, so a stopped
        server leaves no browser behind, and the page server it used has no page left to wait on."""
        async with self._launching:
            if self._browser is not None:
                with contextlib.suppress(Exception):  # already gone with a crashed browser
                    await self._browser.close()
            if self._playwright is not None:
                await self._playwright.stop()
            self._browser = self._playwright = None

    async def keep_alive(self) -> None:
        """Every HEARTBEAT_S until the server stops: this server heard from, the rollouts of
        servers gone failed. A beat the database misses is logged; the next one tries again."""
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                if self.player_id is not None:
                    await database(player_beat)(self.player_id)
                await database(rollouts_abandoned_fail)()
            except Exception as error:
                log.warning("environment heartbeat failed: %s: %s", type(error).__name__, error)

    async def health(self) -> list[str]:
        """What keeps this server from playing an episode now; [] when nothing does."""
        database_check, page_check = await asyncio.gather(
            asyncio.wait_for(database_ready(), HEALTH_TIMEOUT_S),
            asyncio.wait_for(asyncio.shield(self._page_opens()), HEALTH_TIMEOUT_S),
            return_exceptions=True,
        )
        problems = [("database", database_check), ("browser", page_check)]
        return [f"{part}: {_said(error)}" for part, error in problems if isinstance(error, BaseException)]

    async def _page_opens(self) -> None:
        """The shared Chromium opens a page of the page server. One check at a time, and one that
        passed within PAGE_CHECK_KEPT_S stands for a new one: a health check costs a page a few times
        a minute, however often it is asked."""
        if time.monotonic() - self._page_checked_at < PAGE_CHECK_KEPT_S:
            return
        if self._page_check is None or self._page_check.done():
            self._page_check = asyncio.ensure_future(self._open_a_page())
        await self._page_check
        self._page_checked_at = time.monotonic()

    async def _open_a_page(self) -> None:
        page = await (await self.browser()).new_page()  # a context of its own, closed with the page
        try:
            answer = await page.goto(f"{self.page_base}{HEALTH_PAGE}", wait_until="domcontentloaded")
            if answer is None or not answer.ok:
                raise RuntimeError(f"the page server answered {answer.status if answer else 'nothing'}")
        finally:
            await page.close()

    async def _token(self, key: str) -> EnvToken | None:
        """The token whose key this is; DatabaseUnavailable when it cannot be read now."""
        if not key:
            return None
        await database_ready()
        try:
            return await database(token_for)(key)
        except Exception as error:
            raise DatabaseUnavailable(f"the database is unavailable ({_said(error)})") from error

    def _take_place(self, token: EnvToken) -> dict[str, Any] | None:
        """A place for a session of this token; or the refusal, when the server or the token is full."""
        if self.active >= self.max_sessions:
            return self._capacity_error()
        held = self.held.get(token.pk, 0)
        if held >= token.max_sessions:
            return error_data(
                f"Token at capacity: {held}/{token.max_sessions} of its sessions are open on this server. Close one"
                " before opening another.",
                CAPACITY_REACHED,
                active_sessions=held,
                max_sessions=token.max_sessions,
            )
        self.active += 1
        self.held[token.pk] = held + 1
        return None

    def _give_place(self, token: EnvToken) -> None:
        self.active -= 1
        self.held[token.pk] -= 1
        if not self.held[token.pk]:
            del self.held[token.pk]

    async def watch_revocations(self) -> None:
        """Every REVOKED_CHECK_S while sessions are open: those whose token staff revoked are told
        and closed, their episodes kept as failed and their places freed, within seconds."""
        while self.open:
            await asyncio.sleep(REVOKED_CHECK_S)
            try:
                revoked = await database(tokens_revoked)(list({each.token_id for each in self.open}))
            except Exception as error:  # the database away: the next look tries again
                log.warning("environment revocation check failed: %s: %s", type(error).__name__, error)
                continue
            for each in self.open:
                if each.token_id in revoked:
                    each.revoked.set()

    def _watching(self, token: EnvToken) -> Open:
        each = Open(token.pk)
        self.open.add(each)
        if self._watch is None or self._watch.done():
            self._watch = asyncio.ensure_future(self.watch_revocations())
        return each

    def _capacity_error(self) -> dict[str, Any]:
        active = self.active
        return error_data(
            f"Server at capacity: {active}/{self.max_sessions} sessions active. Cannot accept new connections.",
            CAPACITY_REACHED,
            active_sessions=active,
            max_sessions=self.max_sessions,
        )

    # --- WebSocket ----------------------------------------------------------------------
    async def _websocket(self, key: str, endpoint: str, receive: Receive, send: Send) -> None:
        await receive()  # websocket.connect
        try:
            token = await self._token(key)
        except DatabaseUnavailable as error:  # said in the protocol's own frame, as a refusal
            await send({"type": "websocket.accept"})
            return await _refuse(error_data(f"{error}: try again", EXECUTION_ERROR), receive, send)
        if token is None or endpoint != "ws":
            await send({"type": "websocket.close", "code": 4403})  # before accept: a 403 handshake
            return
        await send({"type": "websocket.accept"})
        refusal = self._take_place(token)
        if refusal is not None:
            return await _refuse(refusal, receive, send)
        session, why, each = None, "the server failed", self._watching(token)
        try:
            session = self._session(token, await self.browser())
            why = await self._converse(session, each, receive, send)
        finally:
            self.open.discard(each)
            self._give_place(token)
            if session is not None:
                await session.close(why)

    def _session(self, token: EnvToken, browser: Browser) -> Session:
        return Session(token=token, browser=browser, page_base=self.page_base, player_id=self.player_id)

    async def _converse(self, session: Session, each: Open, receive: Receive, send: Send) -> str:
        """Answer the client's frames until it closes, goes away, falls idle (no reset or step for
        idle_timeout_s: a state frame does not count) or its token is revoked; returns which."""
        while True:
            idle_left = self.idle_timeout_s - (time.monotonic() - session.active_at)
            message = await _until(receive(), each.revoked, max(idle_left, 0.0))
            if each.revoked.is_set():
                return await _revoked(session, send)
            if message is None:
                idle = f"idle for {self.idle_timeout_s:g} s"
                await session.close(idle)  # its browser context freed now, not after the goodbye
                await _refuse(error_data(idle, SESSION_ERROR), receive, send)
                return idle
            if message["type"] != "websocket.receive":
                return "the client went away"  # websocket.disconnect
            answered = await _until(
                self._answer(session, message.get("text") or message.get("bytes") or ""), each.revoked
            )
            if each.revoked.is_set():  # an action under way is stopped
                return await _revoked(session, send)
            reply = answered[0] if answered is not None else None
            if reply is None:
                await send({"type": "websocket.close", "code": 1000})
                return "the client closed the session"
            await send({"type": "websocket.send", "text": reply})

    async def _answer(self, session: Session, text: str | bytes) -> tuple[str | None]:
        """The frame answering one client frame (None for close), in a tuple: a close is an answer."""
        return (await self._reply(session, text),)

    async def _reply(self, session: Session, text: str | bytes) -> str | None:
        kind: Any = None
        try:
            message = parse_frame(text)
            kind = message.get("type") if isinstance(message, dict) else None
            data = message.get("data", {}) if isinstance(message, dict) else None
            if kind == "reset":
                return frame("observation", await session.reset(data))
            if kind == "step":
                return frame("observation", await session.step(data))
            if kind == "state":
                return frame("state", session.state())
            if kind == "close":
                return None
            return frame("error", error_data(f"Unknown message type: {kind}", UNKNOWN_TYPE))
        except BadRequest as error:
            return frame("error", error_data(str(error), error.code))
        except DatabaseUnavailable as error:  # nothing done: the client may send the same frame again
            return frame("error", error_data(f"{kind} refused: {error}; nothing was done: try again", EXECUTION_ERROR))
        except Exception as error:  # the page, the browser or the server failed: said, and the session goes on
            reference = secrets.token_hex(4)
            log.exception("environment %s failed (error %s)", kind, reference)
            said = _said(error) if isinstance(error, PlaywrightError) else f"the server's error {reference}, logged"
            return frame("error", error_data(f"{kind} failed: {said}", EXECUTION_ERROR))

    # --- HTTP ---------------------------------------------------------------------------
    async def _http(self, method: str, key: str, endpoint: str, receive: Receive, send: Send) -> None:
        if not key and endpoint == "health":
            return await self._respond_health(send)
        routes = {"health": "GET", "schema": "GET", "metadata": "GET", "state": "GET", "reset": "POST", "step": "POST"}
        if endpoint in ("metadata", "schema", "openapi.json", "mcp") and method in ("GET", "POST"):
            return await _respond_public(endpoint, receive, send)
        if endpoint not in routes:
            return await _respond(send, 404, {"detail": "not found"})
        try:
            token = await self._token(key)
        except DatabaseUnavailable as error:
            return await _respond(send, 503, {"detail": f"{error}: try again"})
        if token is None:
            return await _respond(send, 403, {"detail": "unknown or revoked token"})
        if method != routes[endpoint]:
            return await _respond(send, 405, {"detail": f"{endpoint} takes {routes[endpoint]}"})
        if endpoint == "health":
            return await self._respond_health(send)
        if endpoint == "state":
            return await _respond(send, 200, {"episode_id": None, "step_count": 0})
        try:
            body = await _json_body(receive)
            if endpoint == "step":
                action_call(body.get("action"))
                return await _respond(send, 409, {"detail": STATELESS})
            return await self._http_reset(token, body, send)
        except BadRequest as error:
            return await _respond(send, 422, {"detail": str(error)})
        except DatabaseUnavailable as error:
            return await _respond(send, 503, {"detail": f"{error}; nothing was done: try again"})

    async def _respond_health(self, send: Send) -> None:
        problems = await self.health()
        if problems:
            return await _respond(send, 503, {"status": "unhealthy", "reasons": problems})
        return await _respond(send, 200, HEALTHY)

    async def _http_reset(self, token: EnvToken, body: dict[str, Any], send: Send) -> None:
        refusal = self._take_place(token)
        if refusal is not None:
            return await _respond(send, 503, {"detail": refusal["message"]})
        session = None
        try:
            session = self._session(token, await self.browser())
            return await _respond(send, 200, await session.reset(body))
        finally:
            self._give_place(token)
            if session is not None:
                await session.close(STATELESS)


async def _respond_public(endpoint: str, receive: Receive, send: Send) -> None:
    """What describes the environment, to anyone: its metadata, schemas, OpenAPI document and the
    JSON-RPC endpoint (`openenv validate --url` reads them all)."""
    if endpoint == "mcp":
        try:
            request = await _json_body(receive)
        except BadRequest as error:
            return await _respond(send, 200, _json_rpc(None, -32700, str(error)))
        if request.get("method") == "tools/list":
            return await _respond(send, 200, {"jsonrpc": "2.0", "id": request.get("id"), "result": {"tools": []}})
        return await _respond(send, 200, _json_rpc(request.get("id"), -32601, MCP_NO_TOOLS))
    answers: dict[str, dict[str, Any]] = {"metadata": METADATA, "schema": SCHEMAS, "openapi.json": OPENAPI}
    return await _respond(send, 200, answers[endpoint])


def _json_rpc(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _route(scope: dict[str, Any]) -> tuple[str, str]:
    """(key, endpoint): the key from an `Authorization: Bearer <key>` header, which OpenEnv's
    clients send with `headers=` (and the package's client from ARENA_ENV_KEY), the path then
    being the endpoint; else the path's first segment, as the published clients without headers
    need (base URL http://host/<key>). A public endpoint alone in the path has no key."""
    path = scope["path"].strip("/")
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization" and value[:7].lower() == b"bearer ":
            return value[7:].decode("latin-1").strip(), path
    first, _, rest = path.partition("/")
    if not rest and first in PUBLIC:
        return "", first
    return first, rest


async def _until(work: Awaitable[T], stop: asyncio.Event, timeout: float | None = None) -> T | None:
    """work's result; None if `stop` is set first (the work cancelled) or `timeout` passes."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done() and not stop.is_set():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return None


async def _revoked(session: Session, send: Send) -> str:
    """Said and closed at once: a revoked token keeps no socket, place or browser context."""
    why = "this token was revoked: the session is closed"
    with contextlib.suppress(Exception):  # the client may be gone already
        await send({"type": "websocket.send", "text": frame("error", error_data(why, SESSION_ERROR))})
        await send({"type": "websocket.close", "code": 4403})  # daphne closes with 1000 or 3000-4999
    await session.close("the token was revoked")
    return "the token was revoked"


def _said(error: BaseException) -> str:
    """An error in one line: its kind and the first line of its message."""
    if isinstance(error, TimeoutError):
        return f"no answer within {HEALTH_TIMEOUT_S:g} s"
    if isinstance(error, DatabaseUnavailable):
        return str(error)
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


async def _refuse(error: dict[str, Any], receive: Receive, send: Send) -> None:
    """Say why and close. The published client reads a frame only after sending one, so the socket
    stays open until the client's next frame (at most LINGER_S): it then raises with the message
    instead of failing on a socket already closed."""
    await send({"type": "websocket.send", "text": frame("error", error)})
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(receive(), timeout=LINGER_S)
    await send({"type": "websocket.close", "code": 1000})


async def _json_body(receive: Receive) -> dict[str, Any]:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > BODY_MAX:
            raise BadRequest("the body is over 1 MiB")
    parsed = parse_frame(body or b"{}")
    if not isinstance(parsed, dict):
        raise BadRequest("the body must be a JSON object")
    return parsed


async def _respond(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
