"""The puzzle's clock stops on the Pause page, in real Chromium and in real time: a 30 s-limit
puzzle paused for 60 s is then solved in time, and its active time leaves the pause out.

The 60 s are waited for: the pause is the server's own (the Pause page served, the puzzle served
again), timed by its clock, and nothing here moves a timestamp. On a loaded machine the page and
the server take their time, so no assertion here holds a duration to a window of seconds: each
margin is half the pause (or the hidden spell) or more, wide enough to tell counted from not."""

import asyncio
import re

import pytest
from asgiref.sync import sync_to_async

from annotation.agents.browser import VIEWPORT, perform, wait_submitted
from annotation.models import Attempt, Study
from annotation.studies.setup import study_create

from .conftest import chromium, run, verified_puzzles
from .test_live_page import reference_actions

pytestmark = pytest.mark.browser
LIMIT_S, PAUSE_S = 30, 60


async def seconds_left(page) -> int:
    """What the study bar's clock shows, in seconds (0 once it is up)."""
    shown = re.fullmatch(r"(\d+):(\d\d) left", await page.locator(".studybar .clock").text_content() or "")
    return int(shown[1]) * 60 + int(shown[2]) if shown else 0


def timed_study(name: str) -> Study:
    """A study of one verified puzzle with a LIMIT_S limit."""
    verified_puzzles(["Dice_Count"], per_type=1, seed=31)
    return study_create(name=name, split="test", puzzles_per_annotator=1, time_limit_s=LIMIT_S)


async def joined(context, token: str, pid: str):
    """A person joins from the invite link, agrees, and looks at the puzzle a moment: the page."""
    page = await context.new_page()
    await page.goto(f"/s/{token}/?PROLIFIC_PID={pid}&STUDY_ID=st1")
    await page.get_by_role("button", name="I agree, start").click()
    await page.wait_for_selector("#stage[data-attempt]")
    await page.wait_for_timeout(2_000)
    return page


async def solved(page) -> str:
    """The puzzle on the page answered with its reference answer; its attempt's uid."""
    uid = await page.locator("#stage").get_attribute("data-attempt")
    attempt = await sync_to_async(Attempt.objects.select_related("puzzle").get)(uid=uid)
    for action in reference_actions(attempt.puzzle):
        await perform(page, action)
    await wait_submitted(page, 15)
    return uid


async def pause_and_solve(site: str, token: str) -> dict:
    async with chromium() as browser:
        context = await browser.new_context(viewport=VIEWPORT, base_url=site)
        page = await joined(context, token, "pauser")
        before = await seconds_left(page)
        await page.click(".studybar a.pause")
        await page.wait_for_selector("#resume")
        stopped = " ".join(await page.locator("#clock-stopped").all_text_contents())
        await asyncio.sleep(PAUSE_S)
        await page.click("#resume")
        await page.wait_for_selector("#stage[data-attempt]")
        after = await seconds_left(page)
        await page.wait_for_timeout(3_000)
        ticking = await seconds_left(page)
        uid = await solved(page)
        status = await page.locator("#status").text_content()
        await context.close()
    return {"before": before, "after": after, "ticking": ticking, "stopped": stopped, "status": status, "uid": uid}


def test_a_30_s_puzzle_paused_for_60_s_is_solved_in_time_and_the_pause_is_not_active_time(site, transactional_db):
    study = timed_study("Paused")

    seen = run(pause_and_solve(site, study.token))

    attempt = Attempt.objects.get(uid=seen["uid"])
    assert attempt.correct and attempt.reward == 1.0 and attempt.input_ok, attempt.reason
    assert "Time is up" not in seen["status"]
    # The page's countdown stood still through the pause (had it run, nothing would be left) and
    # runs again after it. It may stand a second or two off the paused one on a loaded machine:
    # each page counts from when it asked for its data, a moment before the server served it, and
    # resumes from the server's on-screen time, which starts at serving.
    assert 0 < seen["before"] <= LIMIT_S
    assert abs(seen["after"] - seen["before"]) < LIMIT_S / 4
    assert seen["ticking"] < seen["after"]
    assert "clock is stopped" in seen["stopped"]
    [(start, end)] = attempt.pauses
    assert end - start >= PAUSE_S * 1000  # the server's own pause
    served_to_submit = attempt.submitted_at.timestamp() * 1000 - attempt.served_at.timestamp() * 1000
    assert served_to_submit > PAUSE_S * 1000  # the limit's 30 s passed on the wall clock...
    assert attempt.screen_ms < LIMIT_S * 1000  # ...but not on screen
    # Active time leaves the pause out, by a wide margin.
    assert attempt.wall_ms > PAUSE_S * 1000 and attempt.wall_ms - attempt.active_ms > PAUSE_S * 1000 / 2


# Headless Chromium keeps every page visible, so the page is told it is hidden as a browser tells
# it: document.visibilityState and a visibilitychange event. Everything after that is the page's
# own (no beats while hidden, its countdown, its events) and the server's.
SET_VISIBILITY = """state => {
  Object.defineProperty(document, 'visibilityState', {value: state, configurable: true});
  Object.defineProperty(document, 'hidden', {value: state === 'hidden', configurable: true});
  document.dispatchEvent(new Event('visibilitychange'));
}"""
HIDDEN_S = 12


async def hide_and_solve(site: str, token: str) -> dict:
    async with chromium() as browser:
        context = await browser.new_context(viewport=VIEWPORT, base_url=site)
        page = await joined(context, token, "tabber")
        before = await seconds_left(page)
        await page.evaluate(SET_VISIBILITY, "hidden")
        await asyncio.sleep(HIDDEN_S)
        while_hidden = await seconds_left(page)
        await page.evaluate(SET_VISIBILITY, "visible")
        await page.wait_for_timeout(300)
        after = await seconds_left(page)
        uid = await solved(page)
        await context.close()
    return {"before": before, "while_hidden": while_hidden, "after": after, "uid": uid}


def test_the_clock_stands_still_while_the_page_is_hidden_on_the_page_and_on_the_server(site, transactional_db):
    study = timed_study("Tabbed")

    seen = run(hide_and_solve(site, study.token))

    attempt = Attempt.objects.get(uid=seen["uid"])
    assert attempt.correct and attempt.input_ok, attempt.reason
    # The countdown stood still while hidden (had it run, it would show HIDDEN_S fewer).
    assert seen["before"] - HIDDEN_S / 2 < seen["while_hidden"] <= seen["before"]
    assert seen["before"] - HIDDEN_S / 2 < seen["after"] <= seen["before"]
    served_to_submit = attempt.submitted_at.timestamp() * 1000 - attempt.served_at.timestamp() * 1000
    # The server left the hidden spell out too: at least half of it, never more than the page
    # said it was hidden (the whole of the time from serving to submit otherwise).
    left_out = served_to_submit - attempt.screen_ms
    assert HIDDEN_S * 1000 / 2 < left_out < served_to_submit
