"""The OpenAPI document `env serve` answers at /openapi.json: OpenEnv's simulation-mode endpoints,
as `openenv validate --url` reads them (info.version, and /reset, /step and /state present)."""

from __future__ import annotations

from typing import Any

from arena_env.models import VERSION


def _operation(summary: str, method: str = "get") -> dict[str, Any]:
    return {method: {"summary": summary, "responses": {"200": {"description": "OK"}}}}


OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "CaptchaArena training environment",
        "version": VERSION,
        "description": "OpenEnv's protocol: a session is a WebSocket at /ws (reset, step, state, close). The key: "
        "`Authorization: Bearer <key>`, or the path's first segment (/<key>/ws).",
    },
    "paths": {
        "/reset": _operation("A first observation; stateless: the episode is closed after it", "post"),
        "/step": _operation("The action checked; episodes live on the WebSocket only (409)", "post"),
        "/state": _operation("A fresh session's state"),
        "/health": _operation("Healthy when the database answers and the browser opens a page"),
        "/metadata": _operation("Name, description, version and readme"),
        "/schema": _operation("The action, observation and state JSON schemas"),
        "/mcp": _operation("JSON-RPC 2.0; no MCP tools are offered yet", "post"),
    },
}
