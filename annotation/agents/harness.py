"""The agent harness: a model acts on the live page through five tools, like a person's hand.

Each rollout is an attempt by a participant of kind agent, scored by the same server path as
people. The agent sees 1280x1080 screenshots only and has at most 15 turns; submitting ends the
episode. Providers: `replay` (the reference answer as tool calls, to test the harness itself)
and `openai` (chat completions with tool calls, to any compatible server).
"""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from asgiref.sync import sync_to_async

from annotation.agents.browser import on_pages, open_attempt, perform
from annotation.live.attempts import attempt_start, system_participant
from annotation.models import Attempt, Participant
from puzzles.models import Puzzle
from puzzles.registry import get_type

MAX_TURNS = 15
MAX_CALLS_PER_TURN = 10  # a model that floods one turn with calls does not stall a worker
MAX_HOLD_MS = 30_000  # nor does a hold of an hour
SETTLE_S = 0.15  # let the page draw the effect of an action before the next screenshot

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "screenshot",
            "description": "See the page (1280x1080).",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "click",
            "description": "Click at a point of the 1280x1080 page.",
            "parameters": {
                "type": "object",
                "required": ["x", "y"],
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "drag",
            "description": "Press at the start point, move to the end point, release.",
            "parameters": {
                "type": "object",
                "required": ["start_x", "start_y", "end_x", "end_y"],
                "properties": {k: {"type": "integer"} for k in ("start_x", "start_y", "end_x", "end_y")},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "hold",
            "description": "Press at a point for duration_ms milliseconds, then release.",
            "parameters": {
                "type": "object",
                "required": ["x", "y", "duration_ms"],
                "properties": {k: {"type": "integer"} for k in ("x", "y", "duration_ms")},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "type_text",
            "description": "Type text with the keyboard into the focused field.",
            "parameters": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
        },
    },
]
TOOL_NAMES = {tool["function"]["name"] for tool in TOOLS}
SYSTEM_PROMPT = (
    "You are solving a CAPTCHA puzzle on a web page of 1280x1080 pixels. You see screenshots only. "
    "Use the tools to act on the page: click, drag, hold and type_text take page pixel coordinates; "
    "screenshot shows you the page again. Read the instruction at the top of the page. Press the "
    "Submit button when you are done (some puzzles submit by themselves). You have at most "
    f"{MAX_TURNS} turns."
)


class Provider(Protocol):
    async def decide(self, messages: list[dict]) -> dict:
        """The assistant message (with tool_calls) for the conversation so far."""


@dataclass
class Episode:
    attempt_uid: str
    turns: int = 0
    tool_calls: list[dict] = field(default_factory=list)
    problem: str = ""


class ReplayProvider:
    """Plays a puzzle's reference answer as tool calls, one per turn (tests the harness end to end)."""

    def __init__(self, actions: list[dict]):
        self.actions = list(actions)

    async def decide(self, messages: list[dict]) -> dict:
        if not self.actions:
            return {"role": "assistant", "content": "done"}
        action = self.actions.pop(0)
        call = {
            "id": f"call_{len(messages)}",
            "type": "function",
            "function": {"name": action["action"], "arguments": json.dumps(action["arguments"])},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}


class OpenAIProvider:
    """Chat completions with tool calls against any compatible server (vLLM, SGLang, a hosted API)."""

    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout_s: float = 120):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key, self.timeout_s = model, api_key, timeout_s

    async def decide(self, messages: list[dict]) -> dict:
        body = {"model": self.model, "messages": messages, "tools": TOOLS, "tool_choice": "auto"}
        reply = await asyncio.to_thread(self._post, body)
        try:
            return reply["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise RuntimeError(f"the model server answered without a message: {str(reply)[:200]}") from None

    def _post(self, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"model server error {error.code}: {error.read()[:200]!r}") from None


def _image_message(png: bytes, text: str) -> dict:
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}],
    }


def _parse_call(call: dict) -> tuple[str, dict]:
    """The tool name and arguments of a tool call; ValueError says what is wrong with it."""
    function = call.get("function") or {}
    name = function.get("name")
    if name not in TOOL_NAMES:
        raise ValueError(f"unknown tool {name!r}")
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except ValueError:
        raise ValueError(f"arguments of {name} are not JSON") from None
    if not isinstance(arguments, dict):
        raise ValueError(f"arguments of {name} are not an object")
    return name, arguments


