"""One connection's episodes, each in its own browser context, acted through the agents' engine.

The page is opened as `agent run` opens it (episode.open_page) and every action is done as a
model's call is (episode.do_call: real mouse and keyboard input, the published waits, a screenshot
after), so an environment episode and a harness rollout are the same thing on the page and in the
database (a Turn per step, screenshots in PRIVATE_ROOT). The episode ends when the page shows its
answer sent, on `done`, or at max_steps; its reward is then read from the server's verdict.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page

from annotation.agents.browser import NotSubmitted, screenshot_png, signed_in_context, wait_submitted
from annotation.agents.episode import Episode, do_call, open_page, submitted
from annotation.agents.protocols.base import Call, Outcome
from annotation.agents.runs import rollout_finish
from annotation.agents.trajectories import Recorder
from annotation.environment.database import database, database_ready
from annotation.environment.episodes import Begun, episode_begin, episode_outcome
from annotation.environment.protocol import (
    EXECUTION_ERROR,
    SESSION_ERROR,
    BadRequest,
    ResetParams,
    action_call,
    action_within,
    reset_params,
    step_bound,
    step_result,
)
from annotation.environment.tokens import token_live
from annotation.models import EnvToken

VERDICT_TIMEOUT_S = 15.0
CLOSE_SLACK_S = 0.5  # of a step's bound, kept to answer after an action that overran it


class TokenRevoked(BadRequest):
    """The session's token was revoked since the connection opened."""

    code = SESSION_ERROR


class StepOverran(BadRequest):
    """A step ran past its bound: it was stopped, and its episode ended as failed."""

    code = EXECUTION_ERROR


@dataclass
class Played:
    """The episode under way in a session."""

    begun: Begun
    params: ResetParams
    context: BrowserContext
    page: Page
    instruction: str
    recorder: Recorder
    screenshots: dict[int, bytes] = field(default_factory=dict)
    record: Episode = field(default_factory=Episode)
    done: bool = False
    verdict: str = ""  # once done: correct, incorrect or unanswered


