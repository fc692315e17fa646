"""The peer's API, server-side: list its families, fetch a puzzle by its address, check an answer.

The dialect (dialects.py) says which route and which query; this module only speaks HTTP and JSON.
Nothing here reaches a browser: it is how the registry probes and draws.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from annotation.hosted.dialects import Address, Dialect, Listing

TIMEOUT_S = 15.0
MAX_BODY = 32 * 1024 * 1024  # a generated jigsaw's pieces come inline as base64 PNGs


class PeerUnreachable(ConnectionError):
    """The server did not answer at all (refused, timed out, not HTTP)."""


class PeerRefused(RuntimeError):
    """The server answered with an error; the message is its own words."""


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any

    def error(self) -> str | None:
        """The peer's own error message, or None for a 2xx answer without one."""
        said = self.body.get("error") if isinstance(self.body, dict) else None
        if self.status < 400 and said is None:
            return None
        return f"HTTP {self.status}: {said or str(self.body)[:200]}"


class PeerClient:
    def __init__(self, base_url: str, dialect: Dialect, timeout_s: float = TIMEOUT_S) -> None:
        self.base_url = base_url.rstrip("/")
        self.dialect = dialect
        self.timeout_s = timeout_s

    def listing(self) -> dict[str, list[str] | None]:
        """Each family the server lists, with its puzzle ids when the dialect lists them."""
        route = self.dialect.list_route
        reply = self._answered(self.request("GET", route), f"its family listing ({route})")
        body = reply.body
        if self.dialect.listing is Listing.BY_TYPE and isinstance(body, dict):
            return {str(name): [str(i) for i in ids] for name, ids in body.items() if isinstance(ids, list)}
        names = body.get("types") if isinstance(body, dict) else body
        if not isinstance(names, list):
            raise PeerRefused(f"{self.dialect.list_route} answered no list of families: {str(body)[:200]}")
        return {str(name): None for name in names}

    def fetch(self, address: Address) -> dict[str, Any]:
        """The peer's puzzle at this address (its truth included: this stays on the server)."""
        query = self.dialect.fetch_query(address)
        reply = self._answered(self.request("GET", self.dialect.fetch_route, query=query), f"{address.family} puzzle")
        if not isinstance(reply.body, dict) or not reply.body.get("puzzle_id"):
            raise PeerRefused(f"{self.dialect.fetch_route} answered no puzzle_id: {str(reply.body)[:200]}")
        return reply.body

    def check(self, family: str, puzzle_id: str, answer: Any) -> Reply:
        """The peer's answer to one check_answer, errors included (a 400 is an answer too)."""
        body = {"puzzle_type": family, "puzzle_id": puzzle_id, "answer": answer, "elapsed_time": 0}
        return self.request("POST", self.dialect.check_route, body=body)

    def request(self, method: str, path: str, query: dict[str, Any] | None = None, body: Any = None) -> Reply:
        url = self.base_url + path + ("?" + urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return Reply(response.status, _json(response.read(MAX_BODY)))
        except urllib.error.HTTPError as error:
            return Reply(error.code, _json(error.read(MAX_BODY)))
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise PeerUnreachable(f"no answer from {self.base_url}: {reason}") from error

    def _answered(self, reply: Reply, what: str) -> Reply:
        problem = reply.error()
        if problem:
            raise PeerRefused(f"{what}: {problem}")
        return reply


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return {"error": f"not JSON: {raw[:120]!r}"}
