"""A draft study previewed end to end in real Chromium (issue 22): from the study's page, through
the consent page, practice, the puzzles (gold among them) and the Pause page, to the end page with
the completion code, without an enrolment; the draft stays a draft."""

import json

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from annotation.agents.browser import perform, signed_in_context, wait_submitted
from annotation.models import Attempt, Enrollment, Slot, Study
from annotation.studies.setup import study_create

from .conftest import chromium, run, verified_puzzles
from .test_live_page import reference_actions

pytestmark = pytest.mark.browser


async def shown_attempt(page) -> str:
    return json.loads(await page.locator("#page-data").text_content())["attempt"]


async def solve_shown_puzzle(page) -> dict:
    """Answer the puzzle on the page with its reference answer; its study bar."""
    data = json.loads(await page.locator("#page-data").text_content())
    attempt = await sync_to_async(Attempt.objects.select_related("puzzle").get)(uid=data["attempt"])
    for action in reference_actions(attempt.puzzle):
        await perform(page, action)
    await wait_submitted(page, 15)
    return data["study"]


async def go_on(page) -> None:
    """The page's way on: the practice-over dialog's link, else the bar's Continue."""
    dialog = page.locator("dialog.practice-done a.continue")
    await (dialog if await dialog.is_visible() else page.locator(".studybar a.continue")).click()


def test_a_draft_is_previewed_end_to_end_without_an_enrolment(site, transactional_db):
    pool = verified_puzzles(["Dice_Count"], per_type=4, seed=41)
    study = study_create(
        name="Preview pilot",
        split="test",
        puzzles_per_annotator=2,
        practice=[pool[0]],
        gold=[pool[1]],
        status=Study.Status.DRAFT,
    )
    boss = get_user_model().objects.create_user("boss", is_staff=True)

    async def preview():
        async with chromium() as browser:
            context = await signed_in_context(browser, site, boss)
            page = await context.new_page()
            await page.goto(f"/studies/{study.pk}/")
            await page.click("#preview-study")
            assert "Preview" in await page.locator("#preview-banner").text_content()
            await page.get_by_role("button", name="I agree, start").click()
            bars, paused_on = [], None
            for _ in range(6):
                await page.wait_for_selector("#completion-code, #status[data-state]", state="attached")
                if await page.locator("#completion-code").count():
                    break
                if len(bars) == 2 and paused_on is None:  # pause a puzzle, as a person may, and come back
                    paused_on = await shown_attempt(page)
                    await page.click(".studybar a.pause")
                    await page.click("#resume")
                    await page.wait_for_selector("#status[data-state]", state="attached")
                    assert await shown_attempt(page) == paused_on  # the same puzzle again
                bars.append(await solve_shown_puzzle(page))
                await go_on(page)
            banner = await page.locator("#preview-banner").text_content()
            code = await page.locator("#completion-code").text_content()
            await context.close()
            return bars, banner, code

    bars, banner, code = run(preview())
    assert [bar["practice"] for bar in bars] == [True, False, False, False]
    assert code == study.completion_code and "Nothing you do here counts" in banner
    assert not Enrollment.objects.filter(study=study).exists()
    assert not Attempt.objects.filter(study=study).exists()
    assert not Slot.objects.filter(study=study, enrollment__isnull=False).exists()
    assert Attempt.objects.filter(participant__user=boss, submitted_at__isnull=False, correct=True).count() == 4
    assert Study.objects.get(pk=study.pk).status == Study.Status.DRAFT
