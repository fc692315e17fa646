"""One rollout on the live page, turn by turn, as the published client plays it.

The page is loaded and given 2 s, as published, then waited for until its stage and images are
there; the instruction is read from the page once; the first screenshot is taken at once. Then
each turn: the history, bounded by the run's context policy, goes to the model; the reply's
calls are done on the page (actions.py); each executed call is followed by a screenshot, after
800 ms unless it was a screenshot call.

The episode ends, as published, at the first of: a reply with no call; a `done` call; a page
that shows its answer submitted after an action (a screenshot call never checks); the step limit
(30 model calls by default). A call the native protocol cannot execute ends it too (the published
client crashes there and leaves the rollout out; we count it, see docs/agents.md). The model
server failing after its retries raises ModelUnavailable out of the episode: the rollout failed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from playwright.async_api import Page

from annotation.agents.actions import SETTLE_MS, BadCall, applied, execute
from annotation.agents.browser import READY, screenshot_png
from annotation.agents.context import CONTEXTS
from annotation.agents.model import ChatClient, ModelUnavailable
from annotation.agents.protocols.base import Call, Outcome, Protocol
from annotation.agents.trajectories import Recorder, wire

LOAD_WAIT_S = 2.0  # after loading the page, before anything else, as published
READY_TIMEOUT_MS = 15_000
MAX_STEPS = 30
SUBMITTED_STATES = ("submitting", "submitted")  # the page's status once its answer is sent
READ_INSTRUCTION = """() => (document.querySelector('#stage [data-role="instruction"]')?.textContent || '').trim()"""
IMAGES_LOADED = "() => Array.from(document.images).every((image) => image.complete)"


@dataclass
class Episode:
    """How an episode went: why it stopped, what it did and what it cost."""

    ended: str = ""  # "no call", "done", "submitted", "invalid call: ...", or "" at the step limit
    steps: int = 0  # calls executed, a `done` included (the published total_steps)
    usable: int = 0  # calls that acted or looked (not done, not answered as errors)
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass
class Agent:
    """Who plays a rollout: the protocol, the model server and model, the context policy, and
    where its turns are recorded."""

    protocol: Protocol
    client: ChatClient
    model: str
    context: str
    recorder: Recorder


async def open_page(page: Page, attempt_uid: str) -> str:
    """Load the attempt's page as the published client loads one; returns the instruction."""
    await page.goto(f"/play/{attempt_uid}/", wait_until="domcontentloaded")
    await asyncio.sleep(LOAD_WAIT_S)
    await page.wait_for_selector(READY.format(uid=attempt_uid), state="attached", timeout=READY_TIMEOUT_MS)
    await page.wait_for_function(IMAGES_LOADED, timeout=READY_TIMEOUT_MS)
    return await page.evaluate(READ_INSTRUCTION)


async def submitted(page: Page) -> bool:
    return await page.locator("#status").get_attribute("data-state") in SUBMITTED_STATES


async def run_episode(
    page: Page, attempt_uid: str, agent: Agent, *, system_prompt: str, max_steps: int = MAX_STEPS
) -> Episode:
    """Play one rollout; returns its Episode. Raises ModelUnavailable when the model server fails."""
    episode = Episode()
    instruction = await open_page(page, attempt_uid)
    screenshots = {0: await screenshot_png(page)}
    await agent.recorder.screenshot(0, screenshots[0])
    await agent.recorder.start(instruction=instruction, system_prompt=system_prompt)
    history = agent.protocol.first_messages(system_prompt, instruction, 0)
    for number in range(max_steps):
        latest = max(screenshots)
        request = CONTEXTS[agent.context](history)
        body = agent.protocol.body(agent.model, wire(request, screenshots))
        try:
            completion = await agent.client.complete(body)
        except ModelUnavailable as error:
            await agent.recorder.turn(
                number,
                seen=latest,
                request=request,
                completion=None,
                outcomes=[],
                error=str(error),
                retries=error.retries,
                latency_ms=error.latency_ms,
            )
            raise
        episode.model_calls += 1
        episode.tokens_in += completion.tokens_in or 0
        episode.tokens_out += completion.tokens_out or 0
        history.append(agent.protocol.assistant(completion.message, number))
        outcomes, ended = await _act(page, agent, agent.protocol.calls(completion.message), screenshots)
        await agent.recorder.turn(number, seen=latest, request=request, completion=completion, outcomes=outcomes)
        episode.steps += sum(1 for o in outcomes if not o.error)
        episode.usable += sum(1 for o in outcomes if not o.error and o.call.name != "done")
        if ended:
            episode.ended = ended
            break
        history += agent.protocol.answer(outcomes, max(screenshots))
    return episode


async def _act(page: Page, agent: Agent, calls: list[Call], screenshots: dict[int, bytes]) -> tuple[list[Outcome], str]:
    """Do a reply's calls; returns their outcomes and why the episode ends ("" when it goes on)."""
    if not calls:
        return [], "no call"
    protocol = agent.protocol
    outcomes: list[Outcome] = []
    for number, call in enumerate(calls):
        if number >= protocol.max_calls:
            outcomes.append(Outcome(call, f"error: at most {protocol.max_calls} calls per reply", error=True))
            continue
        if call.name == "done":
            outcomes.append(Outcome(call, "agent_done"))
            return outcomes, "done"
        outcome = await do_call(page, call, screenshots, agent.recorder)
        outcomes.append(outcome)
        if outcome.error and protocol.bad_call_ends_episode:
            return outcomes, f"invalid call: {outcome.result.removeprefix('error: ')}"
        if not outcome.error and call.name != "screenshot" and await submitted(page):
            return outcomes, "submitted"
    return outcomes, ""


async def do_call(page: Page, call: Call, screenshots: dict[int, bytes], recorder: Recorder) -> Outcome:
    """One call: executed, waited for and followed by a screenshot; or answered as an error.
    A model's turn here and a training environment's step (annotation/environment) both act so."""
    if call.problem:
        return Outcome(call, f"error: {call.problem}", error=True)
    if call.name == "screenshot":
        return Outcome(call, "screenshot_taken", applied={}, screenshot=await _shoot(page, screenshots, recorder))
    try:
        arguments = applied(call.name, call.arguments)
        result = await execute(page, call.name, arguments)
    except BadCall as error:
        return Outcome(call, f"error: {error}", error=True)
    await asyncio.sleep(SETTLE_MS / 1000)
    return Outcome(call, result, applied=arguments, screenshot=await _shoot(page, screenshots, recorder))


async def _shoot(page: Page, screenshots: dict[int, bytes], recorder: Recorder) -> int:
    step = max(screenshots) + 1
    screenshots[step] = await screenshot_png(page)
    await recorder.screenshot(step, screenshots[step])
    return step
