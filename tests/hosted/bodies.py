"""Every response body a browser page receives, kept for the tests that search them for truth."""

from __future__ import annotations

import asyncio
from typing import Any


class BodiesSeen:
    """Register `keep` as a page's "response" handler; gather `tasks` before reading `bodies`,
    each (url, content type, bytes)."""

    def __init__(self) -> None:
        self.bodies: list[tuple[str, str, bytes]] = []
        self.tasks: list[Any] = []

    def keep(self, response: Any) -> None:
        self.tasks.append(asyncio.ensure_future(self._body(response)))

    async def _body(self, response: Any) -> None:
        try:
            body = await response.body()
        except Exception:  # a redirect has no body
            body = b""
        self.bodies.append((response.url, response.headers.get("content-type", ""), body))
