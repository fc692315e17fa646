"""Bounds at the ASGI layer, before Django reads anything: the size of a request body.

The reverse proxy (deploy/nginx.conf, client_max_body_size) refuses oversized bodies before they
reach daphne; this is the same bound inside the site, for whatever reaches it another way.
"""

from __future__ import annotations

from django.conf import settings


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


async def _too_large(send, limit: int) -> None:
    body = (
        f"Request body too large: this site accepts at most {_size(limit)} ({limit} bytes) in one request.\n"
    ).encode()
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
