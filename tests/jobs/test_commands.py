"""The commands with --on-workers: a live progress bar drawn from the workers' progress, and,
without a broker, the same chunks run in the command's own process."""

from __future__ import annotations

import io
import json
import os

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Rollout, Study
from arena_site.celery import app
from puzzles.interop import export_captchaarena
from puzzles.interop_import import import_chunk
from puzzles.jobs.models import Job
from puzzles.models import Asset, Puzzle
from puzzles.registry import get_type
from puzzles.services import bank_generate
from puzzles.tasks import remove_orphan_images
from tests.agents.conftest import command
from tests.agents.fakes import FakeChatServer, reply, tool_calls
from tests.jobs.conftest import needs_redis


def generate(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("puzzles", "generate", "--split", "val", "--on-workers", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@needs_redis
def test_generate_on_the_workers_draws_the_jobs_progress_to_the_end(workers):
    workers.start(1)
    out, err = generate("--per-type", "10", "--types", "Bingo", "Dice_Count", "--seed", "51", "--chunk-size", "5")
    job = Job.objects.get()
    assert f"job {job.pk}: 20 items in 4 chunks sent to the workers (1 worker answered)" in out
    assert "generate val [" in err and "] 20/20 100%" in err  # the bar, redrawn from the job's row
    assert f"generate: job {job.pk} done, 20/20" in out
    assert Puzzle.objects.filter(dataset="generated:51").count() == 20


@pytest.fixture
def no_broker(settings):
    """The embedded default: tasks run inline (no REDIS_URL)."""
    before = app.conf.task_always_eager  # read first: the app loads its settings on first use
    settings.CELERY_TASK_ALWAYS_EAGER = app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = before


def test_without_a_broker_the_chunks_run_in_the_commands_process(transactional_db, no_broker):
    out, _ = generate("--per-type", "6", "--types", "Bingo", "--seed", "52", "--chunk-size", "4")
    job = Job.objects.get()
    assert f"job {job.pk}: 6 items in 2 chunks, run here (no broker" in out
    assert (job.state, job.done, job.total) == (Job.State.DONE, 6, 6)
    assert list(job.chunks.values_list("deliveries", flat=True)) == [1, 1]
    assert Puzzle.objects.filter(dataset="generated:52").count() == 6
    # Run again: every puzzle is stored already, so the chunks store nothing twice.
    generate("--per-type", "6", "--types", "Bingo", "--seed", "52")
    assert Job.objects.latest("pk").done == 6 and Puzzle.objects.filter(dataset="generated:52").count() == 6


def test_a_job_with_nothing_to_do_is_a_clear_command_error_and_no_job(transactional_db, no_broker):
    with pytest.raises(CommandError, match=r"nothing to do: the generate job has no items"):
        generate("--per-type", "0", "--types", "Bingo")
    study = Study.objects.create(name="Empty", split="test", puzzles_per_annotator=1)
    with pytest.raises(CommandError, match=r"nothing to do: the trajectories job has no items"):
        call_command("trajectories", "export", "--study", str(study.pk), "--out", "empty", "--on-workers")
    assert not Job.objects.exists()


def test_an_export_on_the_workers_goes_under_the_private_root_only(transactional_db, no_broker, tmp_path):
    study = Study.objects.create(name="Elsewhere", split="test", puzzles_per_annotator=1)
    with pytest.raises(CommandError, match=r"under PRIVATE_ROOT"):
        call_command("trajectories", "export", "--study", str(study.pk), "--out", str(tmp_path), "--on-workers")
    with pytest.raises(CommandError, match=r"under PRIVATE_ROOT"):
        call_command("trajectories", "export", "--study", str(study.pk), "--out", "../out", "--on-workers")


def test_a_generation_job_removes_the_image_files_a_killed_store_left(transactional_db, no_broker, settings):
    generate("--per-type", "3", "--types", "Bingo", "--seed", "53")
    job = Job.objects.get()
    kept = [settings.MEDIA_ROOT / name for name in Asset.objects.values_list("file", flat=True)]
    assert kept and all(path.is_file() for path in kept)
    # What a worker killed inside a store's transaction leaves: an image no asset holds.
    orphan = settings.MEDIA_ROOT / "a" / "ff" / f"{'f' * 32}.png"
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"\x89PNG")
    written = job.finished_at.timestamp()  # while the job ran
    os.utime(orphan, (written, written))
    before = settings.MEDIA_ROOT / "a" / "ee" / f"{'e' * 32}.png"  # not this job's: written before it
    before.parent.mkdir(parents=True, exist_ok=True)
    before.write_bytes(b"\x89PNG")
    os.utime(before, (written - 60, written - 60))
    settings.ARENA_JOB_LEASE_S = 0  # as if a lease had passed since the kill

    remove_orphan_images(job)  # the job's last step, as the last chunk runs it

    assert not orphan.exists() and before.is_file()
    assert all(path.is_file() for path in kept)


def test_an_import_on_the_workers_names_a_broken_entry_and_stores_nothing_twice(transactional_db, no_broker, tmp_path):
    bank_generate(split="val", per_type=3, types=["Dice_Count", "Bingo"], bank_seed=54, workers=1)
    root = tmp_path / "published"
    export_captchaarena(root, split="val", dataset="generated:54")
    truth_file = sorted(root.glob("**/ground_truth.json"))[0]
    entries = json.loads(truth_file.read_text())
    entries["gone"] = {}  # planned like the others (an object), broken once read: no field at all
    truth_file.write_text(json.dumps(entries))
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "puzzles", "import-captchaarena", str(root), "--name", "w", "--on-workers", "--chunk-size", "2",
        stdout=out, stderr=err,
    )  # fmt: skip
    job = Job.objects.get()
    assert (job.kind, job.state, job.total, job.done, job.failed) == ("import", Job.State.DONE, 7, 7, 1)
    assert job.chunks.count() == 4
    assert f"import: job {job.pk} done, 6 imported, 0 already there, 1 broken" in out.getvalue()
    assert "skipped: " in err.getvalue() and "'gone'" in err.getvalue()
    assert Puzzle.objects.filter(dataset="import:w").count() == 6
    # A chunk delivered again (its worker lost after the store) stores nothing twice.
    chunk = job.chunks.get(number=1)
    import_chunk(root, chunk.items, dataset="import:w", truth_public=True, step=1, on_progress=lambda *_: None)
    assert Puzzle.objects.filter(dataset="import:w").count() == 6


