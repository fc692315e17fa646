"""A session's browser side, Chromium real: a reset whose page fails to open (its rollout kept as
failed, its browser context freed, the error said), the screenshots an episode is given, and the
browser windows a context costs."""

import asyncio
import io

import pytest
from PIL import Image, ImageChops
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS, screenshot_png
from annotation.agents.server import _free_port, live_server
from annotation.environment.sessions import Session
from annotation.models import EnvToken, Rollout

pytestmark = pytest.mark.browser


def test_a_page_that_fails_to_open_leaves_a_failed_rollout_and_no_browser_context(bank, key):
    (puzzle,) = bank("Dice_Count")
    key()
    token = EnvToken.objects.get()
    nowhere = f"http://127.0.0.1:{_free_port('127.0.0.1')}"  # nothing listens: the page cannot load

    async def reset():
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            session = Session(token=token, browser=browser, page_base=nowhere)
            with pytest.raises(PlaywrightError) as failed:
                await session.reset({"puzzle": puzzle.uid})
            contexts = len(browser.contexts)
            await browser.close()
            return str(failed.value), contexts, session.played

    error, contexts, played = asyncio.run(reset())
    assert "ERR_CONNECTION_REFUSED" in error and contexts == 0 and played is None
    rollout = Rollout.objects.get()
    assert rollout.status == Rollout.Status.FAILED and rollout.reason.startswith("reset failed: Error: ")
    assert "ERR_CONNECTION_REFUSED" in rollout.reason


def test_a_screenshot_has_the_pixels_playwright_takes_and_puts_the_carets_back(bank, key):
    """screenshot_png encodes its own PNG: the pixels must be page.screenshot's, carets hidden as it
    hides them, on a page whose text box has the focus (Dice_Count) and a caret colour of its own."""
    (puzzle,) = bank("Dice_Count")
    key()
    token = EnvToken.objects.get()

    async def shots():
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            session = Session(token=token, browser=browser, page_base=base)
            await session.reset({"puzzle": puzzle.uid})
            page = session.played.page
            await page.keyboard.type("12")
            await page.evaluate("document.activeElement.style.setProperty('caret-color', 'red')")
            pairs = []
            for _ in range(3):  # over more than one blink of the caret
                pairs.append((await page.screenshot(type="png"), await screenshot_png(page)))
                await asyncio.sleep(0.3)
            focused = await page.evaluate("[document.activeElement.tagName, document.activeElement.style.caretColor]")
            await session.close("the test ended")
            await browser.close()
            return pairs, focused

    with live_server() as base:
        pairs, focused = asyncio.run(shots())
    assert focused == ["INPUT", "red"]
    for playwrights, ours in pairs:
        assert ours.startswith(b"\x89PNG\r\n\x1a\n")
        theirs_image, ours_image = Image.open(io.BytesIO(playwrights)), Image.open(io.BytesIO(ours))
        assert ours_image.size == (1280, 1080) and theirs_image.size == (1280, 1080)
        assert ImageChops.difference(theirs_image.convert("RGB"), ours_image.convert("RGB")).getbbox() is None


def test_a_browser_context_opens_its_page_and_no_browser_ui_pages():
    """Headless Chromium preloaded two omnibox popups (WebUI pages, a renderer of their own) for
    every page's window, most of a reset's CPU; CHROMIUM_ARGS turns them off. A Chromium whose
    features are named otherwise shows them again here."""

    async def targets():
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = await browser.new_context()
            await context.new_page()
            devtools = await browser.new_browser_cdp_session()
            found = (await devtools.send("Target.getTargets"))["targetInfos"]
            await browser.close()
            return [(target["type"], target["url"]) for target in found]

    assert asyncio.run(targets()) == [("page", "about:blank")]
