"""The page's own faults in real Chromium: what a page could not deliver is not lost."""

import asyncio
import contextlib
import time

import pytest
from django.conf import settings
from playwright.async_api import Error as PlaywrightError

from annotation.agents.browser import open_attempt, perform, wait_submitted
from annotation.live.attempts import attempt_start
from annotation.live.frames import SEQ_BLOCK
from annotation.models import Attempt, Event
from puzzles.registry import get_type
from tests.e2e.conftest import chromium, page_for, run
from tests.faults import report
from tests.faults.harness import GENERATOR, PER_TICK, STATE, tally

pytestmark = pytest.mark.browser

# Until the test lifts it (a sessionStorage flag of this tab), nothing leaves the page: the socket
# swallows what it is given and every beacon is refused, as when the browser's quota is full.
CUT_OFF = """
if (!sessionStorage.getItem("test:healthy")) {
  WebSocket.prototype.send = function () {};
  navigator.sendBeacon = () => false;
}
"""


def test_batches_behind_a_refused_beacon_are_sent_on_the_next_load(site, puzzles_of, annotator):
    puzzle = puzzles_of("Object_Match")[0]
    user, _ = annotator()
    layout = get_type(puzzle.type).layout(puzzle.public)
    x, y = layout.control("next").center()
    submit_x, submit_y = layout.control("submit").center()
    row = report.row("beacons refused at pagehide, then a reload", "the wait: from the reload to the last ack")

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle, init_script=CUT_OFF + GENERATOR)
            await page.evaluate(f"window.__gen.start({PER_TICK})")  # numbered events, none delivered
            await perform(page, {"action": "click", "arguments": {"x": round(x), "y": round(y)}})
            await page.wait_for_timeout(500)
            generated = await page.evaluate("window.__gen.stop()")
            made = await page.evaluate(f"{STATE}.nextSeq - 1")
            await page.evaluate("sessionStorage.setItem('test:healthy', '1')")
            await page.goto("/")  # pagehide: the beacons are refused
            reloaded = time.monotonic()
            await open_attempt(page, attempt.uid)  # the same tab: its saved batches come back
            await page.wait_for_function(f"{STATE}.pending === 0", timeout=30000)
            waited = time.monotonic() - reloaded
            await perform(page, {"action": "click", "arguments": {"x": round(submit_x), "y": round(submit_y)}})
            await wait_submitted(page, 20)
            return attempt, made, generated, waited

    attempt, made, generated, waited = run(scenario())
    attempt = Attempt.objects.get(pk=attempt.pk)
    counted = tally(attempt, generated)
    row.add(counted, scored=attempt.submitted_at is not None, recovery_s=waited)
    assert made >= 1 and generated >= PER_TICK
    assert (counted["lost"], counted["duplicated"], counted["strangers"]) == (0, 0, []), counted
    stored = set(Event.objects.filter(attempt=attempt).values_list("seq", flat=True))
    first = {seq for seq in stored if seq < SEQ_BLOCK}
    # every batch of the first page arrived, late (those it cut at pagehide too), no gap
    assert set(range(1, made + 1)) <= first and first == set(range(1, max(first) + 1))
    reload = sorted(stored - first)  # the reload's own range, from its start, no gap
    assert reload == list(range(SEQ_BLOCK + 1, SEQ_BLOCK + 1 + len(reload))) and attempt.submitted_at is not None
    assert not Event.objects.filter(attempt=attempt, kind=Event.REFUSED).exists()


# Nothing leaves this browser: sockets swallow what they are given, beacons are refused (a page
# behind an outage). The next browser, on the same profile, has no such script.
OUTAGE = """
WebSocket.prototype.send = function () {};
navigator.sendBeacon = () => false;
"""


async def _profile_browser(playwright, profile, site: str, session: str):
    """Chromium on a profile of its own (kept on disk between browsers), signed in."""
    from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

    context = await playwright.chromium.launch_persistent_context(
        profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport=VIEWPORT, base_url=site
    )
    await context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": site}])
    return context