@pytest.mark.browser
def test_an_agent_run_on_the_workers_plays_each_rollout_once(transactional_db, no_broker):
    bank_generate(split="test", per_type=1, types=["Geometry_Click"], bank_seed=55, workers=1)
    puzzle = Puzzle.objects.get(dataset="generated:55")
    x, y = get_type(puzzle.type).layout(puzzle.public).main.to_stage(*puzzle.truth["point"])
    run = ["agent", "run", "--protocol", "openai-tools", "--model", "m", "--split", "test", "--dataset", "generated:55"]
    with FakeChatServer(lambda body: reply(tool_calls(("click", {"x": round(x), "y": round(y)})))) as fake:
        out = command(*run, "--base-url", fake.url, "--rollouts", "3", "--name", "spread", "--on-workers")
    job = Job.objects.get()
    assert f"job {job.pk}: 3 items in 1 chunks, run here (no broker" in out
    assert (job.kind, job.state, job.total, job.done, job.failed) == ("agent", Job.State.DONE, 3, 3, 0)
    rollouts = Rollout.objects.filter(run__name="spread")
    assert [(r.status, r.correct) for r in rollouts] == [("done", True)] * 3
    assert len(fake.requests) == 3  # one model call a rollout: none played twice
    with pytest.raises(CommandError, match=r"nothing to do: the agent job has no items"):
        command("agent", "run", "--resume", "spread", "--on-workers")
