"""A person's page in real Chromium: pauses, practice, phones, the keyboard."""

import json

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from annotation.agents.browser import TO_VIEWPORT, VIEWPORT, open_attempt, perform, session_for, wait_submitted
from annotation.live.attempts import attempt_start, participant_for_user
from annotation.models import Attempt
from annotation.studies.setup import study_create

from .conftest import chromium, page_for, run, verified_puzzles
from .test_live_page import reference_actions

pytestmark = pytest.mark.browser
PAUSE_S = 6
# How long past the hold bar's filling a person lets go: more than its progress frame's rounding
# (3 places) can cut from a hold, so the page's own claim is the hold time or more at any speed.
HOLD_PAST_FULL_MS = 100


async def attempt_on(page) -> Attempt:
    await page.wait_for_selector("#status[data-state]", state="attached")
    data = json.loads(await page.locator("#page-data").text_content())
    return await sync_to_async(Attempt.objects.select_related("puzzle").get)(uid=data["attempt"])


def verified_study(types: list[str], **options):
    verified_puzzles(types, per_type=3, seed=31)
    return study_create(name="Person page", split="test", **options)


def test_a_paused_puzzle_counts_no_active_time_while_paused(site, transactional_db):
    study = verified_study(["Dice_Count"], puzzles_per_annotator=1)

    async def scenario():
        async with chromium() as browser:
            context = await browser.new_context(viewport=VIEWPORT, base_url=site)
            page = await context.new_page()
            await page.goto(f"/s/{study.token}/?PROLIFIC_PID=pp1")
            await page.wait_for_selector("#device-check[data-state=ok]", state="attached")  # a desktop: nothing to say
            await page.get_by_role("button", name="I agree, start").click()
            attempt = await attempt_on(page)
            actions = reference_actions(attempt.puzzle)
            await perform(page, actions[0])  # a first look and a click, then a pause
            await page.click("#chrome a.pause")
            await page.wait_for_selector("#resume")
            await page.wait_for_timeout(PAUSE_S * 1000)  # away: the pause page, then back
            await page.click("#resume")
            assert (await attempt_on(page)).pk == attempt.pk  # the same puzzle, afresh
            assert await page.title() == "Puzzle 1 of 1 · Person page"
            for action in actions:  # scored from the actions since the page came back
                await perform(page, action)
            await wait_submitted(page, 15)
            return attempt

    attempt = Attempt.objects.get(pk=run(scenario()).pk)
    assert attempt.submitted_at and attempt.correct, attempt.reason
    assert attempt.wall_ms > PAUSE_S * 1000
    assert attempt.active_ms < attempt.wall_ms - (PAUSE_S - 1) * 1000, (attempt.active_ms, attempt.wall_ms)


TAB_LIMIT = 40


