"""The start buttons (issue 25): the bank page's Generate and Replay-verify and a study page's
Export trajectories start a job (a POST with its CSRF token, staff only) and land on the Jobs page,
where the job shows; with nothing to do they say so and start none. Under `make run` (issue 33) each
button's job runs inline, in the request, and ends done."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

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
from tests.jobs.conftest import SHOTS, wait_for


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


# --- under `make run` (issue 33): every button's job runs inline, in the request, to its end --------
EMBEDDED_SETUP = """
import json
from django.contrib.auth import get_user_model
from annotation.models import Study
from puzzles.models import Puzzle
from puzzles.services import bank_generate
from tests.datasets.conftest import People

get_user_model().objects.create_user("grace", password="pw", is_staff=True)
study = Study.objects.create(name="Inline", split="val", puzzles_per_annotator=1)
bank_generate(split="val", per_type=1, types=["Dice_Count"], bank_seed=62, workers=1)
People(study).answer("ann", Puzzle.objects.get(dataset="generated:62"), True)
print(json.dumps({"study": study.pk}))
"""
EMBEDDED_JOBS = """
import json
from puzzles.jobs.models import Job
from puzzles.models import Puzzle
jobs = [
    {"kind": j.kind, "state": j.state, "done": j.done, "total": j.total, "failed": j.failed, "params": j.params,
     "errors": [c.error for c in j.chunks.all() if c.error]}
    for j in Job.objects.order_by("pk")
]
test = Puzzle.objects.filter(split="test")
print(json.dumps({"jobs": jobs, "test": test.count(), "verified": test.filter(status="verified").count()}))
"""
INLINE_JOB_TIMEOUT_MS = 600_000  # the request runs the whole job: a deadline only, so a hang fails


def embedded_environment(var_dir: Path) -> dict[str, str]:
    """`make run`'s environment: DEBUG on, everything else from its defaults (SQLite and secrets in
    var/, the in-memory channel layer, tasks inline): no database, broker or secret of this run's."""
    dropped = {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "PUZZLE_BANK_SECRET", "CI", "CELERY_TASK_ALWAYS_EAGER"}
    dropped |= {"MEDIA_ROOT", "PRIVATE_ROOT", "DJANGO_SETTINGS_MODULE", "PYTEST_VERSION"}
    kept = {name: value for name, value in os.environ.items() if name not in dropped}
    return {**kept, "DEBUG": "true", "ARENA_VAR_DIR": str(var_dir)}


def manage(env: dict[str, str], *args: str) -> str:
    command = [sys.executable, "manage.py", *args]
    done = subprocess.run(command, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def embedded_shell(env: dict[str, str], code: str) -> dict:
    return json.loads(manage(env, "shell", "-c", code).strip().splitlines()[-1])


@pytest.fixture
def make_run(tmp_path):
    """`make run`'s server on a fresh var/ folder: migrated, a staff member and a study with one
    answered attempt; yields (base URL, environment, the study's id)."""
    env = embedded_environment(tmp_path / "var")
    manage(env, "migrate", "--noinput")
    study = embedded_shell(env, EMBEDDED_SETUP)["study"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        try:
            wait_for(lambda: _listening(port), "make run's server to listen", 60)
            yield f"http://127.0.0.1:{port}", env, study
        finally:
            server.terminate()
            server.wait(15)
            log.seek(0)
            print(log.read()[-5000:])  # shown when the test fails


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


@pytest.mark.browser
def test_under_make_run_each_button_runs_its_job_inline_to_the_end(make_run):
    base_url, env, study = make_run

    async def press_each_button():
        async with chromium() as browser:
            page = await (await browser.new_context(base_url=base_url)).new_page()
            await page.goto("/accounts/login/")
            await page.get_by_label("Name").fill("grace")
            await page.get_by_label("Password").fill("pw")
            await page.get_by_role("button", name="Sign in").click()
            await page.wait_for_url(f"{base_url}/")
            generate = page.locator("form.job-start").filter(has=page.get_by_role("button", name="Generate"))
            await generate.get_by_label("Puzzles of each type").fill("1")
            await generate.get_by_role("button", name="Generate").click()
            await page.wait_for_url("**/jobs/#job-*", timeout=INLINE_JOB_TIMEOUT_MS)
            await page.goto("/")
            await page.get_by_role("button", name="Replay-verify").click()
            await page.wait_for_url("**/jobs/#job-*", timeout=INLINE_JOB_TIMEOUT_MS)
            await page.goto(f"/studies/{study}/")
            await page.get_by_role("button", name="Export trajectories").click()
            await page.wait_for_url("**/jobs/#job-*", timeout=INLINE_JOB_TIMEOUT_MS)
            return await page.locator(".job .badge").all_text_contents()

    badges = run(press_each_button())

    found = embedded_shell(env, EMBEDDED_JOBS)
    jobs = [(j["kind"], j["state"], j["done"], j["total"], j["failed"], j["errors"]) for j in found["jobs"]]
    assert jobs == [
        ("generate", "done", 20, 20, 0, []),
        ("replay", "done", 20, 20, 0, []),
        ("trajectories", "done", 1, 1, 0, []),
    ]
    assert badges == ["Done", "Done", "Done"]  # the Jobs page, newest first
    assert found["test"] == found["verified"] == 20  # each generated puzzle replayed and verified
    out = Path(env["ARENA_VAR_DIR"]) / "private" / found["jobs"][2]["params"]["out"]
    summary = json.loads((out / "run_summary.json").read_text())
    assert (summary["total_puzzles"], summary["total_correct"]) == (1, 1)
    assert len(list(out.glob("*/*/attempt_*/summary.json"))) == 1
