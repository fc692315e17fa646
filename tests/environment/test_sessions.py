"""A session's browser side, Chromium real: a reset whose page fails to open (its rollout kept as
failed, its browser context freed, the error said), and the browser windows a context costs."""

import asyncio

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS
from annotation.agents.server import _free_port
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