async def tab_to(page, selector: str) -> None:
    """Press Tab until the element matching selector has the focus."""
    for _ in range(TAB_LIMIT):
        await page.keyboard.press("Tab")
        if await page.evaluate("s => document.activeElement?.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


async def press_times(page, key: str, times: int) -> None:
    for _ in range(times):
        await page.keyboard.press(key)


async def by_keyboard(page, puzzle) -> None:
    """Solve one puzzle with the keyboard alone, as a person without a pointer would."""
    from puzzles.registry import get_type

    kind = get_type(puzzle.type)
    layout, truth = kind.layout(puzzle.public), puzzle.truth
    if kind.widget == "point":  # the crosshair starts mid-picture and moves 25 px (Shift) or 5 px a press
        await tab_to(page, "#stage .overlay")
        box = layout.main
        tx, ty = (v * box.scale for v in truth["point"])
        for axis, distance in (("Right", tx - box.rect.w / 2), ("Down", ty - box.rect.h / 2)):
            key = axis if distance >= 0 else {"Right": "Left", "Down": "Up"}[axis]
            steps = round(abs(distance) / 5)
            await press_times(page, f"Shift+Arrow{key}", steps // 5)
            await press_times(page, f"Arrow{key}", steps % 5)
        await page.keyboard.press("Enter")
        return
    if kind.widget == "cells":
        for cell in sorted(truth["correct_patches"]):
            await tab_to(page, f'#stage [data-role=cell][data-index="{cell}"]')
            await page.keyboard.press("Space")
    elif kind.widget == "option":
        await tab_to(page, "#stage [data-role=next]")
        await press_times(page, "Enter", truth["correct_option_index"])
    elif kind.widget == "drag":
        await tab_to(page, "#stage [data-role=slider]")
        shift = (truth["target_position"][0] - truth["start_position"][0]) * layout.main.scale
        presses = round(layout.slider.handle_shift(shift) / 2)
        await press_times(page, "Shift+ArrowRight", presses // 5)
        await press_times(page, "ArrowRight", presses % 5)
    elif kind.widget == "hold":
        await tab_to(page, "#stage [data-role=hold]")
        await page.keyboard.down(" ")
        # Held as a person holds: until the bar is full, by the server's own measure, and a moment
        # more. A fixed hold time raced the server's clock: its measure starts when the start
        # arrives, which a loaded box delays.
        await page.wait_for_selector("#stage [data-role=hold].complete", state="attached")
        await page.wait_for_timeout(HOLD_PAST_FULL_MS)
        await page.keyboard.up(" ")
        return
    elif kind.widget == "text":
        await tab_to(page, "#stage [data-role=text]")
        await page.keyboard.type(str(truth["sum"]))
        await page.keyboard.press("Enter")
        return
    await tab_to(page, "#stage [data-role=submit]")
    await page.keyboard.press("Enter")


def test_a_keyboard_only_annotator_solves_every_interaction_mode(site, puzzles_of, annotator):
    # click, grid, cycle, realtime (drag and hold), text
    puzzles = puzzles_of(
        "Geometry_Click", "Image_Recognition", "Object_Match", "Slide_Puzzle", "Hold_Button", "Dice_Count"
    )
    user, _ = annotator()

    async def scenario():
        done = []
        async with chromium() as browser:
            for puzzle in puzzles:
                page, attempt = await page_for(browser, site, user, puzzle)
                await by_keyboard(page, puzzle)
                await wait_submitted(page, 15)
                done.append(attempt)
                await page.context.close()
        return done

    attempts = [Attempt.objects.get(pk=a.pk) for a in run(scenario())]
    assert [(a.puzzle.type, a.correct, a.reason) for a in attempts if not a.correct] == []
    assert [(a.puzzle.type, a.input_problem) for a in attempts if not a.input_ok] == []


SIZES = {"phone": (390, 844), "phone-sideways": (844, 390), "laptop": (1366, 768), "desktop": (1920, 1080)}
WINDOW_CHECK = """() => {
  const stage = document.getElementById('stage').getBoundingClientRect();
  const chrome = document.getElementById('chrome').getBoundingClientRect();
  const root = document.documentElement;
  const overflow = root.scrollWidth > root.clientWidth || root.scrollHeight > root.clientHeight;
  const text = document.createRange();
  text.selectNodeContents(document.querySelector('#stage [data-role=instruction]'));
  const boxes = [...document.querySelectorAll('#stage [data-role]:not([data-role=stats]):not([data-role=steps])')]
    .filter(el => el.dataset.role !== 'instruction').map(el => el.getBoundingClientRect())
    .concat([text.getBoundingClientRect()]);
  const puzzle = [Math.min(...boxes.map(b => b.left)), Math.min(...boxes.map(b => b.top)),
                  Math.max(...boxes.map(b => b.right)), Math.max(...boxes.map(b => b.bottom))];
  return {scale: stage.width / 1280, overflow, puzzle, below: chrome.bottom, w: root.clientWidth, h: root.clientHeight};
}"""


@pytest.mark.parametrize("size", SIZES)
def test_the_puzzle_fits_every_window_below_the_chrome(site, puzzles_of, annotator, size):
    (puzzle,) = puzzles_of("Unusual_Detection")
    user, _ = annotator()
    width, height = SIZES[size]
    phone = size.startswith("phone")

    async def scenario():
        async with chromium() as browser:
            context = await browser.new_context(
                viewport={"width": width, "height": height}, base_url=site, has_touch=phone, is_mobile=phone
            )
            await context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": await sync_to_async(session_for)(user), "url": site}]
            )
            page = await context.new_page()
            attempt = await sync_to_async(attempt_start)(
                participant=await sync_to_async(participant_for_user)(user=user), puzzle=puzzle
            )
            await open_attempt(page, attempt.uid)
            return await page.evaluate(WINDOW_CHECK)

    seen = run(scenario())
    left, top, right, bottom = seen["puzzle"]
    assert not seen["overflow"], seen  # nothing widens the page before it is scaled
    assert left >= -0.5 and right <= seen["w"] + 0.5 and top >= seen["below"] - 0.5 and bottom <= seen["h"] + 0.5, seen
    whole = min(width / 1280, (height - seen["below"]) / 1080)
    if whole >= 0.6:
        assert seen["scale"] == pytest.approx(whole, abs=0.01)  # the published page whole
    else:
        assert seen["scale"] > whole * 1.5  # closer in on the puzzle, larger


def test_a_phone_held_upright_does_practice_and_two_puzzles_by_touch(site, transactional_db):
    pool = verified_puzzles(["Image_Recognition", "Geometry_Click"], per_type=4, seed=32)
    practice = next(puzzle for puzzle in pool if puzzle.type == "Geometry_Click")  # its first by index
    study = study_create(name="Phones", split="test", puzzles_per_annotator=2, practice=[practice])

    async def scenario():
        async with chromium() as browser:
            context = await browser.new_context(
                viewport={"width": 390, "height": 844}, base_url=site, has_touch=True, is_mobile=True
            )
            page = await context.new_page()
            await page.goto(f"/s/{study.token}/?PROLIFIC_PID=phone1")
            # The device check: small puzzles on a phone held upright, so a hint, and no block.
            await page.wait_for_selector("#device-check[data-state]", state="attached")
            check = await page.locator("#device-check").get_attribute("data-state")
            hint = await page.locator("#device-check").text_content()
            assert check == "warn" and "turn your phone sideways" in hint, (check, hint)
            await page.get_by_role("button", name="I agree, start").tap()
            seen = []
            for _ in range(6):
                await page.wait_for_selector("#completion-code, #status[data-state]", state="attached")
                if await page.locator("#completion-code").count():
                    return seen, await page.locator("#completion-code").text_content()
                attempt = await attempt_on(page)
                for action in reference_actions(attempt.puzzle):
                    [(x, y)] = await page.evaluate(TO_VIEWPORT, [[action["arguments"]["x"], action["arguments"]["y"]]])
                    await page.touchscreen.tap(x, y)
                await wait_submitted(page, 15)
                result = await page.locator("#stage .result").text_content()
                seen.append((attempt.purpose, result))
                if attempt.purpose == Attempt.Purpose.PRACTICE:
                    await page.wait_for_selector("dialog.practice-done[open]")
                    await page.locator("dialog.practice-done a.continue").tap()
                else:
                    await page.locator("#chrome a.continue").tap()
            raise AssertionError(f"never finished: {seen}")

    seen, code = run(scenario())
    assert code == study.completion_code
    # Practice shows its verdict although the study hides verdicts; scored puzzles do not.
    assert seen == [("practice", "Correct!"), ("scored", ""), ("scored", "")]
    attempts = Attempt.objects.filter(study=study, submitted_at__isnull=False)
    assert attempts.count() == 3 and all(a.correct and a.input_ok for a in attempts)
