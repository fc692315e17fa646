"""Celery tasks over the bank: thin wrappers that report progress and call one service, and the
generation job's chunks."""

import time
from pathlib import Path

from celery import shared_task
from django.conf import settings

from puzzles.bank import SPLIT_SIZES, bank_key, split_code
from puzzles.interop_import import ImportPlan, import_chunk, import_items
from puzzles.jobs.models import Chunk, Job
from puzzles.jobs.runs import CHUNK_TASK, Report, chunk_run, chunks_resend, job_start, lease_s
from puzzles.models import Asset
from puzzles.registry import type_names
from puzzles.services import bank_generate


@shared_task(bind=True)
def bank_generate_task(
    self, *, split: str, per_type: int | None = None, types: list[str] | None = None, bank_seed: int | None = None
) -> dict:
    total = (per_type if per_type is not None else SPLIT_SIZES[split]) * len(type_names(types))
    done = 0

    def report(count: int) -> None:
        nonlocal done
        done += count
        self.update_state(state="PROGRESS", meta={"done": done, "total": total})

    result = bank_generate(split=split, per_type=per_type, types=types, bank_seed=bank_seed, on_progress=report)
    return {"created": result.created, "skipped": result.skipped, "total": total}


@shared_task(name="puzzles.jobs_resend", ignore_result=True, acks_late=False)
def jobs_resend_task() -> int:
    """Chunks whose task may be lost, sent again: sent by beat (settings.CELERY_BEAT_SCHEDULE).
    Acknowledged as it starts, so the broker it looks into holds no task of its own."""
    return chunks_resend()


# --- generation as a job: chunks of [type, index] items on the workers (puzzles/jobs) ---------------
GENERATE_CHUNK = 50  # puzzles a chunk: a few seconds of one worker process
GENERATE_STEP = 5  # puzzles stored (one transaction) and reported at a time within a chunk
ASSET_FOLDER = "a"  # where puzzles.models.asset_upload_to puts images: a/<2 hex>/<32 hex>.<ext>


@shared_task(**CHUNK_TASK)
def generate_chunk_task(self, chunk_id: int, after: str = "") -> dict:
    return chunk_run(self, chunk_id, _generate_chunk, finish=remove_orphan_images, after=after)


def generate_job_start(
    *,
    split: str,
    per_type: int | None,
    types: list[str] | None,
    start: int = 0,
    bank_seed: int | None = None,
    started_by: str,
    chunk_size: int = GENERATE_CHUNK,
) -> Job:
    """Puzzles [start, start + per_type) of each type as one job; what is stored already is skipped
    by the chunks (and counted done)."""
    split_code(split)  # an unknown split fails here, not on a worker
    count = SPLIT_SIZES[split] if per_type is None else per_type
    names = type_names(types)
    items = [[name, index] for name in names for index in range(start, start + count)]
    return job_start(
        kind="generate",
        label=f"generate {split}: {count} of each of {len(names)} types from {start} ({bank_key(bank_seed).label})",
        items=items,
        chunk_size=chunk_size,
        task=generate_chunk_task,
        started_by=started_by,
        params={"split": split, "bank_seed": bank_seed},
    )


def _generate_chunk(chunk: Chunk, report: Report) -> None:
    """Each run of consecutive indexes of one type, generated in this process (a worker's pool
    process may not fork), stored and reported a few at a time; bank_generate skips the stored ones."""
    split, bank_seed = chunk.job.params["split"], chunk.job.params["bank_seed"]
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        report(done, [])

    for name, indexes in _runs(chunk.items, GENERATE_STEP):
        bank_generate(
            split=split,
            per_type=len(indexes),
            start=indexes[0],
            types=[name],
            bank_seed=bank_seed,
            workers=1,
            on_progress=advance,
        )


def remove_orphan_images(job: Job) -> None:
    """The last step of a job that stores puzzles (generation, import). A puzzle's images are
    written to MEDIA_ROOT inside the transaction that stores it, so a worker killed before the
    commit leaves files no puzzle names. This removes the image files written while the job ran
    that no asset holds, older than a lease: by then any
    transaction writing them has committed or died (a live one stores 5 puzzles in well under a
    second), so a file written for a store still in flight (another job's) is never taken."""
    written_before = time.time() - lease_s()
    if job.created_at.timestamp() >= written_before:
        return  # too young a job for any of its files to be known orphans
    folder = Path(settings.MEDIA_ROOT) / ASSET_FOLDER
    candidates = [
        path for path in folder.glob("*/*") if job.created_at.timestamp() - 1 <= path.stat().st_mtime <= written_before
    ]
    held = set(
        Asset.objects.filter(file__in=[f"{ASSET_FOLDER}/{p.parent.name}/{p.name}" for p in candidates]).values_list(
            "file", flat=True
        )
    )
    for path in candidates:
        if f"{ASSET_FOLDER}/{path.parent.name}/{path.name}" not in held:
            path.unlink(missing_ok=True)


def _runs(items: list[list], longest: int) -> list[tuple[str, list[int]]]:
    """[[type, index], ...] as (type, consecutive indexes) runs of at most `longest`, in order."""
    runs: list[tuple[str, list[int]]] = []
    for name, index in items:
        if runs and runs[-1][0] == name and runs[-1][1][-1] + 1 == index and len(runs[-1][1]) < longest:
            runs[-1][1].append(index)
        else:
            runs.append((name, [index]))
    return runs


# --- an import as a job: chunks of named entries of a folder every worker reads -------------------
IMPORT_CHUNK = 100  # entries a chunk: a few seconds of one worker process
IMPORT_STEP = 20  # entries stored (one transaction) and reported at a time within a chunk


@shared_task(**CHUNK_TASK)
def import_chunk_task(self, chunk_id: int, after: str = "") -> dict:
    return chunk_run(self, chunk_id, _import_chunk, finish=remove_orphan_images, after=after)


def import_job_start(plan: ImportPlan, *, started_by: str, chunk_size: int = IMPORT_CHUNK) -> Job:
    """The plan's entries as one job. Its folder is read again where each chunk runs: it must be
    at the same path on every worker's machine (a shared folder), as MEDIA_ROOT must."""
    return job_start(
        kind="import",
        label=f"import {plan.dataset} from {plan.root}",
        items=import_items(plan),
        chunk_size=chunk_size,
        task=import_chunk_task,
        started_by=started_by,
        params={"root": str(plan.root.resolve()), "dataset": plan.dataset, "truth_public": plan.target.truth_public},
    )


def _import_chunk(chunk: Chunk, report: Report) -> None:
    params = chunk.job.params
    import_chunk(
        Path(params["root"]),
        chunk.items,
        dataset=params["dataset"],
        truth_public=params["truth_public"],
        step=IMPORT_STEP,
        on_progress=report,
    )
