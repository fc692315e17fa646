"""openai-tools: chat completions with JSON tool calls, made robust like the published client.

The request carries five tools (screenshot, click, drag, type_text, hold) and tool_choice auto.
Arguments are read leniently: `{"x": [579, 784]}` is x 579 and y 784, "410.5" is 410, a hold
without duration_ms lasts 10 s. Every call that still cannot be executed (arguments that are not
JSON, a coordinate that is no number, a missing parameter) is answered with a tool message
"error: ..." and the episode goes on: a bad call costs the model its turn, never the rollout.
Each call gets its tool message (the API requires one per call id), then one user turn brings the
screenshot.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from annotation.agents.actions import HOLD_DEFAULT_MS
from annotation.agents.protocols.base import Call, Outcome, Protocol, follow_up_text, user_message

SCREENSHOT_RESULT = "Screenshot captured. See the image below."


def _tool(name: str, description: str, properties: dict[str, str], required: tuple[str, ...] = ()) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": kind} for key, kind in properties.items()},
                "required": list(required),
            },
        },
    }


POINT = {"x": "integer", "y": "integer"}
TOOLS = [
    _tool("screenshot", "See the page again (1280x1080 pixels).", {}),
    _tool("click", "Click at a point of the page, in page pixels.", POINT, ("x", "y")),
    _tool(
        "drag",
        "Press at the start point, move to the end point, release.",
        dict.fromkeys(("start_x", "start_y", "end_x", "end_y"), "integer"),
        ("start_x", "start_y", "end_x", "end_y"),
    ),
    _tool("type_text", "Type text with the keyboard into the focused field.", {"text": "string"}, ("text",)),
    _tool(
        "hold",
        f"Press at a point and keep holding for duration_ms milliseconds (default {HOLD_DEFAULT_MS}), then release.",
        {**POINT, "duration_ms": "integer"},
        ("x", "y"),
    ),
]


class ToolsProtocol(Protocol):
    name: ClassVar[str] = "openai-tools"
    bad_call_ends_episode: ClassVar[bool] = False
    max_calls: ClassVar[int] = 10  # a model that floods one reply with calls does not stall a worker

    def body(self, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {**super().body(model, messages), "tools": TOOLS, "tool_choice": "auto"}

    def assistant(self, message: dict[str, Any], turn: int) -> dict[str, Any]:
        kept: dict[str, Any] = {"role": "assistant", "content": message.get("content"), "_turn": turn}
        if message.get("tool_calls"):
            kept["tool_calls"] = message["tool_calls"]
        return kept

    def calls(self, message: dict[str, Any]) -> list[Call]:
        return [_read(call, number) for number, call in enumerate(message.get("tool_calls") or [])]

    def answer(self, outcomes: list[Outcome], step: int) -> list[dict[str, Any]]:
        replies = [
            {"role": "tool", "tool_call_id": o.call.id, "content": SCREENSHOT_RESULT if _shot(o) else o.result}
            for o in outcomes
        ]
        return replies + [user_message(follow_up_text(outcomes[-1]), step)]


def _shot(outcome: Outcome) -> bool:
    return outcome.call.name == "screenshot" and not outcome.error


def _read(call: Any, number: int) -> Call:
    """A tool call as a Call; what cannot be read becomes its problem, answered as an error."""
    if not isinstance(call, dict):
        return Call("", {}, id=f"call_{number}", problem="a tool call that is not an object")
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    name = function.get("name") if isinstance(function.get("name"), str) else ""
    read = Call(name, {}, id=str(call.get("id") or f"call_{number}"))
    raw = function.get("arguments")
    if isinstance(raw, dict):  # some servers send the object itself
        read.arguments = raw
        return read
    try:
        arguments = json.loads(raw or "{}")
    except (TypeError, ValueError):
        read.problem = f"the arguments of {name or 'the call'} are not JSON"
        return read
    if isinstance(arguments, dict):
        read.arguments = arguments
    else:
        read.problem = f"the arguments of {name or 'the call'} are not a JSON object"
    return read
