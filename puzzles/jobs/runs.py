"""The engine: start a job as chunk tasks, run one chunk on a worker, follow a job's progress.

Each chunk is one Celery task, acknowledged late and given back when its worker is lost, so a chunk
on a worker that dies is delivered again (docs/jobs.md). A delivery first takes the chunk: one that
is finished is skipped, one another live worker holds is retried later, one whose holder went
silent is taken over. The chunk's work itself skips what is already stored, so a chunk done twice
stores nothing twice.
"""

from __future__ import annotations

import contextlib
import contextvars
import getpass
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TextIO, cast

from django.conf import settings
from django.core.management.base import CommandError, OutputWrapper
from django.db import connection, transaction
from django.db.models import Q, Sum
from django.utils import timezone

from puzzles.jobs.models import Chunk, Job
from puzzles.progress import Progress

# A delivery of a chunk more than this many times (its workers died each time) fails it by name.
MAX_DELIVERIES = 4
FINISHED = (Chunk.State.DONE, Chunk.State.FAILED, Chunk.State.CANCELLED)

Report = Callable[[int, list[dict]], None]  # (items done in the chunk, its failed items so far)
Work = Callable[[Chunk, Report], None]
Finish = Callable[[Job], None]  # a job's last step once no chunk is left (idempotent: may run twice)


class NothingToDo(CommandError, ValueError):
    """A job was asked for with no items: no empty job is stored. A CommandError, so every command
    that starts a job ends with this one line instead of a traceback; a button says it in words."""


class Cancelled(Exception):
    """Staff cancelled the job: the chunk stops between items."""


@dataclass(frozen=True)
class Held:
    """The chunk is running on another worker that is still alive: try again after `wait_s`."""

    wait_s: float


def lease_s() -> float:
    """How long a holder may stay silent before its chunk is taken over (settings.ARENA_JOB_LEASE_S)."""
    return float(settings.ARENA_JOB_LEASE_S)


def started_by_shell() -> str:
    try:
        return f"shell:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name in a container
        return f"shell:uid {os.getuid()}"


def job_start(
    *, kind: str, label: str, items: Sequence, chunk_size: int, task, started_by: str, params: dict | None = None
) -> Job:
    """Store the job and its chunks, then send one task a chunk (once the rows are committed)."""
    if not items:
        raise NothingToDo(f"nothing to do: the {kind} job has no items ({label})")
    if chunk_size < 1:
        raise ValueError(f"chunk size must be at least 1, not {chunk_size}")
    with transaction.atomic():
        job = Job.objects.create(
            kind=kind, label=label, params=params or {}, started_by=started_by[:150], total=len(items)
        )
        chunks = Chunk.objects.bulk_create(
            Chunk(job=job, number=n, items=list(items[i : i + chunk_size]), size=len(items[i : i + chunk_size]))
            for n, i in enumerate(range(0, len(items), chunk_size), start=1)
        )
        ids = [chunk.pk for chunk in chunks]
        transaction.on_commit(lambda: [task.delay(chunk_id) for chunk_id in ids])
    return job


def job_cancel(job: Job) -> None:
    """Chunks not yet taken up end at once; running ones stop after their current item."""
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    Chunk.objects.filter(job=job, state=Chunk.State.PENDING).update(state=Chunk.State.CANCELLED)
    _settle(job.pk)


def chunk_run(task, chunk_id: int, work: Work, finish: Finish | None = None) -> dict:
    """Run one chunk's work inside its Celery task (bound): the whole life of a delivery. The
    delivery that finds the job ended runs `finish` (a summary over all chunks' output)."""
    if task.request.is_eager:
        return _apart_from_the_caller(lambda: _delivery(task, chunk_id, work, finish))
    return _delivery(task, chunk_id, work, finish)


