"""captchaarena-native: the published client's SFT_EVAL_NATIVE path, as CaptchaAgent is evaluated.

No tools are sent. The reply's text (message.content; a separate reasoning field is ignored, as
published) is searched for Qwen3 XML calls, `<function=NAME><parameter=KEY>VALUE</parameter>
</function>`, with or without the <tool_call> around them; only the first is executed. A value
becomes an integer only for a coordinate or duration_ms and only when it is a whole number; every
other value stays text, stripped of surrounding whitespace. JSON calls, a near miss such as
`<function=click >` or plain text count as no call, and the episode ends. The reply goes back
into the history verbatim; every answer is a user turn (text, then the screenshot).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from annotation.agents.protocols.base import Call, Outcome, Protocol, follow_up_text, user_message

FUNCTION = re.compile(r"<function=(\w+)>(.*?)</function>", re.S)
PARAMETER = re.compile(r"<parameter=(\w+)>\s*(.*?)\s*</parameter>", re.S)
INTEGER = re.compile(r"-?\d+")
INTEGER_KEYS = ("x", "y", "start_x", "start_y", "end_x", "end_y", "duration_ms")


def parse_xml_calls(text: str) -> list[Call]:
    """Every XML call in the text, in order (the protocol executes the first)."""
    calls = []
    for number, (name, body) in enumerate(FUNCTION.findall(text or "")):
        arguments: dict[str, Any] = {}
        for key, value in PARAMETER.findall(body):
            value = value.strip()
            arguments[key] = int(value) if key in INTEGER_KEYS and INTEGER.fullmatch(value) else value
        calls.append(Call(name, arguments, id=f"native_{number}"))
    return calls


class NativeProtocol(Protocol):
    name: ClassVar[str] = "captchaarena-native"
    bad_call_ends_episode: ClassVar[bool] = True
    max_calls: ClassVar[int] = 1

    def assistant(self, message: dict[str, Any], turn: int) -> dict[str, Any]:
        return {"role": "assistant", "content": message.get("content") or "", "_turn": turn}

    def calls(self, message: dict[str, Any]) -> list[Call]:
        return parse_xml_calls(message.get("content") or "")[:1]

    def answer(self, outcomes: list[Outcome], step: int) -> list[dict[str, Any]]:
        return [user_message(follow_up_text(outcomes[-1]), step)]
