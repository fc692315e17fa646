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
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from playwright.async_api import Browser, Playwright, async_playwright

from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS
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


class EnvServer:
    def __init__(self, *, page_base: str, max_sessions: int, idle_timeout_s: float) -> None:
        self.page_base, self.max_sessions, self.idle_timeout_s = page_base, max_sessions, idle_timeout_s
        self.active = 0  # places taken: open sessions, and HTTP resets under way
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._launching = asyncio.Lock()

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

    async def _token(self, key: str) -> EnvToken | None:
        return await sync_to_async(token_for)(key) if key else None

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
        token = await self._token(key)
        if token is None or endpoint != "ws":
            await send({"type": "websocket.close", "code": 4403})  # before accept: a 403 handshake
            return
        await send({"type": "websocket.accept"})
        if not self._take_place():
            return await _refuse(self._capacity_error(), receive, send)
        session, why = None, "the server failed"
        try:
            session = Session(token=token, browser=await self.browser(), page_base=self.page_base)
            why = await self._converse(session, receive, send)
        finally:
            self.active -= 1
            if session is not None:
                await session.close(why)

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
        except Exception as error:  # the page or the browser failed: said, and the session goes on
            log.exception("environment %s failed", kind)
            first = str(error).splitlines()[0] if str(error) else ""
            return frame("error", error_data(f"{kind} failed: {type(error).__name__}: {first}", EXECUTION_ERROR))

    # --- HTTP ---------------------------------------------------------------------------
    async def _http(self, method: str, key: str, endpoint: str, receive: Receive, send: Send) -> None:
        if key == "health" and not endpoint:
            return await _respond(send, 200, HEALTHY)
        routes = {"health": "GET", "schema": "GET", "metadata": "GET", "state": "GET", "reset": "POST", "step": "POST"}
        if endpoint not in routes:
            return await _respond(send, 404, {"detail": "not found"})
        if await self._token(key) is None:
            return await _respond(send, 403, {"detail": "unknown or revoked token"})
        if method != routes[endpoint]:
            return await _respond(send, 405, {"detail": f"{endpoint} takes {routes[endpoint]}"})
        if endpoint in ("health", "schema", "metadata", "state"):
            answers: dict[str, dict[str, Any]] = {
                "health": HEALTHY,
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
            return await self._http_reset(key, body, send)
        except BadRequest as error:
            return await _respond(send, 422, {"detail": str(error)})

    async def _http_reset(self, key: str, body: dict[str, Any], send: Send) -> None:
        token = await self._token(key)
        if token is None:
            return await _respond(send, 403, {"detail": "unknown or revoked token"})
        if not self._take_place():
            return await _respond(send, 503, {"detail": self._capacity_error()["message"]})
        session = None
        try:
            session = Session(token=token, browser=await self.browser(), page_base=self.page_base)
            return await _respond(send, 200, await session.reset(body))
        finally:
            self.active -= 1
            if session is not None:
                await session.close(STATELESS)


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
