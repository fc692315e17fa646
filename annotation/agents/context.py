"""What of the history goes into each request: the published bounds, or Qwen-CUA context folding.

Both are pure functions of the whole history (in stored form), applied before every request; the
history itself is never cut, so the stored trajectory keeps everything.

- `published`: the published client's bounds. Over 22 messages, the system message and the last
  20 are sent (from the 12th model call on, the first user turn with the instruction is gone);
  of the user turns still holding a screenshot, the last 8 keep it and the others have it
  replaced by the text "[older screenshot omitted]". (Under openai-tools a tool message whose
  call was cut off is dropped too: the API refuses an answer to a call it cannot see.)
- `fold`: nothing is cut but screenshots. At most 20 are sent; past that the oldest are replaced
  by the placeholder in blocks of 10, so the fold boundary moves 10 screenshots at a time and the
  request prefix stays the same (cacheable) in between. Reasoning and actions all stay.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

PLACEHOLDER = "[older screenshot omitted]"
MAX_MESSAGES, TAIL_MESSAGES, KEEP_SCREENSHOTS = 22, 20, 8  # published
FOLD_KEEP, FOLD_BLOCK = 20, 10

Messages = list[dict[str, Any]]


def published(messages: Messages) -> Messages:
    if len(messages) > MAX_MESSAGES:
        tail = messages[-TAIL_MESSAGES:]
        while tail and tail[0].get("role") == "tool":
            tail = tail[1:]
        messages = [messages[0], *tail]
    shown = _with_screenshot(messages)
    return _without_screenshots(messages, set(shown[:-KEEP_SCREENSHOTS]))


def fold(messages: Messages) -> Messages:
    shown = _with_screenshot(messages)
    excess = len(shown) - FOLD_KEEP
    folded = FOLD_BLOCK * math.ceil(excess / FOLD_BLOCK) if excess > 0 else 0
    return _without_screenshots(messages, set(shown[:folded]))


CONTEXTS: dict[str, Callable[[Messages], Messages]] = {"published": published, "fold": fold}


def screenshots_in(messages: Messages) -> list[str]:
    """The screenshot URLs a list of messages carries, in order."""
    return [
        part["image_url"]["url"]
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    ]


def _with_screenshot(messages: Messages) -> list[int]:
    return [
        i
        for i, message in enumerate(messages)
        if message.get("role") == "user"
        and isinstance(message.get("content"), list)
        and any(isinstance(part, dict) and part.get("type") == "image_url" for part in message["content"])
    ]


def _without_screenshots(messages: Messages, indices: set[int]) -> Messages:
    """The messages, those at the indices with every screenshot replaced by the placeholder text."""
    return [
        {**message, "content": [_stub(part) for part in message["content"]]} if i in indices else message
        for i, message in enumerate(messages)
    ]


def _stub(part: Any) -> Any:
    if isinstance(part, dict) and part.get("type") == "image_url":
        return {"type": "text", "text": PLACEHOLDER}
    return part
