"""The staff's side of a study in real Chromium: sign in from a staff page, set a study up through
the form (N per type, a quota, practice and gold picked by their thumbnails), copy its completion
code, open it; and the review page asking the puzzle's own question."""

import pytest
from django.contrib.auth import get_user_model

from annotation.agents.browser import VIEWPORT
from annotation.models import Study
from puzzles.models import Puzzle
from puzzles.registry import get_type
from puzzles.services import bank_generate

from .conftest import chromium, run

pytestmark = pytest.mark.browser


def verified_bank():
    """Five test puzzles of three types, two training puzzles of each for practice and gold."""
    types = ["Dice_Count", "Bingo", "Object_Match"]
    bank_generate(split="test", per_type=5, types=types, bank_seed=31, workers=1)
    bank_generate(split="train", per_type=2, types=types, bank_seed=31, workers=1)
    Puzzle.objects.filter(dataset="generated:31").update(status=Puzzle.Status.VERIFIED)


async def sign_in_from(page, path: str) -> None:
    """A staff page sends a signed-out visitor to the site's sign-in page, and back after it."""
    await page.goto(path)
    assert "/accounts/login/?next=" in page.url
    assert await page.locator("h1").text_content() == "Staff sign in"
    await page.fill("#id_username", "boss")
    await page.fill("#id_password", "a long staff password")
    await page.click("form button[type=submit]")
    await page.wait_for_url(f"**{path}")


def test_staff_set_up_a_study_with_quotas_and_picks_and_copy_its_code(site, transactional_db):
    verified_bank()
    get_user_model().objects.create_user("boss", password="a long staff password", is_staff=True)
    dice_train = Puzzle.objects.get(type="Dice_Count", split="train", index=0)
    bingo_train = Puzzle.objects.get(type="Bingo", split="train", index=1)

    async def staff():
        async with chromium() as browser:
            context = await browser.new_context(viewport={"width": 1366, "height": 768}, base_url=site)
            await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
            page = await context.new_page()
            await sign_in_from(page, "/studies/")
            await page.click("text=New study")
            await page.fill("#id_name", "Quota pilot")
            await page.fill("#id_per_type", "3")
            for name in ("Dice_Count", "Bingo"):
                await page.check(f"#types tr[data-type={name}] input[type=checkbox]")
            await page.fill("#types tr[data-type=Object_Match] input[type=number]", "2")  # a quota includes it
            assert await page.is_checked("#types tr[data-type=Object_Match] input[type=checkbox]")
            await page.fill("#id_puzzles_per_annotator", "4")
            await page.fill("#id_overlap", "2")
            staffing = await page.locator("#staffing").text_content()
            assert "Pool: 8 puzzles of 3 types" in staffing and "16 places" in staffing
            assert "4 people needed" in staffing
            # Practice and gold, picked by type from their thumbnails.
            dice = page.locator("#special details", has=page.locator("summary", has_text="Dice_Count"))
            await dice.locator("summary").click()
            practice = dice.locator(f"input[name=practice][value='{dice_train.uid}']")
            thumb = dice.locator(".thumb", has=page.locator(f"input[name=practice][value='{dice_train.uid}']"))
            await thumb.scroll_into_view_if_needed()
            assert await thumb.locator("img").evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
            await practice.check()
            bingo = page.locator("#special details", has=page.locator("summary", has_text="Bingo"))
            await bingo.locator("summary").click()
            await bingo.locator(f"input[name=gold][value='{bingo_train.uid}']").check()
            await page.fill("#id_researcher", "Ada's lab")
            await page.fill("#id_contact", "ada@example.org")
            await page.click("form.study-form button.primary")
            await page.wait_for_selector("#completion-code")
            assert (await page.locator("#study-status").text_content()).strip() == "draft"
            shown = (await page.locator("#completion-code").text_content()).strip()
            await page.click("button.copy[data-copy='#completion-code']")
            await page.wait_for_selector("button.copy.copied")
            copied = await page.evaluate("navigator.clipboard.readText()")
            people = await page.locator("#people-needed").text_content()
            await page.click("form.inline button:has-text('Open')")
            await page.wait_for_selector("#study-status:has-text('open')")
            invite = await page.locator("#invite-url").text_content()
            # The invite page now takes people, with the study's own consent details.
            annotator = await browser.new_context(viewport=VIEWPORT)
            visitor = await annotator.new_page()
            await visitor.goto(invite.strip() + "?PROLIFIC_PID=p-1")
            consent = await visitor.locator(".consent").text_content()
            await context.close()
            return shown, copied, people, consent

    shown, copied, people, consent = run(staff())
    study = Study.objects.get(name="Quota pilot")
    assert shown == copied == study.completion_code  # what Prolific is given is what people are shown
    assert study.status == "open" and people == "4"
    assert study.quotas == {"Bingo": 3, "Dice_Count": 3, "Object_Match": 2}
    in_pool = list(study.slots.values_list("puzzle__type", flat=True))
    assert sorted(set(in_pool)) == ["Bingo", "Dice_Count", "Object_Match"] and len(in_pool) == 16
    assert list(study.practice.all()) == [dice_train] and list(study.gold.all()) == [bingo_train]
    assert "Ada's lab" in consent and "ada@example.org" in consent


def test_the_review_page_asks_the_puzzles_own_question(site, transactional_db):
    generic = get_type("Geometry_Click").instruction
    bank_generate(split="test", per_type=6, types=["Geometry_Click"], bank_seed=32, workers=1)
    puzzle = next(
        p
        for p in Puzzle.objects.filter(type="Geometry_Click", dataset="generated:32")
        if p.public["instruction"] != generic
    )
    get_user_model().objects.create_user("boss", password="a long staff password", is_staff=True)

    async def review():
        async with chromium() as browser:
            context = await browser.new_context(viewport={"width": 1366, "height": 768}, base_url=site)
            page = await context.new_page()
            await sign_in_from(page, f"/review/{puzzle.uid}/")
            question = await page.locator("#instruction").text_content()
            image = await page.locator(".review-image img").first.evaluate("img => img.naturalWidth")
            await context.close()
            return question, image

    question, width = run(review())
    assert puzzle.public["instruction"] in question and generic not in question
    assert width == puzzle.public["image_size"][0]
