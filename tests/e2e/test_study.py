"""A small study in real Chromium: several annotators at once, a flag, a retirement, the report."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.agents.browser import VIEWPORT, perform, wait_submitted
from annotation.models import Attempt, Enrollment, Flag
from annotation.studies.setup import study_create
from puzzles.models import Puzzle

from .conftest import chromium, run, verified_puzzles
from .test_live_page import reference_actions

pytestmark = pytest.mark.browser
WRONG_FOR = {"p2": 1}  # annotator p2 answers their second puzzle wrong


async def work_through(browser, site: str, token: str, pid: str, flag_first: bool) -> str:
    """One annotator, in their own browser context: join by invite link, solve the queue, end."""
    context = await browser.new_context(viewport=VIEWPORT, base_url=site)
    page = await context.new_page()
    await page.goto(f"/s/{token}/?PROLIFIC_PID={pid}&STUDY_ID=st1")
    await page.get_by_role("button", name="I agree, start").click()
    for number in range(10):
        await page.wait_for_selector("#completion-code, #status[data-state]", state="attached")
        if await page.locator("#completion-code").count():
            code = await page.locator("#completion-code").text_content()
            await context.close()
            return code
        data = json.loads(await page.locator("#page-data").text_content())
        if flag_first and number == 0:
            await page.click(".flag-button")
            await page.check("input[value=unsolvable]")
            await page.fill(".flag-dialog textarea", "the dice overlap")
            await page.click(".flag-dialog button.primary")
            await page.wait_for_selector(".flag-button:has-text('Flagged')")
        attempt = await sync_to_async(Attempt.objects.select_related("puzzle").get)(uid=data["attempt"])
        actions = reference_actions(attempt.puzzle)
        if WRONG_FOR.get(pid) == number:
            actions = [a for a in actions if a["action"] != "type_text"] + []  # submit without typing
        for action in actions:
            await perform(page, action)
        await wait_submitted(page, 15)
        await page.click("a.continue")
    raise AssertionError(f"{pid} never finished")


def test_a_small_study_with_several_annotators_a_flag_and_a_retirement(site, transactional_db):
    # Four puzzles for six places: with three, two people's own orders can take both places
    # of the one puzzle the third has left, and the third waits out the hold for no-places.
    verified_puzzles(["Dice_Count"], per_type=4, seed=21)
    study = study_create(name="Browser pilot", split="test", puzzles_per_annotator=2, overlap=2)

    async def everyone():
        async with chromium() as browser:
            return await asyncio.gather(
                *(work_through(browser, site, study.token, pid, pid == "p1") for pid in ("p1", "p2", "p3"))
            )

    codes = run(everyone())
    assert codes == [study.completion_code] * 3
    assert sorted(Enrollment.objects.filter(study=study).values_list("external_ids__PROLIFIC_PID", flat=True)) == [
        "p1",
        "p2",
        "p3",
    ]
    flag = Flag.objects.get()
    assert (flag.reason, flag.note) == ("unsolvable", "the dice overlap")

    admin = Client()
    admin.force_login(get_user_model().objects.create_user("admin", is_staff=True))
    admin.post(
        f"/review/{flag.puzzle.uid}/resolve/", {"action": "retire", "note": "from the browser test", "confirm": "yes"}
    )
    assert Puzzle.objects.get(pk=flag.puzzle_id).status == Puzzle.Status.RETIRED

    report = admin.get(f"/studies/{study.pk}/report.json").json()
    counted = {}
    for attempt in Attempt.objects.filter(study=study, submitted_at__isnull=False).exclude(puzzle=flag.puzzle):
        right, total = counted.get(attempt.puzzle.type, (0, 0))
        counted[attempt.puzzle.type] = (right + attempt.correct, total + 1)
    assert {r["type"]: (r["correct"], r["attempts"]) for r in report["types"]} == counted
    assert report["retired_puzzles"] == 1 and report["annotators"] >= 2
    assert (
        sum(total for _, total in counted.values())
        == 6 - Attempt.objects.filter(study=study, puzzle=flag.puzzle, submitted_at__isnull=False).count()
    )
    assert Attempt.objects.filter(study=study, correct=False).count() == 1  # p2's planned wrong answer
    # People's hands in real Chromium: every attempt has input behind its actions, and the
    # page's heartbeat kept the server hearing from it.
    submitted = Attempt.objects.filter(study=study, submitted_at__isnull=False)
    assert [(a.input_ok, a.input_problem) for a in submitted] == [(True, "")] * submitted.count()
    assert all(a.served_at and a.clock_ok for a in submitted)
    assert report["overall"]["no_input"] == 0
    html = admin.get(f"/studies/{study.pk}/report.html").content.decode()
    assert "Browser pilot" in html and "<svg" in html


def test_the_device_check_shows_the_screened_out_code_only_when_the_window_is_too_small(site, transactional_db):
    verified_puzzles(["Dice_Count"], per_type=1, seed=23)
    study = study_create(name="Screens", split="test", puzzles_per_annotator=1)

    async def at(viewport: dict) -> tuple[bool, bool]:
        async with chromium() as browser:
            context = await browser.new_context(viewport=viewport, base_url=site)
            page = await context.new_page()
            await page.goto(f"/s/{study.token}/?PROLIFIC_PID=small1")
            shown = await page.locator("#screened-out").is_visible()
            can_start = await page.get_by_role("button", name="I agree, start").is_enabled()
            await context.close()
            return shown, can_start

    assert run(at(VIEWPORT)) == (False, True)
    assert run(at({"width": 390, "height": 844})) == (False, True)
    assert run(at({"width": 240, "height": 200})) == (True, False)  # too small: the start is off, the code shown
