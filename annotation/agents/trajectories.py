"""Every turn of a rollout, kept: the request sent, the raw reply, the calls and their results,
the screenshots, tokens and latency.

Screenshots are PNG files in PRIVATE_ROOT (`agents/rollout-<id>/screenshot_step_<n>.png`, never a
public file; step 0 is the first one, then one per executed call, as the published client numbers
them). A turn's request is stored as sent but for three references that keep it small:
screenshots as "screenshot:<n>" image URLs, the system prompt as {"role": "system", "ref":
"system_prompt"} (the rollout keeps it once) and an earlier reply as {"role": "assistant", "ref":
"turn:<n>"} (that turn keeps it).
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import TextField
from django.db.models.functions import Cast

from annotation.agents.model import Completion
from annotation.agents.protocols.base import SCREENSHOT_URL, Outcome
from annotation.models import Rollout, Turn
from puzzles.contained import JSON_MAX_DEPTH, nesting

TURN_JSON = ("request", "reply", "calls")


def rollout_folder(rollout_id: int) -> Path:
    return Path(settings.PRIVATE_ROOT) / "agents" / f"rollout-{rollout_id}"


def screenshot_path(rollout_id: int, step: int) -> Path:
    return rollout_folder(rollout_id) / f"screenshot_step_{step}.png"


def screenshot_steps(rollout_id: int) -> list[int]:
    """The steps of the screenshots kept for a rollout, in order."""
    folder = rollout_folder(rollout_id)
    found = (p.stem.rsplit("_", 1)[-1] for p in folder.glob("screenshot_step_*.png")) if folder.is_dir() else ()
    return sorted(int(step) for step in found if step.isdigit())


def save_screenshot(rollout_id: int, step: int, png: bytes) -> None:
    path = screenshot_path(rollout_id, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)


def forget(rollout: Rollout) -> None:
    """A rollout's turns and screenshots, gone: it is about to run again."""
    rollout.turns.all().delete()
    shutil.rmtree(rollout_folder(rollout.pk), ignore_errors=True)


def stored_turns(rollout_id: int) -> list[Turn]:
    """A rollout's turns in order, their JSON parsed here one turn at a time: PostgreSQL keeps JSON
    nested far deeper than Python parses, so such a turn gets None there instead of failing them all."""
    texts = {f"{name}_text": Cast(name, TextField()) for name in TURN_JSON}
    turns = list(Turn.objects.filter(rollout_id=rollout_id).defer(*TURN_JSON).annotate(**texts).order_by("number"))
    for turn in turns:
        for name in TURN_JSON:
            setattr(turn, name, _parsed(getattr(turn, f"{name}_text")))
    return turns


def _parsed(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return None


def readable(turn: Turn) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(reply, calls) in the shapes the harness stores (and a request that is a list), for pages and
    exports; None when the stored turn is not in them (a crafted import, a hand-edited row)."""
    if not isinstance(turn.request, list) or max(map(nesting, (turn.request, turn.reply, turn.calls))) > JSON_MAX_DEPTH:
        return None
    stored_calls = turn.calls if isinstance(turn.calls, list) else [None]
    reply = _readable_reply(turn.reply)
    calls = [call for call in map(_readable_call, stored_calls) if call is not None]
    if reply is None or len(calls) != len(stored_calls):
        return None
    return reply, calls


REPLY_TEXTS = ("content", "reasoning_content", "reasoning", "finish_reason")


def _readable_reply(reply: Any) -> dict[str, Any] | None:
    """The reply's texts (each a string or None), or None when it is not a reply."""
    if reply is None:
        return dict.fromkeys(REPLY_TEXTS)
    if not isinstance(reply, dict) or any(not isinstance(reply.get(key), str | None) for key in REPLY_TEXTS):
        return None
    return {key: reply.get(key) for key in REPLY_TEXTS}


def _readable_call(call: Any) -> dict[str, Any] | None:
    """A call as Outcome.as_record keeps it, or None when it is not one."""
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    screenshot = call.get("screenshot")
    shapes = (
        isinstance(call.get("arguments"), dict | None),
        isinstance(call.get("applied"), dict | None),
        isinstance(call.get("result"), str | None),
        screenshot is None or (type(screenshot) is int and screenshot >= 0),
        isinstance(call.get("error"), bool | None),
    )
    if not all(shapes):
        return None
    return {
        "name": call["name"],
        "arguments": call.get("arguments") or {},
        "applied": call.get("applied"),
        "result": call.get("result") or "",
        "screenshot": screenshot,
        "error": bool(call.get("error")),
    }


def stored(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as a turn keeps them: the system prompt and earlier replies by reference."""
    out = []
    for message in messages:
        if message.get("_ref"):
            out.append({"role": message["role"], "ref": message["_ref"]})
        elif "_turn" in message:
            out.append({"role": message["role"], "ref": f"turn:{message['_turn']}"})
        else:
            out.append({k: v for k, v in message.items() if not k.startswith("_")})
    return out


def wire(messages: list[dict[str, Any]], screenshots: dict[int, bytes]) -> list[dict[str, Any]]:
    """Messages as sent: the harness's notes dropped, each screenshot a PNG data URL."""
    return [{k: _inline(v, screenshots) for k, v in m.items() if not k.startswith("_")} for m in messages]


def _inline(value: Any, screenshots: dict[int, bytes]) -> Any:
    if not isinstance(value, list):
        return value
    out = []
    for part in value:
        url = part.get("image_url", {}).get("url", "") if isinstance(part, dict) else ""
        if url.startswith(SCREENSHOT_URL):
            png = screenshots[int(url[len(SCREENSHOT_URL) :])]
            part = {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
            }
        out.append(part)
    return out


class Recorder:
    """Writes one rollout's trajectory as it happens (from the episode's async code)."""

    def __init__(self, rollout_id: int):
        self.rollout_id = rollout_id

    async def screenshot(self, step: int, png: bytes) -> None:
        await asyncio.to_thread(save_screenshot, self.rollout_id, step, png)

    async def start(self, *, instruction: str, system_prompt: str) -> None:
        await sync_to_async(Rollout.objects.filter(pk=self.rollout_id).update, thread_sensitive=True)(
            instruction=instruction, system_prompt=system_prompt
        )

    async def turn(
        self,
        number: int,
        *,
        seen: int,
        request: list[dict[str, Any]],
        completion: Completion | None,
        outcomes: list[Outcome],
        error: str = "",
        retries: int = 0,
        latency_ms: float | None = None,
    ) -> None:
        reply = None
        if completion is not None:
            reply = {**completion.message, "finish_reason": completion.finish_reason}
            retries, latency_ms = completion.retries, completion.latency_ms
        await sync_to_async(Turn.objects.create)(
            rollout_id=self.rollout_id,
            number=number,
            seen=seen,
            request=stored(request),
            reply=reply,
            calls=[o.as_record() for o in outcomes],
            tokens_in=completion.tokens_in if completion else None,
            tokens_out=completion.tokens_out if completion else None,
            latency_ms=latency_ms,
            retries=retries,
            error=error[:300],
        )
