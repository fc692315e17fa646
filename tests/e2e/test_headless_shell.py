"""The pages the platform drives itself (replay, agent runs, the environment) open in Chromium's
headless shell (annotation/agents/browser.py's CHROMIUM), a cheaper build of the same Blink: it
must draw every pixel the full browser, the one annotators use, draws."""

import io

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from PIL import Image
from playwright.async_api import async_playwright

from annotation.agents.browser import CHROMIUM, CHROMIUM_ARGS, FULL_CHROMIUM, screenshot_png

from .conftest import page_for, run

pytestmark = pytest.mark.browser
# Emoji and dotted outlines, text in a grid, a button with its ring, tiles: what the types draw.
TYPES = ("Pick_Area", "Coordinates", "Hold_Button", "Slide_Puzzle")
IMAGES_DRAWN = "[...document.images].every((image) => image.complete && image.naturalWidth > 0)"


async def first_screenshots(executable: str, args: list[str], site: str, user, puzzles) -> list[np.ndarray]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=executable, args=args)
        try:
            shots = []
            for puzzle in puzzles:
                page, _ = await page_for(browser, site, user, puzzle)
                # A broken image draws alike in both: compare only pages whose pictures arrived.
                assert await page.evaluate(IMAGES_DRAWN), puzzle.type
                shots.append(np.asarray(Image.open(io.BytesIO(await screenshot_png(page))).convert("RGB")))
                await page.context.close()
            return shots
        finally:
            await browser.close()


def test_the_headless_shell_draws_the_full_browsers_pixels(site, puzzles_of):
    puzzles = puzzles_of(*TYPES)
    assert sorted(p.type for p in puzzles) == sorted(TYPES)
    users = [get_user_model().objects.create_user(username=name) for name in ("shell", "full")]
    full_args = [arg for arg in CHROMIUM_ARGS if arg != "--in-process-gpu"]  # as a person's browser: a GPU process
    shell = run(first_screenshots(CHROMIUM, CHROMIUM_ARGS, site, users[0], puzzles))
    full = run(first_screenshots(FULL_CHROMIUM, full_args, site, users[1], puzzles))
    for puzzle, a, b in zip(puzzles, shell, full, strict=True):
        assert a.shape == b.shape == (1080, 1280, 3), puzzle.type
        differing = int((a != b).any(axis=2).sum())
        assert differing == 0, f"{puzzle.type}: {differing} pixels differ"
