"""Bounds on the size of a request body, as it arrives and before Django reads anything.

The reverse proxy (deploy/nginx.conf, client_max_body_size) refuses oversized bodies before they
reach daphne; these are the same bound inside the site, for whatever reaches it another way.
daphne itself would take a whole body (into a temporary file) before starting the application,
then hand all of it over at once, so an ASGI middleware alone sees a 64 MiB body only when it is
already in memory: BodyLimitRequest refuses it in daphne while it arrives, BodyLimitMiddleware
in the application for any other server.
"""

from __future__ import annotations

from daphne import http_protocol
from django.conf import settings

# After the 413, this much more of a body is read and thrown away, so that a client still sending
# (its socket buffers hold a few MiB) sees the answer rather than a reset; then the connection is cut.
LINGER_BYTES = 16 * 1024 * 1024


class BodyLimitRequest(http_protocol.WebRequest):
    """daphne's request, refusing a body over ARENA_MAX_BODY_BYTES as it arrives: at the headers
    when Content-Length says so, else at the chunk that passes the limit. Nothing past the limit is
    kept and the application is never started; the client gets a 413 and the connection closes."""

    received = 0
    refused = False

    def gotLength(self, length: int | None) -> None:
        super().gotLength(length)
        if length is not None and length > settings.ARENA_MAX_BODY_BYTES:
            self.requestHeaders.removeHeader(b"Expect")  # no "100 Continue" after the refusal
            self._refuse()

    def handleContentChunk(self, data: bytes) -> None:
        self.received += len(data)
        limit = settings.ARENA_MAX_BODY_BYTES
        if not self.refused and self.received > limit:
            self._refuse()
        if not self.refused:
            super().handleContentChunk(data)
        elif self.received > limit + LINGER_BYTES:
            self.channel.transport.abortConnection()

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if self.refused:  # the whole body came within the lingering allowance: done with it
            self.channel.transport.loseConnection()
            return
        super().requestReceived(command, path, version)

    def _refuse(self) -> None:
        self.refused = True
        self.content.close()  # drops what was kept (a temporary file past 100 kB)
        self.channel.transport.write(_raw_too_large(settings.ARENA_MAX_BODY_BYTES))
        self.channel.transport.loseWriteConnection()  # the answer is complete; reading goes on, discarding


def bound_daphne_bodies() -> None:
    """Makes daphne build its requests as BodyLimitRequest: it takes the class by this name for each
    connection and has no setting for it. Called where daphne imports the application (asgi.py)."""
    http_protocol.WebRequest = BodyLimitRequest  # type: ignore[misc]


def _size(limit: int) -> str:
    if limit >= 1024 * 1024 and limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MiB"
    if limit >= 1024 and limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit} bytes"


class BodyLimitMiddleware:
    """413 for a request whose body is over ARENA_MAX_BODY_BYTES: at once when Content-Length says
    so; for a chunked (or understated) body as soon as the bytes received pass the limit, and then
    nothing more of it is read and the application is told the client went away."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = settings.ARENA_MAX_BODY_BYTES
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            return await _too_large(send, limit)

        received = 0
        refused = False
        response_started = False

        async def bounded_receive():
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    if not response_started:
                        await _too_large(send, limit)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            nonlocal response_started
            if refused:
                return  # the 413 is the answer; the application's own is dropped
            if message["type"] == "http.response.start":
                response_started = True
            await send(message)

        await self.app(scope, bounded_receive, guarded_send)


def _content_length(scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large_text(limit: int) -> bytes:
    return (
        f"Request body too large: this site accepts at most {_size(limit)} ({limit} bytes) in one request.\n".encode()
    )


def _raw_too_large(limit: int) -> bytes:
    """The 413 as bytes on the wire, for daphne's request before any response machinery exists."""
    body = _too_large_text(limit)
    head = (
        "HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


async def _too_large(send, limit: int) -> None:
    body = _too_large_text(limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
