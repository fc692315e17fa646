"""Replay verification: every reference answer, acted out on the live page, scored by the server.

A puzzle is verified only when the server's own verdict on the replay's attempt is correct; the
runner never judges anything itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from playwright.async_api import Page

from annotation.agents.browser import on_pages, open_attempt, perform, wait_submitted
from annotation.live.attempts import attempt_start, system_participant
from annotation.models import Attempt, Participant
from puzzles.jobs.outages import check_not_restarted, services_seen
from puzzles.models import Puzzle
from puzzles.registry import get_type
from puzzles.services import replay_record

VERDICT_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class ReplayOutcome:
    puzzle_id: int
    verified: bool
    reason: str


def replay_puzzles(
    puzzle_ids: Iterable[int], *, workers: int = 4, on_result: Callable[[ReplayOutcome], None] | None = None
) -> list[ReplayOutcome]:
    """Replay each puzzle's reference answer in W parallel pages; record and return the outcomes.

    A replay that fails while the database or the broker restarts may have failed for the outage
    (the page could not load, its submit was not scored in time): it is not recorded, and
    ServicesRestarted is raised instead, so a job's chunk is tried again (puzzles/jobs/runs.py) and
    a command says to run again. A puzzle is set aside as failed only for a failure of its own."""
    participant = system_participant(kind=Participant.Kind.REPLAY, label="reference answers")
    since = services_seen()
    return on_pages(
        list(puzzle_ids),
        user=participant.user,
        workers=workers,
        on_result=on_result,
        act=lambda page, puzzle_id: _replay_one(page, participant, puzzle_id, since),
    )


async def _replay_one(page: Page, participant: Participant, puzzle_id: int, since: tuple[str, str]) -> ReplayOutcome:
    started = time.monotonic()
    puzzle, attempt, actions = await sync_to_async(_prepare)(participant, puzzle_id)
    problem = None
    try:
        await open_attempt(page, attempt.uid, in_place=True)
        for action in actions:
            await perform(page, action)
        await wait_submitted(page, VERDICT_TIMEOUT_S)
    except Exception as error:  # a page that misbehaves is a failed replay, with its reason
        problem = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:250]
    return await _record(page, puzzle, attempt, problem, time.monotonic() - started, since)


def _prepare(participant: Participant, puzzle_id: int) -> tuple[Puzzle, Attempt, list[dict[str, Any]]]:
    puzzle = Puzzle.objects.get(pk=puzzle_id)
    puzzle_type = get_type(puzzle.type)
    actions = puzzle_type.compile_actions(puzzle.truth, puzzle_type.layout(puzzle.public))
    return puzzle, attempt_start(participant=participant, puzzle=puzzle), actions


async def _record(
    page: Page, puzzle: Puzzle, attempt: Attempt, problem: str | None, seconds: float, since: tuple[str, str]
) -> ReplayOutcome:
    attempt = await sync_to_async(Attempt.objects.get)(pk=attempt.pk)
    verified = problem is None and attempt.correct is True
    if not verified:
        await sync_to_async(check_not_restarted)(since)
    if verified:
        reason = attempt.reason
    else:
        reason = problem or (f"server verdict: {attempt.reason}" if attempt.is_submitted else "no verdict")
    screenshot = None if verified else await _screenshot(page)
    if not verified:  # start the next puzzle from a freshly loaded page, not this one
        await page.goto("about:blank")
    await sync_to_async(replay_record)(
        puzzle=puzzle, verified=verified, reason=reason, attempt_uid=attempt.uid, seconds=seconds, screenshot=screenshot
    )
    return ReplayOutcome(puzzle.pk, verified, reason)


async def _screenshot(page: Page) -> bytes | None:
    try:
        return await page.screenshot()
    except Exception:  # the page may be gone; the reason is recorded anyway
        return None