def _apart_from_the_caller(run: Callable[[], dict]) -> dict:
    """A chunk run inline (no broker: `make run`) in a thread of its own with an empty context,
    waited for. Inline, the task runs where it was sent: a staff page's request, inside asgiref's
    context for that request, whose thread-sensitive calls go back to the request's own thread. A
    chunk's pages run their own event loop and hand database calls to that thread, which is busy
    running the chunk ("You cannot submit onto CurrentThreadExecutor from its own thread")."""
    result: list[dict] = []
    raised: list[BaseException] = []

    def apart() -> None:
        try:
            result.append(run())
        except BaseException as error:  # handed back to the caller's thread
            raised.append(error)
        finally:
            connection.close()  # this thread's own

    thread = threading.Thread(target=contextvars.Context().run, args=(apart,), name="inline-chunk")
    thread.start()
    thread.join()
    if raised:
        raise raised[0]
    return result[0]


def _delivery(task, chunk_id: int, work: Work, finish: Finish | None) -> dict:
    holder = f"{socket.gethostname()}:{os.getpid()}:{task.request.id}"
    taken = _take(chunk_id, holder)
    if isinstance(taken, Held):
        raise task.retry(countdown=taken.wait_s, max_retries=None)
    if taken is None:  # settled again: a delivery whose worker died in the job's finish ends it here
        _settle(Chunk.objects.values_list("job_id", flat=True).get(pk=chunk_id), finish)
        return {"chunk": chunk_id, "skipped": "already finished"}
    with _heartbeat(chunk_id, holder):
        state, error = Chunk.State.DONE, ""
        try:
            work(taken, lambda done, failures: _report(taken, holder, done, failures))
        except Cancelled:
            state = Chunk.State.CANCELLED
        except Exception as problem:  # the chunk fails by name, with why; the others go on
            state, error = Chunk.State.FAILED, f"{type(problem).__name__}: {problem}"[:500]
    Chunk.objects.filter(pk=chunk_id, holder=holder).update(state=state, error=error, heartbeat_at=timezone.now())
    _settle(taken.job_id, finish)
    return {"chunk": chunk_id, "state": state}


def _take(chunk_id: int, holder: str) -> Chunk | Held | None:
    with transaction.atomic():
        chunk = Chunk.objects.select_for_update().select_related("job").get(pk=chunk_id)
        if chunk.state in FINISHED:
            return None
        if chunk.job.cancel_requested:
            chunk.state = Chunk.State.CANCELLED
            chunk.save(update_fields=["state"])
            transaction.on_commit(lambda: _settle(chunk.job_id))
            return None
        now = timezone.now()
        silent_since = now - timedelta(seconds=lease_s())
        if chunk.state == Chunk.State.RUNNING and chunk.heartbeat_at and chunk.heartbeat_at > silent_since:
            return Held(wait_s=lease_s() / 2)
        if chunk.deliveries >= MAX_DELIVERIES:
            chunk.state = Chunk.State.FAILED
            chunk.error = f"its worker was lost {chunk.deliveries} times"
            chunk.save(update_fields=["state", "error"])
            transaction.on_commit(lambda: _settle(chunk.job_id))
            return None
        chunk.state, chunk.holder, chunk.heartbeat_at = Chunk.State.RUNNING, holder, now
        chunk.deliveries += 1
        chunk.save(update_fields=["state", "holder", "heartbeat_at", "deliveries"])
        return chunk


def _report(chunk: Chunk, holder: str, done: int, failures: list[dict]) -> None:
    """The chunk's own count (set, not added: a delivery again counts from what is stored)."""
    Chunk.objects.filter(pk=chunk.pk, holder=holder).update(
        done=done, failed=len(failures), failures=failures, heartbeat_at=timezone.now()
    )
    _settle(chunk.job_id)
    if Job.objects.filter(pk=chunk.job_id, cancel_requested=True).exists():
        raise Cancelled


