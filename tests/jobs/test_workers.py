"""Done when (issue 25): a job split over two real worker processes survives one of them killed
with SIGKILL mid-chunk, and ends with every item done exactly once."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from annotation.datasets.trajectories import render_participant
from annotation.models import Attempt, Participant, Study
from annotation.tasks import replay_job_start, trajectories_job_start
from puzzles.jobs.models import Chunk, Job
from puzzles.models import Asset, Puzzle, ReplayCheck
from puzzles.services import bank_generate
from puzzles.tasks import generate_job_start
from tests.datasets.conftest import People
from tests.jobs.conftest import follow, kill_a_worker_mid_chunk, needs_redis

pytestmark = [needs_redis, pytest.mark.browser]


def test_a_replay_job_survives_a_killed_worker_and_verifies_each_puzzle_once(workers):
    bank_generate(split="test", per_type=20, types=["Geometry_Click", "Object_Match"], bank_seed=31, workers=1)
    ids = list(Puzzle.objects.filter(dataset="generated:31").order_by("pk").values_list("pk", flat=True))
    assert len(ids) == 40
    workers.start(2)
    # Two chunks, one a worker: a replay chunk starts its own page server and Chromium, most of its time.
    job = replay_job_start(ids, label="replay test: 40 puzzles", pages=2, started_by="shell:test", chunk_size=20)

    chunk, seen = killed_mid_chunk_then_done(job, workers)

    assert (job.done, job.total, job.failed) == (40, 40, 0)
    assert seen[-1] == 40 and seen == sorted(seen)  # the progress only grew, up to 40/40
    chunk.refresh_from_db()
    assert chunk.state == Chunk.State.DONE and chunk.deliveries == 2 and chunk.done == chunk.size
    checks = ReplayCheck.objects.filter(puzzle_id__in=ids)
    assert checks.count() == 40 and checks.filter(verified=True).count() == 40
    assert sorted(checks.values_list("puzzle_id", flat=True)) == sorted(ids)  # each puzzle once
    replays = Attempt.objects.filter(participant__kind=Participant.Kind.REPLAY, puzzle_id__in=ids)
    assert replays.count() == 40 and replays.filter(correct=True).count() == 40  # no second attempt left
    assert Puzzle.objects.filter(pk__in=ids, status=Puzzle.Status.VERIFIED).count() == 40


def test_a_generation_job_survives_a_killed_worker_and_stores_each_puzzle_once(workers):
    workers.start(2)
    job = generate_job_start(
        split="train",
        per_type=30,
        types=["Geometry_Click", "Dice_Count", "Bingo", "Object_Match"],
        bank_seed=32,
        started_by="shell:test",
        chunk_size=30,  # a few seconds a chunk: time to kill its worker in the middle
    )
    assert job.total == 120

    chunk, seen = killed_mid_chunk_then_done(job, workers)

    assert (job.done, job.total, job.failed) == (120, 120, 0)
    assert seen[-1] == 120 and seen == sorted(seen)
    chunk.refresh_from_db()
    assert chunk.state == Chunk.State.DONE and chunk.deliveries == 2
    stored = Puzzle.objects.filter(dataset="generated:32", split="train")
    assert stored.count() == 120  # once each: (dataset, type, split, index) is unique, a second store fails
    assert stored.values("type").distinct().count() == 4
    # Written where the caller reads: this test's media folder, not a worker's own disk.
    asset = Asset.objects.filter(puzzle__in=stored).first()
    assert asset is not None and asset.file.path.startswith(str(settings.MEDIA_ROOT))
    assert (settings.MEDIA_ROOT / asset.file.name).is_file()
    # No image without its puzzle: what the killed store wrote before its commit is gone.
    files = {str(path.relative_to(settings.MEDIA_ROOT)) for path in (settings.MEDIA_ROOT / "a").glob("*/*")}
    assert files == set(Asset.objects.filter(puzzle__in=stored).values_list("file", flat=True))


def test_a_trajectory_export_survives_a_killed_worker_and_writes_each_attempt_once(workers):
    bank_generate(split="test", per_type=8, types=["Dice_Count"], bank_seed=33, workers=1)
    puzzles = list(Puzzle.objects.filter(dataset="generated:33").order_by("index"))
    Puzzle.objects.filter(dataset="generated:33").update(status=Puzzle.Status.VERIFIED)
    study = Study.objects.create(name="Exported", split="test", puzzles_per_annotator=8, overlap=2)
    people = People(study)
    attempts = [people.answer(name, puzzle, True) for name in ("ann", "bob") for puzzle in puzzles]
    workers.start(2)
    job = trajectories_job_start(study, "exports/exported", pages=2, started_by="shell:test", chunk_size=8)
    assert job.total == 16

    chunk, seen = killed_mid_chunk_then_done(job, workers)

    assert (job.done, job.total, job.failed) == (16, 16, 0), _why(job, workers)
    assert seen[-1] == 16 and seen == sorted(seen)
    chunk.refresh_from_db()
    assert chunk.state == Chunk.State.DONE and chunk.deliveries == 2 and chunk.done == chunk.size
    # Under PRIVATE_ROOT, where the caller reads: each attempt's folder once, whole, and no
    # temporary folder the killed worker was writing.
    out = settings.PRIVATE_ROOT / "exports" / "exported"
    folders = sorted(out.glob("*/*/attempt_*"))
    assert sorted(f.name for f in folders) == sorted(f"attempt_{a.uid}" for a in attempts)
    assert all((f / "summary.json").is_file() and (f / "arena_pointer.npz").is_file() for f in folders)
    assert not list(out.glob("*/*/.attempt_*"))
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["total_puzzles"] == 16 and summary["total_correct"] == 16
    assert sorted(p["arena_attempt"] for p in summary["puzzles"]) == sorted(a.uid for a in attempts)
    assert json.loads((out / "arena_export.json").read_text())["written"] == 16
    assert not Attempt.objects.filter(participant=render_participant()).exists()  # the renders, gone


def killed_mid_chunk_then_done(job: Job, workers) -> tuple[Chunk, list[int]]:
    """SIGKILL the worker of a chunk part done, then follow the job until it ends, done: the
    killed chunk and each count of done items seen on the way."""
    killed, chunk = kill_a_worker_mid_chunk(job, workers)
    chunk.refresh_from_db()
    assert killed.process.returncode == -9 and chunk.state == Chunk.State.RUNNING  # killed mid-chunk
    seen = follow(job)
    assert job.state == Job.State.DONE, _why(job, workers)
    return chunk, seen


def _why(job: Job, workers) -> str:
    chunks = [(c.number, c.state, c.error, c.failures) for c in job.chunks.all()]
    return f"job {job.state} {job.done}/{job.total}; chunks {chunks}\n{workers.logs()}"