async def run_episode(page, attempt_uid: str, provider: Provider) -> Episode:
    """Up to MAX_TURNS model turns on one attempt's page; ends when the page reports submitted."""
    episode = Episode(attempt_uid)
    await open_attempt(page, attempt_uid)
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT},
        _image_message(await page.screenshot(), "Here is the page. Solve the puzzle."),
    ]
    while episode.turns < MAX_TURNS and not await _submitted(page):
        episode.turns += 1
        message = await provider.decide(messages)
        messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        calls = message.get("tool_calls") or []
        if not calls:
            break
        for number, call in enumerate(calls):
            # Every call gets an answer (the API requires one per call id), only the first few act.
            result = (
                await _act(page, call, episode)
                if number < MAX_CALLS_PER_TURN
                else f"error: at most {MAX_CALLS_PER_TURN} tool calls per turn"
            )
            messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": result})
        if not await _submitted(page):
            messages.append(_image_message(await page.screenshot(), "The page now."))
    return episode


async def _act(page, call: dict, episode: Episode) -> str:
    try:
        name, arguments = _parse_call(call)
        episode.tool_calls.append({"action": name, "arguments": arguments})
        if name == "hold" and not 0 <= int(arguments.get("duration_ms", 0)) <= MAX_HOLD_MS:
            raise ValueError(f"duration_ms must be 0..{MAX_HOLD_MS}")
        if name != "screenshot":
            await perform(page, {"action": name, "arguments": arguments})
            await asyncio.sleep(SETTLE_S)
        return "ok"
    except (ValueError, KeyError, TypeError) as error:  # a bad call is the model's turn wasted, not a crash
        return f"error: {error}"


async def _submitted(page) -> bool:
    return await page.locator('#status[data-state="submitted"]').count() > 0


# --- running many rollouts -------------------------------------------------------------------
@dataclass(frozen=True)
class RolloutResult:
    puzzle_id: int
    attempt_uid: str
    turns: int
    submitted: bool
    correct: bool
    problem: str


def run_agent(
    puzzle_ids: Iterable[int],
    *,
    provider_factory: Callable[[Puzzle], Provider],
    label: str,
    rollouts: int = 1,
    workers: int = 2,
    on_result: Callable[[RolloutResult], None] | None = None,
) -> list[RolloutResult]:
    """K rollouts of an agent on each puzzle, W pages in parallel; each rollout is one attempt."""
    participant = system_participant(kind=Participant.Kind.AGENT, label=label)
    jobs = [puzzle_id for puzzle_id in puzzle_ids for _ in range(rollouts)]
    return on_pages(
        jobs,
        user=participant.user,
        workers=workers,
        on_result=on_result,
        act=lambda page, puzzle_id: _rollout(page, participant, puzzle_id, provider_factory),
    )


async def _rollout(page, participant, puzzle_id, provider_factory) -> RolloutResult:
    puzzle, attempt, provider = await sync_to_async(_prepare)(participant, puzzle_id, provider_factory)
    problem = ""
    try:
        episode = await run_episode(page, attempt.uid, provider)
        turns = episode.turns
        if not await _submitted(page):
            await asyncio.sleep(0.5)  # a last batch may still be on its way
    except Exception as error:  # the model server or the page failed: recorded, the run goes on
        problem, turns = f"{type(error).__name__}: {error}"[:300], 0
    attempt = await sync_to_async(Attempt.objects.get)(pk=attempt.pk)
    return RolloutResult(puzzle.pk, attempt.uid, turns, attempt.is_submitted, attempt.correct is True, problem)


def _prepare(participant, puzzle_id, provider_factory):
    puzzle = Puzzle.objects.get(pk=puzzle_id)
    return puzzle, attempt_start(participant=participant, puzzle=puzzle), provider_factory(puzzle)


def reference_provider(puzzle: Puzzle) -> ReplayProvider:
    puzzle_type = get_type(puzzle.type)
    return ReplayProvider(puzzle_type.compile_actions(puzzle.truth, puzzle_type.layout(puzzle.public)))
