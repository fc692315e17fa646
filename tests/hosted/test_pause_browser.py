"""A hosted puzzle's clock in a study, in real Chromium and real time (docs/studies.md, "A hosted
benchmark in a study"): the Pause page stops it, and at the time limit the play page ends the
attempt with no answer sent to the peer.

The pause is waited for (the server's own, timed by its clock); each margin is half the pause or
more, wide enough to tell counted from not on a loaded machine.
"""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async

from annotation.agents.browser import VIEWPORT, chromium, wait_submitted
from annotation.agents.server import live_server
from annotation.hosted.entries import enter, entry_for
from annotation.hosted.pagecheck import benchmark_check, recorder_done
from annotation.live.scoring import NO_CHECK, TIMED_OUT
from annotation.models import Attempt
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.hosted.conftest import BENCHMARK

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LIMIT_S, PAUSE_S = 20, 30
FAMILY = f"{BENCHMARK}:Dice_Roll_Path"


def dice_study(name: str, limit_s: int):
    benchmark_check(name=BENCHMARK)
    return study_create(name=name, split="test", types=[FAMILY], puzzles_per_annotator=1, time_limit_s=limit_s)


async def joined(browser, site: str, token: str, pid: str):
    """A person joins and sees the peer's page in its frame (its puzzle drawn): the page and frame."""
    context = await browser.new_context(viewport=VIEWPORT, base_url=site)
    page = await context.new_page()
    await page.goto(f"/s/{token}/?PROLIFIC_PID={pid}&STUDY_ID=h1")
    await page.get_by_role("button", name="I agree, start").click()
    return page, await framed(page)


async def framed(page):
    frame = await (await page.wait_for_selector("iframe.hosted-frame")).content_frame()
    await frame.wait_for_selector("#user-answer", state="visible")
    return frame


def test_the_pause_page_stops_a_hosted_puzzles_clock(benchmark, standin):
    study = dice_study("Hosted pause", LIMIT_S)

    async def go(site: str) -> str:
        async with chromium() as browser:
            page, frame = await joined(browser, site, study.token, "pauser")
            uid = await page.locator("#stage").get_attribute("data-attempt")
            await page.click(".studybar a.pause")
            await page.wait_for_selector("#resume")
            await asyncio.sleep(PAUSE_S)  # longer than the limit: without the pause, a time-out
            await page.click("#resume")
            frame = await framed(page)
            attempt = await sync_to_async(Attempt.objects.select_related("puzzle").get)(uid=uid)
            covered = await frame.evaluate("document.querySelectorAll('body > [role=status]').length")
            assert not covered, await sync_to_async(_what_the_server_saw)(attempt)  # ended before the answer
            await enter(page, entry_for("number"), attempt.puzzle.truth["answers"], "/api/check_answer", within=frame)
            await recorder_done(frame)
            await wait_submitted(page, 30)
            return uid

    with live_server() as site:
        uid = asyncio.run(go(site))
    attempt = Attempt.objects.get(uid=uid)
    assert attempt.correct is True, attempt.reason  # in time: the pause was not on screen
    (start, end), *_ = attempt.pauses
    assert end - start >= PAUSE_S * 1000 / 2
    assert attempt.screen_ms < LIMIT_S * 1000
    assert attempt.active_ms <= attempt.wall_ms - PAUSE_S * 1000 / 2  # the pause is no active time
    assert attempt.input_ok and attempt.unstored_batches == [] and attempt.missing_batches == []


def _what_the_server_saw(attempt: Attempt) -> str:
    """For a failure's message: the pauses and the page's states as stored."""
    attempt.refresh_from_db()
    states = attempt.events.filter(kind__in=["load", "visibilitychange", "act.submit"]).order_by("seq", "index")
    seen = [(e.seq, e.kind, e.data.get("state"), round(e.t), round(e.received)) for e in states]
    return f"pauses {attempt.pauses}, served {attempt.served_at}, states {seen}, reason {attempt.reason!r}"


def test_at_the_limit_the_play_page_ends_a_hosted_attempt_and_the_peer_is_never_asked(benchmark, standin):
    study = dice_study("Hosted limit", 10)
    _, calls = standin.json("GET", "/_standin/log")
    before = len([c for c in calls if c["route"] == "check"])

    async def go(site: str) -> str:
        async with chromium() as browser:
            page, frame = await joined(browser, site, study.token, "idler")
            uid = await page.locator("#stage").get_attribute("data-attempt")
            await frame.click("#user-answer")
            await page.keyboard.type("12")  # entered, never sent: the limit comes first
            await wait_submitted(page, 60)
            await recorder_done(frame)
            return uid

    with live_server() as site:
        uid = asyncio.run(go(site))
    attempt = Attempt.objects.get(uid=uid)
    assert attempt.correct is False and attempt.reason.startswith(TIMED_OUT) and NO_CHECK in attempt.reason
    _, calls = standin.json("GET", "/_standin/log")
    assert len([c for c in calls if c["route"] == "check"]) == before
    assert Puzzle.objects.get(pk=attempt.puzzle_id).status == Puzzle.Status.VERIFIED
