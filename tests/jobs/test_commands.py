"""The commands with --on-workers: a live progress bar drawn from the workers' progress, and,
without a broker, the same chunks run in the command's own process."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from arena_site.celery import app
from puzzles.jobs.models import Job
from puzzles.models import Puzzle
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
