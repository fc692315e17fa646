"""The reasoning fill (optional, off by default): a model writes a short reasoning text for each
step of a person's trajectory, a second call judges it, and only texts that pass both are kept.

Per step, the writer (an OpenAI-compatible chat completions server, `--reason-with BASE_URL
--model M`) gets the task, the page before and after the step, and what the step did in the
task's words ("picked the tile in row 2, column 3", "submitted the answer"): never a coordinate.
Its text is then:
1. dropped when it names coordinates or pixel positions (COORDINATES, checked here: a text that
   points by numbers teaches a model nothing a screenshot shows), or is empty or too long;
2. judged by a second call (`--judge-model`, the same model by default) that answers JSON:
   consistent with the step and the screenshots, and not leaking the answer (stating it as
   known rather than read off the page); dropped unless consistent and not leaking.
A text kept becomes the step's `reasoning` (metafile.json) and its <think> (sft_data.json);
every text asked for, kept or not and why, is in arena_reasoning.json. A model server that fails
(after the chat client's retries) leaves the step without reasoning; the export goes on.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import TYPE_CHECKING, Any

from annotation.agents.model import ChatClient, ModelUnavailable

if TYPE_CHECKING:  # trajectories passes its steps in; importing it here would be circular
    from annotation.datasets.trajectories import Step

MAX_CHARS = 600
MAX_TOKENS = 400
COORDINATES = re.compile(
    r"""
    \(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)    # (412, 300)
    | \b[xy]\s*[=:]\s*-?\d                              # x=412, y: 300
    | \b\d+(?:\.\d+)?\s*(?:px|pixels?)\b                # 412px, 30 pixels
    | \bcoordinates?\b
    | \b(?:start|end)_[xy]\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
WRITER = (
    "You write the short reasoning a person has in mind while taking one step of solving a CAPTCHA "
    "puzzle on a web page. You are given the task, the page before the step, the page after it, and "
    "what the step did. Write one to three sentences in the language of the task, in the first person, "
    "about what you see and why this step helps. Never give coordinates, pixel positions or numbers "
    "that locate things on the page: name things by what they look like and where they are. Do not "
    "state the answer as known unless it can be read off the page before the step. Reply with the "
    "text only."
)
JUDGE = (
    "You check a reasoning text written for one step of solving a puzzle on a web page. You are given "
    "the task, the step, the page before and after it, and the text. Reply with JSON only: "
    '{"consistent": true or false, "leaks_answer": true or false, "reason": "..."}. consistent: the '
    "text fits what the pages show and the step taken. leaks_answer: the text states the answer as "
    "known instead of reading it off the page (for example 'the correct answer is', 'the solution "
    "says'), or gives coordinates or pixel positions."
)


def names_coordinates(text: str) -> bool:
    return COORDINATES.search(text) is not None