def _settle(job_id: int, finish: Finish | None = None) -> None:
    """The job's counts from its chunks, and its end once no chunk is left to run, after its
    `finish` (so a job seen ended has its summary written; a finish that fails fails the job, named).
    Under the job's row lock, so two workers reporting at once never write an older sum over a
    newer one, and one finish runs at a time."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        chunks = Chunk.objects.filter(job_id=job_id)
        sums = chunks.aggregate(done=Sum("done"), failed=Sum("failed"))
        job.done, job.failed = sums["done"] or 0, sums["failed"] or 0
        fields = ["done", "failed"]
        if job.state == Job.State.RUNNING and not chunks.filter(~Q(state__in=FINISHED)).exists():
            job.state = _end_state(job, chunks)
            job.finished_at = timezone.now()
            fields += ["state", "finished_at", "error"]
            _finish(job, finish)
        job.save(update_fields=fields)


def _finish(job: Job, finish: Finish | None) -> None:
    if finish is None:
        return
    try:
        with transaction.atomic():  # a savepoint: a failed finish leaves the job's lock usable
            finish(job)
    except Exception as problem:
        job.state, job.error = Job.State.FAILED, f"its last step failed: {type(problem).__name__}: {problem}"[:500]


def _end_state(job: Job, chunks) -> str:
    if chunks.filter(state=Chunk.State.FAILED).exists():
        return Job.State.FAILED
    if job.cancel_requested:
        return Job.State.CANCELLED
    return Job.State.DONE


@contextlib.contextmanager
def _heartbeat(chunk_id: int, holder: str) -> Iterator[None]:
    """Say "still here" every quarter lease from a thread, so a long item never looks like a dead worker."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(lease_s() / 4):
                Chunk.objects.filter(pk=chunk_id, holder=holder).update(heartbeat_at=timezone.now())
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"heartbeat-{chunk_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def job_follow(job: Job, progress: Progress, poll_s: float = 0.5) -> Job:
    """Draw the workers' progress (the job's row) until the job ends; Ctrl-C cancels it."""
    try:
        while True:
            job.refresh_from_db()
            if job.done > progress.done:
                progress.advance(job.done - progress.done)
            if job.state != Job.State.RUNNING:
                return job
            time.sleep(poll_s)
    except KeyboardInterrupt:
        job_cancel(job)
        job.refresh_from_db()
        return job
    finally:
        progress.close()


def on_workers_available() -> bool:
    """Whether tasks go to a broker's workers (REDIS_URL set) rather than running inline."""
    return not settings.CELERY_TASK_ALWAYS_EAGER


def job_failures(job: Job) -> list[str]:
    """Each failure by name: failed chunks with their error, then failed items."""
    lines = []
    for chunk in job.chunks.filter(Q(state=Chunk.State.FAILED) | Q(failed__gt=0)).select_related("job"):
        if chunk.error:
            lines.append(f"{chunk.name} failed: {chunk.error}")
        lines += [f"{failure['item']}: {failure['reason']}" for failure in chunk.failures]
    return lines


def job_announce(job: Job) -> str:
    """What a command says once it has sent a job: where it runs, and whether any worker answered."""
    chunks = job.chunks.count()
    if not on_workers_available():
        return f"job {job.pk}: {job.total} items in {chunks} chunks, run here (no broker: REDIS_URL is not set)"
    from arena_site.celery import app

    answered = len(app.control.ping(timeout=1.0) or [])
    workers = f"{answered} worker{'' if answered == 1 else 's'} answered" if answered else "no worker answered yet"
    return f"job {job.pk}: {job.total} items in {chunks} chunks sent to the workers ({workers}); Ctrl-C cancels it"


def job_watch(job: Job, title: str, stdout: OutputWrapper, stderr: OutputWrapper) -> Job:
    """A command's part once it has sent a job: say where it runs, then draw its progress under
    `title` on stderr until it ends (Ctrl-C cancels it); the job as it ended."""
    stdout.write(job_announce(job))
    # The stream under the wrapper, written to as is: a progress bar redraws one line (the stubs
    # omit this private field).
    return job_follow(job, Progress(job.total, title, stream=cast(TextIO, stderr._out)))


def job_ended_done(job: Job) -> None:
    """A command's exit status for its job: an error unless every chunk ended done."""
    if job.state != Job.State.DONE:
        raise CommandError(f"job {job.pk} ended {job.state}")
