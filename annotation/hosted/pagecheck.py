"""The page check: each drawn puzzle's truth, played in Chromium on the peer's own page through our
proxy, must be accepted by the peer before any person sees the puzzle (docs/hosted.md).

A puzzle passes when the verdict the proxy stored for its attempt (the peer's own, never the page's)
is correct: it becomes verified. Otherwise it is failed, with the reason in its ReplayCheck. A family
none of whose checked puzzles passed is set aside with the reason; one that cannot be played yet
(entries.CannotPlay) is set aside saying so.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from playwright.async_api import Browser, Frame, Page

from annotation.agents.browser import VIEWPORT, chromium
from annotation.agents.server import live_server
from annotation.attempt_hosts import attempt_origin
from annotation.hosted.entries import CannotPlay, enter, entry_for
from annotation.hosted.registry import HostedError, find_benchmark
from annotation.hosted.verdicts import pin_of
from annotation.live.attempts import attempt_start, system_participant
from annotation.models import Attempt, Benchmark, BenchmarkFamily, HostedCheck, Participant
from puzzles.hosted_names import hosted_dataset, split_hosted_type
from puzzles.models import Puzzle
from puzzles.services import replay_record

PAGE_TIMEOUT_MS = 30_000
CANNOT_SUBMIT = "the page cannot submit a correct answer"
CANNOT_PLAY = "its answer cannot be played on its page yet"


@dataclass(frozen=True)
class PageOutcome:
    puzzle_id: int
    family: str
    source_id: str
    verified: bool
    reason: str
    playable: bool = True


def benchmark_check(
    *, name: str, on_result: Callable[[PageOutcome, int, int], None] | None = None
) -> list[PageOutcome]:
    """Page-check every draft puzzle of the benchmark; families without a passing puzzle are set aside."""
    benchmark = find_benchmark(name)
    puzzles = list(
        Puzzle.objects.filter(dataset=hosted_dataset(name), status=Puzzle.Status.DRAFT).order_by("type", "index", "pk")
    )
    if not puzzles:
        raise HostedError(f"{name} has no puzzle waiting for its page check (benchmarks draw {name} first)")
    participant = system_participant(kind=Participant.Kind.REPLAY, label=f"page check of {name}")
    with live_server() as site:
        outcomes = asyncio.run(_check_all(site, participant, puzzles, on_result))
    _judge_families(benchmark, outcomes)
    return outcomes


async def _check_all(
    site: str,
    participant: Participant,
    puzzles: list[Puzzle],
    on_result: Callable[[PageOutcome, int, int], None] | None,
) -> list[PageOutcome]:
    outcomes = []
    async with chromium() as browser:
        for number, puzzle in enumerate(puzzles, 1):
            outcome = await _check_one(browser, site, participant, puzzle)
            outcomes.append(outcome)
            if on_result:
                on_result(outcome, number, len(puzzles))
    return outcomes


async def _check_one(browser: Browser, site: str, participant: Participant, puzzle: Puzzle) -> PageOutcome:
    started = time.monotonic()
    attempt = await sync_to_async(attempt_start)(participant=participant, puzzle=puzzle)
    context = await browser.new_context(viewport=VIEWPORT)  # the attempt's host keeps its own cookies
    page = await context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    playable, problem, screenshot = True, None, None
    try:
        await play_truth(page, site, attempt, puzzle)
    except CannotPlay as cannot:
        playable, problem = False, f"{CANNOT_PLAY}: {cannot}"
    except Exception as error:  # a page that misbehaves fails its check, with its reason
        problem = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        problem += "".join(f"; {said}" for said in problems[:2])
    verified, reason = await sync_to_async(_verdict)(attempt, problem)
    if not verified:
        screenshot = await _screenshot(page)
    await context.close()
    await sync_to_async(replay_record)(
        puzzle=puzzle,
        verified=verified,
        reason=reason,
        attempt_uid=attempt.uid,
        seconds=time.monotonic() - started,
        screenshot=screenshot,
    )
    family = (split_hosted_type(puzzle.type) or ("", puzzle.type))[1]
    return PageOutcome(puzzle.pk, family, puzzle.source_id, verified, reason, playable)


async def play_truth(page: Page, site: str, attempt: Attempt, puzzle: Puzzle) -> None:
    """Open the attempt's proxied page and enter the puzzle's stored truth as a person would."""
    pin = await sync_to_async(pin_of)(attempt.uid)
    if pin is None:
        raise CannotPlay("the puzzle has no address at its benchmark")
    fetch_paths = {pin.dialect.fetch_route, "/api/get_puzzle"}
    async with page.expect_response(
        lambda response: urlsplit(response.url).path in fetch_paths, timeout=PAGE_TIMEOUT_MS
    ) as fetched:
        await page.goto(attempt_origin(attempt.uid, site) + pin.page, timeout=PAGE_TIMEOUT_MS)
    shown: Any = await (await fetched.value).json()
    if not isinstance(shown, dict) or "error" in shown:
        raise RuntimeError(f"the page's puzzle did not load: {shown!r:.200}")
    entry = entry_for(shown.get("input_type"))
    await enter(page, entry, list(puzzle.truth.get("answers") or []), pin.dialect.check_route)
    await recorder_done(page)


async def recorder_done(page: Page | Frame) -> None:
    """Until our recorder on the page has heard the attempt scored: its events all stored, its submit
    acknowledged (a page that cannot carry the recorder cannot be served to people either)."""
    await page.wait_for_function(SCORED_ON_PAGE, timeout=PAGE_TIMEOUT_MS)


SCORED_ON_PAGE = "() => window.arenaRecorder !== undefined && window.arenaRecorder.state().submitted"


def _verdict(attempt: Attempt, problem: str | None) -> tuple[bool, str]:
    """The peer's verdict as the proxy stored it; the reason a failure is given under."""
    check = HostedCheck.objects.filter(attempt_id=attempt.pk).first()
    finished = check is not None and check.finished_at is not None
    if check is not None and finished and check.correct:
        return True, "the peer accepted the truth entered on its page"
    if problem:
        return False, problem[:300]
    if not finished:
        return False, "the page sent no answer to the peer (or the peer gave no final verdict)"
    reply = check.steps[-1].get("reply") if check is not None and check.steps else None
    said = (reply.get("error") or reply.get("message")) if isinstance(reply, dict) else None
    judged = f"{CANNOT_SUBMIT}: the truth, entered on its page, was judged not correct"
    return False, (judged + (f" ({said})" if said else ""))[:300]


def _judge_families(benchmark: Benchmark, outcomes: list[PageOutcome]) -> None:
    """Each checked family: passed when any of its puzzles passed, otherwise set aside with a reason."""
    for family in dict.fromkeys(outcome.family for outcome in outcomes):
        mine = [outcome for outcome in outcomes if outcome.family == family]
        row = BenchmarkFamily.objects.filter(benchmark=benchmark, family=family).first()
        if row is None:
            continue
        if any(outcome.verified for outcome in mine):
            row.page_check = BenchmarkFamily.PageCheck.PASSED
        else:
            failed = next(outcome for outcome in mine if not outcome.verified)
            row.page_check = BenchmarkFamily.PageCheck.FAILED
            row.status = BenchmarkFamily.Status.SET_ASIDE
            row.reason = f"page check: {failed.reason}"[:500]
        row.save(update_fields=["page_check", "status", "reason"])


async def _screenshot(page: Page) -> bytes | None:
    try:
        return await page.screenshot()
    except Exception:  # the page may be gone; the reason is recorded anyway
        return None
