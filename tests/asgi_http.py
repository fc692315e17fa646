"""One HTTP request through the site's real ASGI application, for tests that need what sits in
front of Django (body limits, the static files handler)."""

import asyncio

from arena_site.asgi import application


def http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


def exchange(scope: dict, receive) -> tuple[dict, bytes, list[dict]]:
    """Runs the request; returns the response's start message, its body and every message sent."""
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    asyncio.run(asyncio.wait_for(application(scope, receive, send), 60))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start, body, sent
