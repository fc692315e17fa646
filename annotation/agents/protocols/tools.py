"""openai-tools: chat completions with JSON tool calls, made robust like the published client.

The request carries the published client's five tools (screenshot, click, type_text, drag, hold:
its per-puzzle evaluation's set, word for word) and tool_choice auto.
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

from annotation.agents.protocols.base import Call, Outcome, Protocol, follow_up_text, user_message

SCREENSHOT_RESULT = "Screenshot captured. See the image below."


BUTTON = {"type": "string", "enum": ["left", "right", "middle"]}
BUTTON_DESCRIPTION = "Mouse button. Defaults to left; for these puzzles always use left."


def _tool(name: str, description: str, properties: dict[str, dict], required: tuple[str, ...] = ()) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(required)},
        },
    }


def _integer(description: str) -> dict:
    return {"type": "integer", "description": description}


POINT = {
    "x": _integer("Horizontal pixel coordinate."),
    "y": _integer("Vertical pixel coordinate."),
    "button": {**BUTTON, "description": BUTTON_DESCRIPTION},
}
# The published client's five tools for its per-puzzle openai evaluation, in its order and words
# (the tools CaptchaAgent was trained with: a model sees them in its prompt, so a changed word is a
# changed prompt). hold declares no duration_ms there ("a fixed 10 seconds"); one sent is honoured.
TOOLS = [
    _tool(
        "screenshot",
        "Capture the current 1280x1080 browser viewport as an image so you can see the puzzle and the result "
        "of your last action.",
        {},
    ),
    _tool(
        "click",
        "Click at the given (x, y) pixel coordinate \u2014 used to select a tile, an option, or a point on the page.",
        POINT,
        ("x", "y"),
    ),
    _tool(
        "type_text",
        "Type the given text string at the current cursor position.",
        {"text": {"type": "string", "description": "The text to type."}},
        ("text",),
    ),
    _tool(
        "drag",
        "Press the mouse at (start_x, start_y), move to (end_x, end_y), and release \u2014 drag the slider handle "
        "on the bar below the image horizontally until the puzzle piece lines up with its empty slot.",
        {
            "start_x": _integer("Start horizontal pixel (on the slider handle)."),
            "start_y": _integer("Start vertical pixel (on the slider handle)."),
            "end_x": _integer("Target horizontal pixel."),
            "end_y": _integer("Target vertical pixel."),
        },
        ("start_x", "start_y", "end_x", "end_y"),
    ),
    _tool(
        "hold",
        "Press and hold the mouse button at (x, y) for a fixed 10 seconds \u2014 for puzzles that require a "
        "sustained hold.",
        POINT,
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
    function: dict = call["function"] if isinstance(call.get("function"), dict) else {}
    name: str = function["name"] if isinstance(function.get("name"), str) else ""
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
