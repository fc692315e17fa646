"""The machine's Chromium, driven by Playwright, acting on the live page with real input.

Replay, agents and the browser tests all act through `perform`: computer-use actions in stage
pixels. An agent's or a replay's page shows the stage alone, so at a 1280x1080 viewport they are
viewport pixels; a person's page puts its chrome above a scaled stage, and `perform` maps them.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from django.db import connections
from playwright.async_api import Browser, BrowserContext, CDPSession, Page, ViewportSize, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

from annotation.agents.server import live_server
from puzzles.layout import STAGE_H, STAGE_W

# Chromium's old headless mode (Debian's chromium-headless-shell, Playwright's own default for
# headless pages): the same Blink drawing the same pixels as the full browser (tests/e2e/
# test_headless_shell.py compares them), without the browser window and its UI that the full
# browser builds for every page even when headless. With the GPU thread kept in the browser process
# (no GPU process; drawing is in software either way), an environment reset took 512 ms of CPU
# instead of 1,010 and a click 118 instead of 205 (bench/env.py, docs/environment.md).
CHROMIUM = "/usr/bin/chromium-headless-shell"
FULL_CHROMIUM = "/usr/bin/chromium"  # the browser annotators use; only the pixel comparison opens it
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # Pages in background contexts must keep their timers running at full speed.
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    # Less work per navigation: no back-forward cache of the page just left, no paint holding,
    # no browser features a puzzle page never uses. Headless Chromium builds a browser window
    # per page, and each window preloaded the omnibox's popups (WebUI pages in a renderer of
    # their own): about 0.8 s of CPU per browser context, most of an environment reset. Nor a
    # spare renderer started ahead of each page's first navigation, which goes to a new one anyway.
    "--disable-back-forward-cache",
    "--disable-features=BackForwardCache,PaintHolding,Translate,MediaRouter,OptimizationHints,"
    "AutofillServerCommunication,WebUIOmniboxPopup,WebUIOmniboxAimPopup,SpareRendererForSitePerProcess",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--disable-renderer-accessibility",
    "--disable-ipc-flooding-protection",
    "--in-process-gpu",  # see CHROMIUM
]
VIEWPORT: ViewportSize = {"width": STAGE_W, "height": STAGE_H}  # the page at the stage's own size
# The page sets data-attempt on its stage last, once the attempt is built and listening.
READY = '#stage[data-attempt="{uid}"]'
TO_VIEWPORT = """points => {
  const stage = document.getElementById("stage"), box = stage.getBoundingClientRect();
  const scale = box.width / stage.offsetWidth;
  return points.map(([x, y]) => [box.left + x * scale, box.top + y * scale]);
}"""
DRAG_STEPS = 12
# What page.screenshot() does to the page first, as its Chromium code does (inPagePrepareForScreenshots):
# every caret made transparent, inline and important, then the fonts awaited. Says whether any was
# hidden: SHOW_CARETS puts them back.
HIDE_CARETS = """async () => {
  const editable = [...document.querySelectorAll("input,textarea,[contenteditable]")];
  window[Symbol.for("arena.carets")] = editable.map((element) => {
    const kept = [element.style.getPropertyValue("caret-color"), element.style.getPropertyPriority("caret-color")];
    element.style.setProperty("caret-color", "transparent", "important");
    return [element, kept];
  });
  await document.fonts.ready;
  return editable.length > 0;
}"""
SHOW_CARETS = """() => {
  (window[Symbol.for("arena.carets")] || []).forEach(([element, [value, priority]]) =>
    element.style.setProperty("caret-color", value, priority));
  delete window[Symbol.for("arena.carets")];
}"""
THREADS_BESIDE_PAGES = 4  # for the loop's other blocking work (a screenshot written to disk)
_devtools: weakref.WeakKeyDictionary[Page, CDPSession] = weakref.WeakKeyDictionary()  # a page's own
Job = TypeVar("Job")
Result = TypeVar("Result")


def on_pages(
    jobs: list[Job],
    *,
    user: User,
    workers: int,
    act: Callable[[Page, Job], Awaitable[Result]],
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """act(page, job) for every job, in W pages of one Chromium signed in as `user`, against a
    live page server started for the run. Results come back in the order they finish."""
    with live_server() as base_url:
        return asyncio.run(_on_pages(list(jobs), user, base_url, workers, act, on_result))


async def _on_pages(
    jobs: list[Job],
    user: User,
    base_url: str,
    workers: int,
    act: Callable[[Page, Job], Awaitable[Result]],
    on_result: Callable[[Result], None] | None,
) -> list[Result]:
    pending = list(reversed(jobs))  # popped from the end: jobs start in the order given
    pages = max(1, min(workers, len(jobs)))
    # A page's blocking calls (its model call above all) run in the loop's default executor, by
    # default min(32, CPUs + 4) threads: with more pages than that, model calls would queue behind
    # each other whatever --workers says. asyncio.run shuts this executor down with the loop.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(pages + THREADS_BESIDE_PAGES))
    results: list[Result] = []
    try:
        async with chromium() as browser:

            async def worker() -> None:
                context = await signed_in_context(browser, base_url, user)
                page = await context.new_page()
                while pending:
                    result = await act(page, pending.pop())
                    results.append(result)
                    if on_result:
                        on_result(result)
                await context.close()

            await asyncio.gather(*(worker() for _ in range(pages)))
    finally:
        # The pages' database calls ran in asgiref's one thread for sync code, which outlives this
        # run (a worker's next chunk uses it again): its connections are given back here, so one
        # the database closed while it was away is never used again.
        await sync_to_async(connections.close_all)()
    return results


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def screenshot_png(page: Page) -> bytes:
    """The viewport as a PNG, the pixels page.screenshot(type="png") gives (carets hidden), encoded by
    Chromium's fastest PNG setting: Playwright's default encoder took about 75 ms of the browser's
    CPU for a 1280x1080 puzzle page, this one about 20 ms, for a file about 10% larger."""
    devtools = _devtools.get(page)
    if devtools is None:
        devtools = _devtools[page] = await page.context.new_cdp_session(page)
    carets = await page.evaluate(HIDE_CARETS)
    try:
        shot = await devtools.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
    finally:
        if carets:
            await page.evaluate(SHOW_CARETS)
    return base64.b64decode(shot["data"])


def session_for(user: User) -> str:
    """A signed-in session for a user, as the login view would create it."""
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    assert store.session_key is not None  # create() sets it
    return store.session_key


async def signed_in_context(browser: Browser, base_url: str, user: User) -> BrowserContext:
    session = await sync_to_async(session_for)(user)
    context = await browser.new_context(viewport=VIEWPORT, base_url=base_url)
    await context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": base_url}])
    return context


async def open_attempt(page: Page, attempt_uid: str, *, in_place: bool = False) -> None:
    """Show an attempt and wait until it is built and listening.

    in_place: mount it in the page already open (as the annotator's queue does after a submit)
    instead of loading the page afresh.
    """
    if in_place and await page.evaluate("typeof window.arena?.next === 'function'"):
        await page.evaluate("uid => window.arena.next(uid)", attempt_uid)
    else:
        await page.goto(f"/play/{attempt_uid}/")
    await page.wait_for_selector(READY.format(uid=attempt_uid), state="attached")


class NotSubmitted(RuntimeError):
    """The page did not reach its submitted state in time; the message says where it was."""


async def wait_submitted(page: Page, timeout_s: float) -> None:
    try:
        await page.wait_for_selector('#status[data-state="submitted"]', state="attached", timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        state = await page.evaluate("window.arena ? JSON.stringify(window.arena.state()) : 'no page script'")
        status = await page.locator("#status").get_attribute("data-state")
        raise NotSubmitted(f"no verdict within {timeout_s:g} s (page status {status}, transport {state})") from None


async def perform(page: Page, action: dict[str, Any]) -> None:
    """One computer-use action ({"action", "arguments"}, stage pixels) with real mouse and keyboard input."""
    kind, args = action["action"], action["arguments"]
    mouse = page.mouse
    if kind == "click":
        [(x, y)] = await page.evaluate(TO_VIEWPORT, [[args["x"], args["y"]]])
        await mouse.click(x, y)
    elif kind == "drag":
        start, end = await page.evaluate(
            TO_VIEWPORT, [[args["start_x"], args["start_y"]], [args["end_x"], args["end_y"]]]
        )
        await mouse.move(*start)
        await mouse.down()
        await mouse.move(*end, steps=DRAG_STEPS)
        await mouse.up()
    elif kind == "hold":
        [(x, y)] = await page.evaluate(TO_VIEWPORT, [[args["x"], args["y"]]])
        await mouse.move(x, y)
        await mouse.down()
        await asyncio.sleep(args["duration_ms"] / 1000)
        await mouse.up()
    elif kind == "type_text":
        await page.keyboard.type(args["text"])
    else:
        raise ValueError(f"unknown action {kind!r}")
