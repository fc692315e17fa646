"""Fake model servers for the agent tests: real HTTP servers in a thread, speaking chat completions.

They are the external edge of the harness (the model); everything on our side runs for real.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, dict[str, Any]]  # HTTP status and JSON body


class FakeChatServer:
    """Answers each POST with respond(request body) and keeps every request it got. One respond
    runs at a time unless `serial` is False (a respond that waits for others in flight)."""

    def __init__(self, respond: Callable[[dict], Answer], *, serial: bool = True):
        self.respond, self.requests = respond, []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                    if serial:
                        status, payload = owner.respond(body)
                if not serial:
                    status, payload = owner.respond(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def bodies(self) -> list[dict]:
        return [r["body"] for r in self.requests]


def reply(message: dict, *, usage: tuple[int, int] = (1000, 50)) -> Answer:
    return 200, {
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }


def text_reply(content: str) -> Answer:
    return reply({"role": "assistant", "content": content})


def xml_call(name: str, arguments: dict[str, Any], thinking: str = "") -> str:
    """A Qwen3 XML tool call as CaptchaAgent writes it in its text, thinking first."""
    params = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"{thinking}\n</think>\n\n<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def tool_calls(*calls: tuple[str, Any]) -> dict:
    """An assistant message with JSON tool calls; arguments given as a dict or a raw string."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def scripted(*answers: Answer, then: Answer | None = None) -> Callable[[dict], Answer]:
    """Answers in order, then `then` (a reply with no call, by default) for ever."""
    queue = list(answers)
    last = then or text_reply("I have nothing more to do.")
    return lambda body: queue.pop(0) if queue else last


PAGE_IN_PROMPT = re.compile(r"puzzle_type=(\S+?)&puzzle_id=(\S+)")


def images_in(body: dict) -> int:
    return sum(
        1
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )


def first_user_text(body: dict) -> str:
    first = next(m for m in body["messages"] if m["role"] == "user")
    return first["content"][0]["text"]