async def _batches_left_unacknowledged(page) -> tuple[int, int]:
    """Numbered events for 1.5 s on a page in an outage, cut into batches none of which is
    acknowledged; (batches made, events generated)."""
    await page.evaluate(f"window.__gen.start({PER_TICK})")
    await page.wait_for_timeout(1500)
    generated = await page.evaluate("window.__gen.stop()")
    await page.wait_for_timeout(300)  # the last events cut into a batch: no unsent tail
    made = await page.evaluate(f"{STATE}.nextSeq - 1")
    assert (await page.evaluate(STATE))["acked"] == 0
    return made, generated


async def _acknowledged_after(page, since: float) -> float:
    """Seconds from `since` until the page has every batch acknowledged, those an earlier load
    left among them (they keep their numbers; this load numbers in a range of its own)."""
    await page.wait_for_function(f"{STATE}.pending === 0", timeout=30000)
    return time.monotonic() - since


def _nothing_lost(attempt, row, made: int, generated: int, waited: float) -> None:
    attempt = Attempt.objects.get(pk=attempt.pk)
    counted = tally(attempt, generated)
    row.add(counted, scored=False, recovery_s=waited)
    assert made >= 10 and generated >= 10 * PER_TICK
    assert (counted["lost"], counted["duplicated"], counted["strangers"]) == (0, 0, []), counted
    assert set(range(1, made + 1)) <= set(Event.objects.filter(attempt=attempt).values_list("seq", flat=True))


def test_a_closed_browser_leaves_its_batches_for_the_next_visit_of_the_attempt(site, puzzles_of, annotator, tmp_path):
    """The browser is closed during an outage with batches unacknowledged; the attempt opened in a
    new browser on the same profile (a new tab, a later visit) resends them: nothing is lost."""
    from playwright.async_api import async_playwright

    from annotation.agents.browser import session_for

    user, participant = annotator()
    attempt = attempt_start(participant=participant, puzzle=puzzles_of("Object_Match")[0])
    session = session_for(user)
    row = report.row("browser closed in an outage, attempt reopened", "the wait: from the reopening to the last ack")

    async def browser_on_profile(playwright, init_script: str):
        context = await _profile_browser(playwright, tmp_path / "profile", site, session)
        await context.add_init_script(init_script)
        page = context.pages[0] if context.pages else await context.new_page()
        await open_attempt(page, attempt.uid)
        return context, page

    async def scenario():
        async with async_playwright() as playwright:
            context, page = await browser_on_profile(playwright, OUTAGE + GENERATOR)
            made, generated = await _batches_left_unacknowledged(page)
            await context.close()  # the whole browser: its tab and its sessionStorage are gone
            context, page = await browser_on_profile(playwright, GENERATOR)
            waited = await _acknowledged_after(page, since=time.monotonic())
            await context.close()
            return made, generated, waited

    _nothing_lost(attempt, row, *run(scenario()))


def test_a_crashed_tab_leaves_its_batches_for_a_new_tab(site, puzzles_of, annotator, tmp_path):
    """The tab's renderer crashes (Chromium's own Page.crash) during an outage with batches
    unacknowledged; the attempt opened in a new tab of the same browser resends them: nothing is lost."""
    from playwright.async_api import async_playwright

    from annotation.agents.browser import session_for

    user, participant = annotator()
    attempt = attempt_start(participant=participant, puzzle=puzzles_of("Object_Match")[0])
    session = session_for(user)
    row = report.row("tab's renderer crashed in an outage, new tab", "the wait: from the new tab to the last ack")

    async def tab(context, init_script: str):
        page = await context.new_page()
        await page.add_init_script(init_script)  # this tab only
        await open_attempt(page, attempt.uid)
        return page

    async def scenario():
        async with async_playwright() as playwright:
            context = await _profile_browser(playwright, tmp_path / "profile", site, session)
            page = await tab(context, OUTAGE + GENERATOR)
            made, generated = await _batches_left_unacknowledged(page)
            cdp = await context.new_cdp_session(page)
            async with page.expect_event("crash", timeout=5000):  # fails the test if it never crashes
                # The renderer dies before it answers: the call is not awaited to its end.
                with contextlib.suppress(PlaywrightError, TimeoutError):
                    await asyncio.wait_for(cdp.send("Page.crash"), 5)
            since = time.monotonic()
            waited = await _acknowledged_after(await tab(context, GENERATOR), since=since)
            await context.close()
            return made, generated, waited

    _nothing_lost(attempt, row, *run(scenario()))