class Reasoner:
    """Writes and judges the reasoning of a trajectory's steps, a few calls at a time."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        judge_model: str | None = None,
        api_key: str = "",
        retries: int = 2,
        timeout_s: float = 120.0,
        parallel: int = 4,
    ):
        self.client = ChatClient(base_url=base_url, api_key=api_key, retries=retries, timeout_s=timeout_s)
        self.base_url, self.model, self.judge_model = base_url, model, judge_model or model
        self.parallel = parallel

    def describe(self) -> dict:
        return {"base_url": self.base_url, "model": self.model, "judge_model": self.judge_model, "rules": __doc__}

    async def fill_steps(self, *, instruction: str, shots: list[bytes], steps: list[str]) -> list[dict]:
        """One record per step: {step, description, text, kept, why}; shots[n] is the page after
        step n (shots[0] before the first)."""
        gate = asyncio.Semaphore(self.parallel)

        async def one(number: int, description: str) -> dict:
            async with gate:
                return await self.reason(
                    instruction=instruction,
                    number=number,
                    total=len(steps),
                    description=description,
                    before=shots[number - 1],
                    after=shots[number],
                )

        return list(await asyncio.gather(*(one(n, d) for n, d in enumerate(steps, start=1))))

    async def reason(
        self, *, instruction: str, number: int, total: int, description: str, before: bytes, after: bytes
    ) -> dict:
        record: dict[str, Any] = {"step": number, "description": description, "text": "", "kept": False}
        step = f"Task: {instruction}\nStep {number} of {total}: {description}"
        try:
            written = await self.client.complete(_body(self.model, WRITER, step, before, after))
        except ModelUnavailable as error:
            return record | {"why": f"writer: {error}"}
        text = THINK.sub("", written.message.get("content") or "").strip()
        record["text"] = text
        if not text:
            return record | {"why": "no text"}
        if names_coordinates(text):
            return record | {"why": "names coordinates"}
        if len(text) > MAX_CHARS:
            return record | {"why": f"longer than {MAX_CHARS} characters"}
        try:
            judged = await self.client.complete(
                _body(self.judge_model, JUDGE, f"{step}\nReasoning text: {text}", before, after)
            )
        except ModelUnavailable as error:
            return record | {"why": f"judge: {error}"}
        verdict = _verdict(judged.message.get("content") or "")
        if verdict is None:
            return record | {"why": "the judge's answer is not the JSON asked for"}
        record["judge"] = verdict
        if not verdict["consistent"]:
            return record | {"why": f"inconsistent: {verdict.get('reason', '')}".strip()}
        if verdict["leaks_answer"]:
            return record | {"why": f"leaks the answer: {verdict.get('reason', '')}".strip()}
        return record | {"kept": True, "why": ""}


def _body(model: str, system: str, text: str, before: bytes, after: bytes) -> dict:
    return {
        "model": model,
        "max_tokens": MAX_TOKENS,
        "messages": [
            {"role": "system", "content": system},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": text + "\nThe page before the step, then after it:"},
                    _image(before),
                    _image(after),
                ],
            },
        ],
    }


def _image(png: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()}}


def _verdict(content: str) -> dict | None:
    """The judge's JSON (a code fence or words around it allowed); None when it is not there."""
    found = re.search(r"\{.*\}", THINK.sub("", content), re.DOTALL)
    try:
        verdict = json.loads(found.group(0)) if found else None
    except ValueError:
        return None
    if not isinstance(verdict, dict):
        return None
    if not isinstance(verdict.get("consistent"), bool) or not isinstance(verdict.get("leaks_answer"), bool):
        return None
    return verdict


# --- what a step did, in the task's words -----------------------------------------------------
def step_description(step: Step, action: tuple[str, dict, str], grid: list[int] | None) -> str:
    """A step as a person would say it, from the semantic actions the page logged: never a
    coordinate (the writer must not learn to point by numbers)."""
    said: list[str] = []
    typed = [a["text"] for a in step.acts if a["k"] == "act.type"]
    for act in step.acts:
        phrase = _phrase(act, grid, step)
        if phrase and phrase not in said:
            said.append(phrase)
    if typed:
        said.insert(0, f'typed "{typed[-1]}" into the answer box')
    if said:
        return "; ".join(said)
    name = action[0]
    if name == "type_text":
        return f'typed "{action[1]["text"]}"'
    if name == "press_key":
        return f"pressed the {action[1]['key']} key"
    return {"drag": "dragged on the page", "hold": "held the pointer down"}.get(name, "clicked where nothing changed")


def _phrase(act: dict, grid: list[int] | None, step: Step) -> str:
    kind = act["k"]
    if kind == "act.click":
        return "clicked on the picture"
    if kind == "act.toggle":
        return f"picked {_cell(act['cell'], grid)}"
    if kind == "act.swap":
        return f"swapped {_cell(act['a'], grid)} and {_cell(act['b'], grid)}"
    if kind == "act.cycle":
        return "pressed the next arrow" if act.get("delta", 1) > 0 else "pressed the previous arrow"
    if kind == "act.reset":
        return "pressed Reset Clicks"
    if kind == "act.drag_end":
        return "slid the piece along its row and let go"
    if kind == "act.hold_end":
        return f"held the HOLD button for {step.duration_ms / 1000:.1f} seconds"
    if kind == "act.submit":
        return "submitted the answer"
    return ""


def _cell(index: int, grid: list[int] | None) -> str:
    if not grid:
        return f"tile {index + 1}"
    cols = grid[1]
    return f"the tile in row {index // cols + 1}, column {index % cols + 1}"