class Session:
    """A client's connection: at most one episode at a time, in its own browser context."""

    def __init__(self, *, token: EnvToken, browser: Browser, page_base: str, player_id: int | None = None):
        self.token, self.browser, self.page_base = token, browser, page_base
        self.player_id = player_id  # the server's PlayerProcess: it holds the episodes' rollouts
        self.played: Played | None = None
        self.active_at = time.monotonic()  # the last reset or step, begun or answered: idle time counts from it
        self._closing: set[asyncio.Task[None]] = set()

    async def reset(self, data: Any) -> dict[str, Any]:
        self.active_at = time.monotonic()
        try:
            return await self._reset(data)
        finally:
            self.active_at = time.monotonic()

    async def _reset(self, data: Any) -> dict[str, Any]:
        params = reset_params(data)
        await database_ready()  # down: refused now, the episode under way left as it is
        # The token as it is now, not as at the handshake: staff may have revoked it, or changed
        # its datasets, while this connection stayed open.
        token = await database(token_live)(self.token.pk)
        if token is None:
            raise TokenRevoked("this token was revoked: it starts no more episodes")
        self.token = token
        # The new episode is drawn first: a reset refused (its dataset, an empty pool) leaves the
        # episode under way going on.
        begun = await database(episode_begin)(token=self.token, params=params, player_id=self.player_id)
        await self.close("reset before the end")
        self.played = await self._open(begun, params)
        return step_result(self._observation("", ""), None, False)

    async def _open(self, begun: Begun, params: ResetParams) -> Played:
        """The episode's page, open and recorded; if that fails, its rollout is kept as failed and
        its browser context freed, and the error goes on to the client."""
        context = None
        try:
            context = await signed_in_context(self.browser, self.page_base, begun.user)
            page = await context.new_page()
            recorder = Recorder(begun.rollout_id)
            played = Played(begun, params, context, page, "", recorder)
            played.instruction = await open_page(page, begun.attempt_uid)
            played.screenshots[0] = await screenshot_png(page)
            await recorder.screenshot(0, played.screenshots[0])
            await recorder.start(instruction=played.instruction, system_prompt="")
            return played
        except Exception as error:
            failure = f"reset failed: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            await database(rollout_finish)(begun.rollout_id, Episode(), failure)
            if context is not None:
                await context.close()
            raise

    async def step(self, data: Any) -> dict[str, Any]:
        """One action, answered within its bound (protocol.step_bound): an action whose published
        waits do not fit is refused before anything is done; one that overruns all the same (a page
        or browser stuck) is stopped, and its episode ends as failed, so that the answer to this
        step is always this step's and comes before the client gives up on it."""
        self.active_at = time.monotonic()
        played = self.played
        if played is None:
            raise BadRequest("no episode under way: send reset first")
        if played.done:
            raise BadRequest("the episode is over: send reset for the next")
        bound = step_bound(data)
        call = action_call(data)
        action_within(call, bound)
        try:
            return await asyncio.wait_for(self._step(played, call), bound - min(CLOSE_SLACK_S, bound / 4))
        except TimeoutError:
            why = f"the step ran past its bound of {bound:g} s"
            self._end_later(why)
            raise StepOverran(f"{why}: it was stopped and the episode ended (kept as failed); send reset") from None
        finally:
            self.active_at = time.monotonic()

    async def _step(self, played: Played, call: Call) -> dict[str, Any]:
        await database_ready()  # down: refused before the page is touched, and the step not counted
        number, seen = played.record.model_calls, max(played.screenshots)
        if call.name == "done":
            outcome = Outcome(call, "agent_done")
        else:
            outcome = await do_call(played.page, call, played.screenshots, played.recorder)
            played.record.usable += 1
        played.record.model_calls += 1
        played.record.steps += 1
        ended = await self._ended(call.name)
        await played.recorder.turn(number, seen=seen, request=[], completion=None, outcomes=[outcome])
        if not ended and played.record.model_calls >= played.params.max_steps:
            ended = "step limit"
        if not ended:
            return step_result(self._observation(outcome.result, ""), None, False)
        reward = await self._finish(ended)
        return step_result(self._observation(outcome.result, ended), reward, True)

    async def _ended(self, action: str) -> str:
        """Why the episode ends after this action ("" when it goes on)."""
        if action == "done":
            return "done"
        played = self.played
        assert played is not None  # step() asks only with an episode under way
        if action != "screenshot" and await submitted(played.page):
            return "submitted"
        return ""

    async def _finish(self, ended: str) -> float:
        played = self.played
        assert played is not None
        failure = ""
        if await submitted(played.page):  # the verdict may still be on its way
            try:
                await wait_submitted(played.page, VERDICT_TIMEOUT_S)
            except NotSubmitted as error:
                failure = str(error)
        played.record.ended = "" if ended == "step limit" else ended
        played.done = True
        await database(rollout_finish)(played.begun.rollout_id, played.record, failure)
        reward, played.verdict = await database(episode_outcome)(played.begun.rollout_id)
        return reward

    def state(self) -> dict[str, Any]:
        played = self.played
        if played is None:
            return {"episode_id": None, "step_count": 0}
        begun = played.begun
        return {
            "episode_id": played.params.episode_id or str(begun.rollout_id),
            "step_count": played.record.model_calls,
            "puzzle": begun.puzzle_uid,
            "type": begun.type,
            "dataset": begun.dataset,
            "split": begun.split,
            "group": played.params.group,
            "run": begun.run,
            "rollout": begun.rollout_id,
            "done": played.done,
        }

    def _observation(self, result: str, ended: str) -> dict[str, Any]:
        played = self.played
        assert played is not None
        return {
            "screenshot": base64.b64encode(played.screenshots[max(played.screenshots)]).decode(),
            "instruction": played.instruction,
            "step": played.record.model_calls,
            "max_steps": played.params.max_steps,
            "result": result,
            "ended": ended,
            "verdict": played.verdict,
        }

    async def close(self, why: str) -> None:
        """End the session's episode: an unfinished one is kept as a failed rollout (`why`), with
        every turn and screenshot already stored; its browser context is freed."""
        played, self.played = self.played, None
        if self._closing:  # an episode ended by an overrun step: its close finishes first
            await asyncio.gather(*self._closing, return_exceptions=True)
        if played is not None:
            await _end(played, why)

    def _end_later(self, why: str) -> None:
        """End the episode after this step's answer has gone out: closing a stuck page can take time."""
        played, self.played = self.played, None
        if played is not None:
            task = asyncio.ensure_future(_end(played, why))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)


async def _end(played: Played, why: str) -> None:
    try:
        if not played.done:
            await database(rollout_finish)(played.begun.rollout_id, played.record, f"closed: {why}")
    finally:
        with contextlib.suppress(Exception):  # a browser gone takes its contexts with it
            await played.context.close()
