"""Returning people in real Chromium (issue 33): a finished person who opens the study link again in
another browser with the same crowd id sees their own code, not the no-places code of a full study;
a wrong gold answer under the study's gold rule screens the person out at once, with its own code."""

import json

import pytest
from asgiref.sync import sync_to_async

from annotation.agents.browser import VIEWPORT, perform, wait_submitted
from annotation.models import Attempt, Enrollment
from annotation.studies.setup import study_create

from .conftest import chromium, run, verified_puzzles
from .test_live_page import reference_actions

pytestmark = pytest.mark.browser
END = "#completion-code, #failed-gold-code, #no-places-code, #excluded"


async def work_through(context, token: str, query: str, *, wrong_gold: bool = False) -> str:
    """Join by invite link in this browser context and answer until an end page; returns the
    selector of the code shown there, and its text."""
    page = await context.new_page()
    await page.goto(f"/s/{token}/{query}")
    await page.get_by_role("button", name="I agree, start").click()
    for _ in range(10):
        await page.wait_for_selector(f"{END}, #status[data-state]", state="attached")
        for selector in ("#completion-code", "#failed-gold-code"):
            if await page.locator(selector).count():
                return f"{selector} {await page.locator(selector).text_content()}"
        if await page.locator("#excluded").count():
            return "#excluded without a code"
        data = json.loads(await page.locator("#page-data").text_content())
        attempt = await sync_to_async(Attempt.objects.select_related("puzzle").get)(uid=data["attempt"])
        actions = reference_actions(attempt.puzzle)
        if wrong_gold and attempt.purpose == Attempt.Purpose.GOLD:
            actions = [a for a in actions if a["action"] != "type_text"]  # submit with nothing typed
        for action in actions:
            await perform(page, action)
        await wait_submitted(page, 15)
        await page.click("a.continue")
    raise AssertionError("never reached an end page")


def test_a_finished_person_in_a_second_browser_with_the_same_crowd_id_sees_their_code(site, transactional_db):
    verified_puzzles(["Dice_Count"], per_type=2, seed=31)
    study = study_create(name="Come back", split="test", puzzles_per_annotator=1)  # two people fill it
    link = "?PROLIFIC_PID=back1&STUDY_ID=st1&SESSION_ID=se1"

    async def scenario() -> tuple[str, dict]:
        async with chromium() as browser:
            first = await browser.new_context(viewport=VIEWPORT, base_url=site)
            finished = await work_through(first, study.token, link)
            other = await browser.new_context(viewport=VIEWPORT, base_url=site)
            await work_through(other, study.token, "?PROLIFIC_PID=back2")  # the study is full now
            second = await browser.new_context(viewport=VIEWPORT, base_url=site)  # a fresh profile
            page = await second.new_page()
            await page.goto(f"/s/{study.token}/{link}")
            shown = {
                "code": await page.locator("#completion-code").text_content(),
                "no_places": await page.locator("#no-places-code").count(),
                "consent": await page.get_by_role("button", name="I agree, start").count(),
                "return": await page.locator("a[href*='prolific.com']").get_attribute("href"),
            }
            return finished, shown

    finished, shown = run(scenario())
    assert finished == f"#completion-code {study.completion_code}"
    assert shown["code"] == study.completion_code and (shown["no_places"], shown["consent"]) == (0, 0)
    assert shown["return"].endswith(f"cc={study.completion_code}")
    assert Enrollment.objects.filter(study=study, crowd_id="back1").count() == 1


def test_a_wrong_gold_answer_screens_out_at_once_with_the_failed_gold_code(site, transactional_db):
    pool = verified_puzzles(["Dice_Count"], per_type=4, seed=33)
    study = study_create(name="Attention", split="test", puzzles_per_annotator=2, gold=pool[:1], gold_screen_out_at=1)

    async def scenario() -> str:
        async with chromium() as browser:
            context = await browser.new_context(viewport=VIEWPORT, base_url=site)
            return await work_through(context, study.token, "?PROLIFIC_PID=gold1&SESSION_ID=gs", wrong_gold=True)

    assert run(scenario()) == f"#failed-gold-code {study.failed_gold_code}"
    enrollment = Enrollment.objects.get(crowd_id="gold1")
    assert enrollment.excluded and enrollment.finished_at is None
    gold_attempt = Attempt.objects.get(participant_id=enrollment.participant_id, purpose=Attempt.Purpose.GOLD)
    later = Attempt.objects.filter(participant_id=enrollment.participant_id, created_at__gt=gold_attempt.created_at)
    assert not later.exists()  # at once: nothing was handed out after the failing gold
