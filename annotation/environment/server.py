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
import time
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Browser, Playwright, async_playwright

from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS
from annotation.agents.players import HEARTBEAT_S, player_beat, rollouts_abandoned_fail
from annotation.environment.database import DatabaseUnavailable, database, database_ready
from annotation.environment.protocol import (
    CAPACITY_REACHED,
    EXECUTION_ERROR,
    INVALID_JSON,
    SCHEMAS,
    SESSION_ERROR,
    UNKNOWN_TYPE,
    BadRequest,
    action_call,
    error_data,
    frame,
)
from annotation.environment.sessions import Session
from annotation.environment.tokens import token_for
from annotation.models import EnvToken

log = logging.getLogger(__name__)
# ASGI's two callables, its events as plain dicts (asgiref.typing's TypedDicts would want every key).
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
HEALTHY = {"status": "healthy"}
METADATA = {
    "name": "CaptchaArena",
    "description": "CaptchaArena puzzles on the live page; reward: the server verifier's 0-1 score.",
}
STATELESS = "HTTP reset is stateless, as OpenEnv's: an episode lives on a WebSocket at <base>/ws"
BODY_MAX = 1 << 20
LINGER_S = 30.0
IDLE_TIMEOUT_S = 300.0  # a session silent this long is closed (`env serve --idle-timeout`)
HEALTH_TIMEOUT_S = 3.0  # each check of /health; docker-compose.yml's health check waits 4 s in all
# A page opened this recently answers for the browser: opening one costs about 0.15 s of CPU, so
# a health check every 10 s (docker-compose.yml) opens one every third check, 0.5% of a core.
PAGE_CHECK_KEPT_S = 30.0
HEALTH_PAGE = "/accounts/login/"  # a page of the site that asks nothing of the database


class EnvServer:
    def __init__(
        self, *, page_base: str, max_sessions: int, idle_timeout_s: float, player_id: int | None = None
    ) -> None:
        self.page_base, self.max_sessions, self.idle_timeout_s = page_base, max_sessions, idle_timeout_s
        self.player_id = player_id  # this process's PlayerProcess, when it holds its episodes' rollouts
        self.active = 0  # places taken: open sessions, and HTTP resets under way
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._launching = asyncio.Lock()
        self._page_check: asyncio.Task[None] | None = None
        self._page_checked_at = float("-inf")

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        key, _, endpoint = scope["path"].strip("/").partition("/")
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

    def _take_place(self) -> bool:
        if self.active >= self.max_sessions:
            return False
        self.active += 1
        return True

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
        if not self._take_place():
            return await _refuse(self._capacity_error(), receive, send)
        session, why = None, "the server failed"
        try:
            session = self._session(token, await self.browser())
            why = await self._converse(session, receive, send)
        finally:
            self.active -= 1
            if session is not None:
                await session.close(why)

    def _session(self, token: EnvToken, browser: Browser) -> Session:
        return Session(token=token, browser=browser, page_base=self.page_base, player_id=self.player_id)

    async def _converse(self, session: Session, receive: Receive, send: Send) -> str:
        """Answer the client's frames until it closes, goes away or falls idle; returns which."""
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=self.idle_timeout_s)
            except TimeoutError:
                idle = f"idle for {self.idle_timeout_s:g} s"
                await session.close(idle)  # its browser context freed now, not after the goodbye
                await _refuse(error_data(idle, SESSION_ERROR), receive, send)
                return idle
            if message["type"] != "websocket.receive":
                return "the client went away"  # websocket.disconnect
            reply = await self._answer(session, message.get("text") or message.get("bytes") or "")
            if reply is None:
                await send({"type": "websocket.close", "code": 1000})
                return "the client closed the session"
            await send({"type": "websocket.send", "text": reply})

    async def _answer(self, session: Session, text: str | bytes) -> str | None:
        """The frame answering one client frame; None for close."""
        try:
            message = json.loads(text)
        except ValueError as error:
            return frame("error", error_data(f"Invalid JSON: {error}", INVALID_JSON))
        kind = message.get("type") if isinstance(message, dict) else None
        data = message.get("data", {}) if isinstance(message, dict) else None
        try:
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
        except Exception as error:  # the page or the browser failed: said, and the session goes on
            log.exception("environment %s failed", kind)
            first = str(error).splitlines()[0] if str(error) else ""
            return frame("error", error_data(f"{kind} failed: {type(error).__name__}: {first}", EXECUTION_ERROR))

    # --- HTTP ---------------------------------------------------------------------------
    async def _http(self, method: str, key: str, endpoint: str, receive: Receive, send: Send) -> None:
        if key == "health" and not endpoint:
            return await self._respond_health(send)
        routes = {"health": "GET", "schema": "GET", "metadata": "GET", "state": "GET", "reset": "POST", "step": "POST"}
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
        if endpoint in ("schema", "metadata", "state"):
            answers: dict[str, dict[str, Any]] = {
                "schema": SCHEMAS,
                "metadata": METADATA,
                "state": {"episode_id": None, "step_count": 0},
            }
            return await _respond(send, 200, answers[endpoint])
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
        if not self._take_place():
            return await _respond(send, 503, {"detail": self._capacity_error()["message"]})
        session = None
        try:
            session = self._session(token, await self.browser())
            return await _respond(send, 200, await session.reset(body))
        finally:
            self.active -= 1
            if session is not None:
                await session.close(STATELESS)


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
    try:
        parsed = json.loads(body or b"{}")
    except ValueError as error:
        raise BadRequest(f"the body is no JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise BadRequest("the body must be a JSON object")
    return parsed


async def _respond(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
