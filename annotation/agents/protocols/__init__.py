"""How a model is asked and how its reply becomes calls: one module a protocol.

- `captchaarena-native` (native.py): the published client's SFT_EVAL_NATIVE path, the way
  CaptchaAgent is evaluated: no tools sent, Qwen3 XML calls read from the reply text.
- `openai-tools` (tools.py): JSON tool calls, made robust like the published client.

A protocol builds the first messages, the request body, reads calls from a reply and writes the
messages that answer them. Acting on the page (actions.py), the history bounds (context.py) and
the end of the episode (episode.py) are shared.
"""

from __future__ import annotations

from annotation.agents.protocols.base import Call, Outcome, Protocol
from annotation.agents.protocols.native import NativeProtocol
from annotation.agents.protocols.tools import ToolsProtocol

PROTOCOLS: dict[str, type[Protocol]] = {
    NativeProtocol.name: NativeProtocol,
    ToolsProtocol.name: ToolsProtocol,
}

__all__ = ["PROTOCOLS", "Call", "Outcome", "Protocol"]
