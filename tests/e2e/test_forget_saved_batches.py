"""The page keeps unacknowledged batches (typed answers among them) in localStorage under
`arena:<uid>`: signing out, and a study's end page, drop every such copy (real Chromium)."""

import contextlib

from django.urls import reverse
from playwright.async_api import TimeoutError as PlaywrightTimeout

from annotation.agents.browser import signed_in_context
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from tests.live_stream import submit_answer

from .conftest import chromium, run, verified_puzzles

SAVE = "() => { localStorage.setItem('arena:abc', '{\"unacked\": []}'); localStorage.setItem('theirs', '1'); }"
GONE = "() => localStorage.getItem('arena:abc') === null"


async def saved_after(site: str, user, visit) -> tuple[bool, str | None]:
    async with chromium() as browser:
        context = await signed_in_context(browser, site, user)
        page = await context.new_page()
        await page.goto(reverse("login"))
        await page.evaluate(SAVE)
        await visit(page)
        with contextlib.suppress(PlaywrightTimeout):  # the page drops them as it loads
            await page.wait_for_function(GONE, timeout=10_000)
        gone = await page.evaluate(GONE)
        kept = await page.evaluate("() => localStorage.getItem('theirs')")
        await context.close()
        return gone, kept


def test_signing_out_drops_the_saved_batches(site, annotator):
    user, _ = annotator()
    user.is_staff = True  # the Sign out button is staff's (a try, a preview on a shared browser)
    user.save()

    async def sign_out(page):
        await page.goto("/")
        await page.get_by_role("button", name="Sign out").click()
        await page.wait_for_selector("text=You are signed out.")

    gone, kept = run(saved_after(site, user, sign_out))
    assert gone and kept == "1"  # only the page's own copies


def test_a_finished_studys_end_page_drops_the_saved_batches(site, annotator):
    verified_puzzles(["Dice_Count"], per_type=1, seed=31)
    study = study_create(name="Done", split="test", puzzles_per_annotator=1)
    user, _ = annotator()
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    submit_answer(enrollment_next(enrollment=enrollment).attempt, True)

    async def end_page(page):
        await page.goto(f"/s/{study.token}/next/")
        await page.wait_for_selector("#completion-code")

    gone, kept = run(saved_after(site, user, end_page))
    assert gone and kept == "1"
