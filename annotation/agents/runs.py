"""Runs: one AgentRun is one run of a model, behind a protocol, on a fixed list of puzzles.

`run_create` fixes everything up front: the model, the server, the protocol and its settings,
the dataset and split, the puzzles in order and k rollouts each (pending Rollout rows), and the
agent participant whose attempts are the run's. `run_execute` plays the pending rollouts in W
pages of one Chromium, puzzle by puzzle (each rollout its own attempt and a freshly loaded page,
scored by the server as people are); resuming a run is executing it again. A rollout ends as
done, no_action (the model never produced a usable action: counted as not submitted) or failed
(the model server after its retries, or the page: left out of Pass@k, with its reason). A run
played by `agent run` holds each rollout it starts through its PlayerProcess: one left open by a
run that was killed is failed with the reason when the run is resumed, or by the beat's sweep
(annotation/agents/players.py); `--retry-failed` plays it again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from playwright.async_api import Page

from annotation.agents.browser import NotSubmitted, on_pages, wait_submitted
from annotation.agents.episode import MAX_STEPS, Agent, Episode, run_episode, submitted
from annotation.agents.model import ChatClient, ModelUnavailable
from annotation.agents.players import holding, rollouts_abandoned_fail
from annotation.agents.prompts import PromptSource
from annotation.agents.protocols import PROTOCOLS
from annotation.agents.published import puzzle_file_id, type_folder
from annotation.agents.trajectories import Recorder, forget
from annotation.live.attempts import attempt_start, system_participant
from annotation.models import AgentRun, Participant, Rollout

VERDICT_TIMEOUT_S = 15.0
DEFAULT_SETTINGS = {
    "max_steps": MAX_STEPS,
    "max_tokens": 12000,
    "context": "published",
    "retries": 2,
    "timeout_s": 600.0,
    "disable_thinking": False,
    "api_key_env": "OPENAI_API_KEY",
    "prompt": {},
}


@dataclass(frozen=True)
class RolloutResult:
    rollout_id: int
    puzzle_id: int
    status: str
    submitted: bool
    correct: bool
    reason: str


def run_create(
    *,
    name: str,
    model: str,
    base_url: str,
    protocol: str,
    dataset: str,
    split: str,
    puzzle_ids: list[int],
    rollouts: int,
    settings: dict[str, Any],
) -> AgentRun:
    """A new run with its rollouts pending; nothing is played yet."""
    with transaction.atomic():
        run = AgentRun.objects.create(
            name=name,
            source=AgentRun.Source.HARNESS,
            model=model,
            base_url=base_url,
            protocol=protocol,
            dataset=dataset,
            split=split,
            puzzles=list(puzzle_ids),
            rollouts_per_puzzle=rollouts,
            settings={**DEFAULT_SETTINGS, **settings},
        )
        run.participant = system_participant(kind=Participant.Kind.AGENT, label=f"run {run.pk}: {model}")
        run.save(update_fields=["participant"])
        Rollout.objects.bulk_create(
            Rollout(run=run, puzzle_id=puzzle, index=index) for puzzle in puzzle_ids for index in range(rollouts)
        )
    return run


def run_tokens(run: AgentRun) -> dict[str, int]:
    """The tokens a run spent, over all its rollouts (a failed one's turns were paid for too)."""
    totals = run.rollouts.aggregate(tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"))
    return {key: value or 0 for key, value in totals.items()}


@dataclass
class _Player:
    """What every rollout of a run shares."""

    run: AgentRun
    client: ChatClient
    prompt: PromptSource
    process_id: int | None = None  # the PlayerProcess each rollout started is held by

    def agent(self, rollout_id: int) -> Agent:
        settings = self.run.settings
        protocol = PROTOCOLS[self.run.protocol](
            max_tokens=settings["max_tokens"], disable_thinking=settings["disable_thinking"]
        )
        return Agent(protocol, self.client, self.run.model, settings["context"], Recorder(rollout_id))


def run_execute(
    run: AgentRun,
    *,
    api_key: str = "",
    workers: int = 2,
    retry_failed: bool = False,
    rollout_ids: Sequence[int] | None = None,
    on_result: Callable[[RolloutResult], None] | None = None,
) -> list[RolloutResult]:
    """Play the run's pending rollouts (and its failed ones, with retry_failed), or those of
    rollout_ids still pending (a job's chunk); returns their results."""
    rollouts_abandoned_fail(run=run)  # a killed run's open rollouts, before a retry may take them up
    if retry_failed:
        run.rollouts.filter(status=Rollout.Status.FAILED).update(status=Rollout.Status.PENDING, player=None)
    settings = run.settings
    player = _Player(
        run,
        ChatClient(
            base_url=run.base_url, api_key=api_key, retries=settings["retries"], timeout_s=settings["timeout_s"]
        ),
        PromptSource.from_settings(settings["prompt"]),
    )
    order = {puzzle: place for place, puzzle in enumerate(run.puzzles)}
    pending_rollouts = run.rollouts.filter(status=Rollout.Status.PENDING)
    if rollout_ids is not None:
        pending_rollouts = pending_rollouts.filter(pk__in=rollout_ids)
    else:  # one another live `agent run` of this run plays is left to it
        pending_rollouts = pending_rollouts.filter(player__isnull=True)
    pending = pending_rollouts.values_list("pk", "puzzle_id", "index")
    jobs = [pk for pk, puzzle, index in sorted(pending, key=lambda r: (order.get(r[1], len(order)), r[2]))]
    if run.started_at is None:
        run.started_at = timezone.now()
        run.save(update_fields=["started_at"])
    assert run.participant_id is not None  # run_create gives a harness run, the only kind played, its participant
    participant = Participant.objects.select_related("user").get(pk=run.participant_id)
    # A job's chunk holds no player: its job's lease covers a worker that dies (players.py).
    held = holding("agent run") if rollout_ids is None else contextlib.nullcontext()
    with held as process:
        player.process_id = process.pk if process is not None else None
        results = on_pages(
            jobs,
            user=participant.user,
            workers=workers,
            on_result=on_result,
            act=lambda page, rollout_id: _rollout(page, player, rollout_id),
        )
    if not run.rollouts.filter(status=Rollout.Status.PENDING).exists():
        run.finished_at = timezone.now()
        run.save(update_fields=["finished_at"])
    return results


async def _rollout(page: Page, player: _Player, rollout_id: int) -> RolloutResult:
    attempt_uid, prompt = await sync_to_async(_begin)(player, rollout_id)
    episode, failure = Episode(), ""
    try:
        agent, max_steps = player.agent(rollout_id), player.run.settings["max_steps"]
        episode = await run_episode(page, attempt_uid, agent, system_prompt=prompt, max_steps=max_steps)
        if await submitted(page):  # the verdict may still be on its way
            await wait_submitted(page, VERDICT_TIMEOUT_S)
    except ModelUnavailable as error:
        failure = f"model server: {error}"
    except NotSubmitted as error:
        failure = str(error)
    except Exception as error:  # the page or the browser failed: recorded, the run goes on
        failure = f"{type(error).__name__}: {_first_line(error)}"
    return await sync_to_async(rollout_finish)(rollout_id, episode, failure)


def _first_line(error: Exception) -> str:
    text = str(error)
    return text.splitlines()[0] if text else ""


def _begin(player: _Player, rollout_id: int) -> tuple[str, str]:
    """A fresh attempt and system prompt for the rollout (any earlier try of it forgotten)."""
    rollout = Rollout.objects.select_related("puzzle", "run__participant").get(pk=rollout_id)
    forget(rollout)
    puzzle = rollout.puzzle
    prompt = player.prompt.for_puzzle(type_folder(puzzle), puzzle_file_id(puzzle))
    participant = rollout.run.participant
    assert participant is not None  # as in run_execute
    attempt = attempt_start(participant=participant, puzzle=puzzle)
    Rollout.objects.filter(pk=rollout_id).update(
        attempt=attempt,
        started_at=timezone.now(),
        finished_at=None,
        reason="",
        submitted=None,
        correct=None,
        steps=0,
        system_prompt=prompt,
        player_id=player.process_id,
    )
    return attempt.uid, prompt


def rollout_finish(rollout_id: int, episode: Episode, failure: str) -> RolloutResult:
    """The rollout's outcome: the server's verdict on its attempt and how the episode went (the
    harness's rollouts and the training environment's episodes alike)."""
    rollout = Rollout.objects.select_related("attempt").get(pk=rollout_id)
    attempt = rollout.attempt
    submitted = attempt is not None and attempt.is_submitted
    correct = submitted and attempt is not None and attempt.correct is True
    if failure:
        status, reason = Rollout.Status.FAILED, failure
    elif episode.usable == 0:
        status, reason = Rollout.Status.NO_ACTION, f"no usable action ({episode.ended or 'step limit'})"
    else:
        status, reason = Rollout.Status.DONE, episode.ended or f"step limit ({episode.model_calls} model calls)"
    end = "done" if episode.ended else "max_steps_reached"
    Rollout.objects.filter(pk=rollout_id).update(
        status=status,
        reason=reason[:300],
        submitted=submitted,
        correct=correct,
        end=end if submitted else "submit_not_clicked",
        steps=episode.steps,
        tokens_in=episode.tokens_in,
        tokens_out=episode.tokens_out,
        finished_at=timezone.now(),
    )
    return RolloutResult(rollout_id, rollout.puzzle_id, status, submitted, correct, reason)
