"""The staff Jobs page in real Chromium: a running job's progress as the workers move it, a failed
chunk by name, who started it, and cancel."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.agents.browser import chromium, signed_in_context
from puzzles.jobs.models import Chunk, Job
from tests.e2e.conftest import run, site  # noqa: F401  (fixture)
from tests.jobs.conftest import SHOTS

pytestmark = pytest.mark.browser


def a_running_job_with_a_failed_chunk() -> Job:
    job = Job.objects.create(kind="replay", label="replay test: 30 puzzles", started_by="grace", total=30)
    Chunk.objects.create(job=job, number=1, items=[11, 12, 13, 14, 15], size=5, state="done", done=5)
    Chunk.objects.create(
        job=job,
        number=2,
        items=[16, 17, 18, 19, 20],
        size=5,
        state="failed",
        done=2,
        error="RuntimeError: the page server did not listen on 127.0.0.1:41234 within 30 s",
    )
    Chunk.objects.create(
        job=job,
        number=3,
        items=[21, 22, 23, 24, 25],
        size=5,
        state="running",
        done=3,
        failed=1,
        failures=[{"item": "puzzle 22 (Object_Match test/00004)", "reason": "server verdict: option 1"}],
    )
    Chunk.objects.create(job=job, number=4, items=[26, 27, 28, 29, 30, 31], size=5)
    job.done, job.failed = 10, 1
    job.save()
    return job


def test_staff_see_a_running_job_move_and_its_failed_chunk_by_name_and_can_cancel_it(site):  # noqa: F811
    staff = get_user_model().objects.create_user("grace", password="pw", is_staff=True)
    job = a_running_job_with_a_failed_chunk()

    async def scenario():
        async with chromium() as browser:
            context = await signed_in_context(browser, site, staff)
            page = await context.new_page()
            await page.goto("/")
            await page.get_by_role("navigation", name="Site").get_by_role("link", name="Jobs").click()
            card = page.locator(f"#job-{job.pk}")
            assert await card.locator(".job-progress").inner_text() == "10/30"
            text = await card.inner_text()
            assert "chunk 2 (puzzles 16 … 20)" in text and "the page server did not listen" in text
            assert "puzzle 22 (Object_Match test/00004): server verdict: option 1" in text
            assert "Started by grace" in text and "1 failed" in text
            SHOTS.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=SHOTS / "jobs-1280.png", full_page=True)
            # A worker moves the job on: the page draws it in place, over its socket (not reloaded).
            await page.evaluate("window.notReloaded = true")
            await sync_to_async(Job.objects.filter(pk=job.pk).update)(done=13)
            await page.wait_for_function(
                f"document.querySelector('#job-{job.pk} .job-progress').textContent === '13/30'", timeout=15000
            )
            assert await page.evaluate("window.notReloaded === true")
            assert await card.locator(".job-percent").inner_text() == "(43%)"
            assert await card.locator("progress").evaluate("bar => bar.value") == 13
            # What it cannot draw in place (a new failure) comes with a reload.
            await sync_to_async(Job.objects.filter(pk=job.pk).update)(failed=2)
            await page.wait_for_function("window.notReloaded === undefined", timeout=15000)
            assert "2 failed" in await page.locator(f"#job-{job.pk}").inner_text()
            await page.set_viewport_size({"width": 390, "height": 844})
            await page.screenshot(path=SHOTS / "jobs-390.png", full_page=True)
            await card.get_by_role("button", name="Cancel").click()
            await page.wait_for_load_state()
            assert "cancelling" in await page.locator(f"#job-{job.pk}").inner_text()

    run(scenario())
    job.refresh_from_db()
    assert job.cancel_requested and job.state == Job.State.RUNNING  # chunk 3 still runs, then stops
    assert Chunk.objects.get(job=job, number=4).state == Chunk.State.CANCELLED


def test_the_jobs_page_is_for_staff_only(transactional_db):
    person = Client()
    person.force_login(get_user_model().objects.create_user("annie"))
    job = Job.objects.create(kind="generate", label="x", started_by="shell:root", total=1)
    assert person.get("/jobs/").status_code == 302
    assert person.post(f"/jobs/{job.pk}/cancel/").status_code == 302
    assert not Job.objects.get(pk=job.pk).cancel_requested
