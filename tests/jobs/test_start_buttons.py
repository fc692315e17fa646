"""The start buttons (issue 25): the bank page's Generate and Replay-verify and a study page's
Export trajectories start a job (a POST with its CSRF token, staff only) and land on the Jobs page,
where the job shows; with nothing to do they say so and start none."""

from __future__ import annotations

import pytest
import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.agents.browser import chromium, signed_in_context
from annotation.models import Study
from puzzles.jobs.models import Job
from puzzles.models import Puzzle
from puzzles.services import bank_generate
from tests.datasets.conftest import People
from tests.e2e.conftest import run, site  # noqa: F401  (fixture)
from tests.jobs.conftest import SHOTS


@pytest.fixture
def empty_queue():
    """No worker runs in these tests: the tasks the buttons send are dropped from Redis after."""
    yield
    if settings.REDIS_URL:
        broker = redis.Redis.from_url(str(settings.REDIS_URL))
        broker.flushdb()
        broker.close()


@pytest.mark.browser
def test_staff_start_generation_replay_and_an_export_from_the_bank_and_study_pages(site, empty_queue):  # noqa: F811
    staff = get_user_model().objects.create_user("grace", password="pw", is_staff=True)
    study = Study.objects.create(name="Buttons", split="test", puzzles_per_annotator=1)
    SHOTS.mkdir(parents=True, exist_ok=True)

    async def scenario():
        async with chromium() as browser:
            context = await signed_in_context(browser, site, staff)
            page = await context.new_page()
            await page.set_viewport_size({"width": 1280, "height": 1080})
            await page.goto("/")
            await page.screenshot(path=SHOTS / "bank-jobs-1280.png", full_page=True)
            # Nothing stored yet: Replay-verify says so and starts no job.
            await page.get_by_role("button", name="Replay-verify").click()
            await page.wait_for_url("**/jobs/")
            assert "Nothing to replay" in await page.locator(".message").inner_text()
            # Generate: 2 of each type of the test split, a job on the Jobs page.
            await page.get_by_role("link", name="puzzle bank").click()
            generate = page.locator("form.job-start").filter(has=page.get_by_role("button", name="Generate"))
            await generate.get_by_label("Puzzles of each type").fill("2")
            await generate.get_by_role("button", name="Generate").click()
            await page.wait_for_url("**/jobs/#job-*")
            card = page.locator(".job").first
            assert "generate test: 2 of each of 20 types" in await card.inner_text()
            assert "Started by grace" in await card.inner_text()
            assert "started" in await page.locator(".message").inner_text()
            await page.screenshot(path=SHOTS / "jobs-started-1280.png", full_page=True)
            # A study's page: Export trajectories, with no attempt yet and then with one.
            await page.goto(f"/studies/{study.pk}/")
            await page.get_by_role("button", name="Export trajectories").click()
            assert "Nothing to export" in await page.locator(".message").inner_text()
            await answered(study)
            await page.get_by_role("button", name="Export trajectories").click()
            await page.wait_for_url("**/jobs/#job-*")
            assert "trajectories of study Buttons: 1 attempts" in await page.locator(".job").first.inner_text()
            await page.get_by_role("link", name="study's page").click()
            await page.wait_for_url("**/studies/")
            await page.set_viewport_size({"width": 390, "height": 844})
            await page.goto("/")
            await page.screenshot(path=SHOTS / "bank-jobs-390.png", full_page=True)
            await page.goto(f"/studies/{study.pk}/")
            await page.screenshot(path=SHOTS / "study-export-390.png", full_page=True)

    run(scenario())
    generated, exported = Job.objects.order_by("pk")
    assert (generated.kind, generated.total, generated.started_by) == ("generate", 40, "grace")
    assert (exported.kind, exported.total, exported.params["study"]) == ("trajectories", 1, study.pk)
    assert exported.params["out"].startswith(f"trajectories/study-{study.pk}-")  # under PRIVATE_ROOT
    assert generated.chunks.count() == 1 and exported.chunks.count() == 1


async def answered(study: Study) -> None:
    from asgiref.sync import sync_to_async

    def answer() -> None:
        bank_generate(split="test", per_type=1, types=["Dice_Count"], bank_seed=61, workers=1)
        People(study).answer("ann", Puzzle.objects.get(dataset="generated:61"), True)

    await sync_to_async(answer)()


def test_the_start_buttons_are_for_staff_only(transactional_db):
    person = Client()
    person.force_login(get_user_model().objects.create_user("annie"))
    study = Study.objects.create(name="Not yours", split="test", puzzles_per_annotator=1)
    for url in ("/jobs/start/generate/", "/jobs/start/replay/", f"/studies/{study.pk}/trajectories/"):
        assert person.post(url, {"split": "test", "per_type": "1"}).status_code == 302
    assert not Job.objects.exists()
    staff = Client(enforce_csrf_checks=True)
    staff.force_login(get_user_model().objects.create_user("grace", is_staff=True))
    assert staff.post("/jobs/start/generate/", {"split": "test", "per_type": "1"}).status_code == 403  # no token
    assert not Job.objects.exists()
