"""A session's reset whose page fails to open: its rollout kept as failed, its browser context
freed, the error said (Chromium real, the page server absent)."""

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
