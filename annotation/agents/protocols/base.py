"""What every protocol shares: calls read from a reply, their outcomes, the messages both send.

Messages are kept in stored form: a screenshot is an image part whose URL is "screenshot:<n>"
(the n-th screenshot of the rollout); the episode puts the PNG in only when it sends a request.
Keys starting with "_" are the harness's own notes on a message (which turn a reply came from)
and are never sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

SCREENSHOT_URL = "screenshot:"
FIRST_TEXT = "Here is the current state of the browser. Solve this puzzle: {instruction}"
FIRST_TEXT_NO_INSTRUCTION = "Here is the current state of the browser. Begin solving this puzzle."
SCREENSHOT_TEXT = "Here is the updated screenshot:"
ACTION_TEXT = "Action executed: {result}. Here is the updated screenshot:"
DEFAULT_MAX_TOKENS = 12000


@dataclass
class Call:
    """One call read from a reply: its name and arguments as the model wrote them."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    problem: str = ""  # why it cannot be read at all (arguments that are not JSON); "" when it can


@dataclass
class Outcome:
    """What came of a call: the arguments executed, the text answered, the screenshot after it."""

    call: Call
    result: str
    applied: dict[str, Any] | None = None
    screenshot: int | None = None
    error: bool = False  # answered as an error: it was not executed

    def as_record(self) -> dict[str, Any]:
        return {
            "name": self.call.name,
            "arguments": self.call.arguments,
            "applied": self.applied,
            "result": self.result,
            "screenshot": self.screenshot,
            "error": self.error,
        }


def image_part(step: int) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"{SCREENSHOT_URL}{step}"}}


def user_message(text: str, step: int) -> dict[str, Any]:
    """A user turn as published: its text first, then the screenshot."""
    return {"role": "user", "content": [{"type": "text", "text": text}, image_part(step)]}


def first_text(instruction: str | None) -> str:
    return FIRST_TEXT.format(instruction=instruction) if instruction else FIRST_TEXT_NO_INSTRUCTION


def follow_up_text(outcome: Outcome) -> str:
    """The text of the user turn after a call: the published wording."""
    if outcome.call.name == "screenshot" or outcome.error:
        return SCREENSHOT_TEXT
    return ACTION_TEXT.format(result=outcome.result)


class Protocol:
    """How a model is asked and how its reply becomes calls."""

    name: ClassVar[str]
    # The published client crashes on a call it cannot execute; a protocol either ends the
    # episode there (and counts it) or answers the call with an error and goes on.
    bad_call_ends_episode: ClassVar[bool]
    max_calls: ClassVar[int]  # calls executed per reply; the rest are answered as errors

    def __init__(self, *, max_tokens: int = DEFAULT_MAX_TOKENS, disable_thinking: bool = False):
        self.max_tokens, self.disable_thinking = max_tokens, disable_thinking

    def first_messages(self, system_prompt: str, instruction: str | None, step: int) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": system_prompt, "_ref": "system_prompt"},
            user_message(first_text(instruction), step),
        ]

    def body(self, model: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The request body. No sampling parameters: the server's defaults decide, as published."""
        body: dict[str, Any] = {"model": model, "max_tokens": self.max_tokens, "messages": messages}
        if self.disable_thinking:
            body["chat_template_kwargs"] = {"enable_thinking": False}
        return body

    def assistant(self, message: dict[str, Any], turn: int) -> dict[str, Any]:
        """The reply as it goes into the history."""
        raise NotImplementedError

    def calls(self, message: dict[str, Any]) -> list[Call]:
        raise NotImplementedError

    def answer(self, outcomes: list[Outcome], step: int) -> list[dict[str, Any]]:
        """The messages that answer a reply's calls; `step` is the latest screenshot."""
        raise NotImplementedError
