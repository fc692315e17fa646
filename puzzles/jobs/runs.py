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
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from typing import TextIO, cast

from django.conf import settings
from django.core.management.base import CommandError, OutputWrapper
from django.db import connection, connections, transaction
from django.db.models import Q, Sum
from django.utils import timezone

from puzzles.jobs.models import Chunk, Job
from puzzles.jobs.outages import (
    broker_holds_no_task,
    broker_run,
    check_not_restarted,
    is_transient,
    services_seen,
)
from puzzles.progress import Progress

logger = logging.getLogger(__name__)

# A chunk taken over from a silent holder this many times (its workers died each time) fails by name.
MAX_LOST = 4
# Tries again after the database or the broker went away: 1, 2, 4... s, at most this (and half a lease).
BACK_OFF_FIRST_S = 1.0
BACK_OFF_MOST_S = 30.0
INLINE_TRIES = 8  # inline (no broker) the caller waits: about 2.5 min of tries at most
FINISHED = (Chunk.State.DONE, Chunk.State.FAILED, Chunk.State.CANCELLED)
# How every chunk task is declared (@shared_task(**CHUNK_TASK)): acknowledged once it ends and given
# back when its worker is lost; tried again (chunk_run) as often as an outage takes, not Celery's 3.
CHUNK_TASK = {"bind": True, "acks_late": True, "reject_on_worker_lost": True, "max_retries": None}

Report = Callable[[int, list[dict]], None]  # (items done in the chunk, its failed items so far)
Work = Callable[[Chunk, Report], None]
Finish = Callable[[Job], None]  # a job's last step once no chunk is left (idempotent: may run twice)


class NothingToDo(CommandError, ValueError):
    """A job was asked for with no items: no empty job is stored. A CommandError, so every command
    that starts a job ends with this one line instead of a traceback; a button says it in words."""


class Cancelled(Exception):
    """Staff cancelled the job: the chunk stops between items."""


class Held(Exception):
    """The chunk is running on another worker that is still alive: try again after `wait_s`."""

    def __init__(self, wait_s: float):
        super().__init__(f"held by a live worker: try again in {wait_s:.0f} s")
        self.wait_s = wait_s


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
    """Store the job and its chunks, then send one task a chunk (once the rows are committed). Each
    chunk keeps which run of the broker it was sent to: one that restarted may have lost it, and
    the beat sends it again (chunks_resend)."""
    if not items:
        raise NothingToDo(f"nothing to do: the {kind} job has no items ({label})")
    if chunk_size < 1:
        raise ValueError(f"chunk size must be at least 1, not {chunk_size}")
    broker = broker_run()
    with transaction.atomic():
        job = Job.objects.create(
            kind=kind, label=label, params=params or {}, started_by=started_by[:150], total=len(items), task=task.name
        )
        now = timezone.now()
        chunks = Chunk.objects.bulk_create(
            Chunk(
                job=job,
                number=n,
                items=list(items[i : i + chunk_size]),
                size=len(items[i : i + chunk_size]),
                sent_at=now,
                sent_to=broker,
            )
            for n, i in enumerate(range(0, len(items), chunk_size), start=1)
        )
        ids = [chunk.pk for chunk in chunks]
        transaction.on_commit(lambda: [task.delay(chunk_id) for chunk_id in ids])
    return job


def chunks_resend() -> int:
    """The beat's sweep (puzzles.jobs_resend): send again each chunk of a running job that may have
    no task left anywhere, and say how many. A running chunk whose holder has been silent past the
    lease: its worker died, or its task ended on an error while the broker was away too. A pending
    chunk sent to an earlier run of the broker, which may have lost it (a Redis restarted keeps
    what it holds only if it saved it), or pending while the broker holds no task at all (its
    delivery met the database away and could not send its next try). A chunk is sent again at
    most once a lease (at once after a broker restart); a copy too many finds its chunk held or
    finished, and ends there (_take)."""
    from arena_site.celery import app

    broker = broker_run()
    now = timezone.now()
    quiet_since = now - timedelta(seconds=lease_s())
    silent = Q(state=Chunk.State.RUNNING, heartbeat_at__lt=quiet_since, sent_at__lt=quiet_since)
    pending = Q(state=Chunk.State.PENDING) & ~Q(sent_to="")  # sent_to "": run inline, no task to lose
    lost_with_the_broker = pending & ~Q(sent_to=broker)
    left_behind = pending & Q(sent_at__lt=now - timedelta(seconds=lease_s() / 4))
    lost = silent | lost_with_the_broker
    if broker_holds_no_task():
        lost |= left_behind
    chunks = Chunk.objects.filter(lost, job__state=Job.State.RUNNING, job__cancel_requested=False).exclude(job__task="")
    resent = list(chunks.values_list("pk", "job__task", "number", "job_id"))
    for chunk_id, task, number, job_id in resent:
        app.send_task(task, args=[chunk_id])
        Chunk.objects.filter(pk=chunk_id).update(sent_at=now, sent_to=broker)
        logger.warning("job %s: chunk %s sent again (its task may be lost)", job_id, number)
    return len(resent)


def job_cancel(job: Job) -> None:
    """Chunks not yet taken up end at once; running ones stop after their current item."""
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    Chunk.objects.filter(job=job, state=Chunk.State.PENDING).update(state=Chunk.State.CANCELLED)
    _settle(job.pk)


def chunk_run(task, chunk_id: int, work: Work, finish: Finish | None = None, after: str = "") -> dict:
    """Run one chunk's work inside its Celery task (bound): the whole life of a delivery. The
    delivery that finds the job ended runs `finish` (a summary over all chunks' output).

    The database or the broker gone (is_transient) is waited out, never a failure: the delivery is
    tried again after a back-off that doubles up to BACK_OFF_MOST_S, as long as it takes. The try
    again carries the holder of the try that failed (`after`), so it takes the chunk over at once
    instead of waiting out that holder's lease. Only an error of the work itself fails the chunk."""
    holder = f"{socket.gethostname()}:{os.getpid()}:{task.request.id}"
    if task.request.is_eager:
        return _apart_from_the_caller(lambda: _inline_tries(chunk_id, work, finish, holder))
    try:
        return _delivery(chunk_id, work, finish, holder, after)
    except Held as held:
        raise task.retry(countdown=held.wait_s) from None
    except Exception as error:
        if not is_transient(error):
            raise
        wait_s = back_off_s(task.request.retries)
        connections.close_all()  # one the database closed is not used again
        logger.warning("chunk %s: %s; tried again in %.0f s", chunk_id, _said(error), wait_s)
        # If the broker is away too, sending this fails and the task ends: the beat sends the
        # chunk again once its lease has passed (chunks_resend).
        raise task.retry(args=[chunk_id], kwargs={"after": holder}, countdown=wait_s) from error


def back_off_s(tries: int) -> float:
    """The wait before try `tries + 1`: doubling from a second, at most BACK_OFF_MOST_S and half a
    lease (so a chunk waiting to be tried again is not sent again as lost)."""
    return min(BACK_OFF_FIRST_S * 2**tries, BACK_OFF_MOST_S, lease_s() / 2)


def _inline_tries(chunk_id: int, work: Work, finish: Finish | None, holder: str) -> dict:
    """Inline, the same waits in the caller's process, INLINE_TRIES at most (then the error is the caller's)."""
    after = ""
    for tries in range(INLINE_TRIES):
        try:
            return _delivery(chunk_id, work, finish, holder, after)
        except Exception as error:
            if not is_transient(error) or tries + 1 == INLINE_TRIES:
                raise
            connections.close_all()
            time.sleep(back_off_s(tries))
            after = holder
    raise AssertionError("unreachable")


def _said(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]


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


def _delivery(chunk_id: int, work: Work, finish: Finish | None, holder: str, after: str) -> dict:
    taken = _take(chunk_id, holder, after)
    if taken is None:  # settled again: a delivery whose worker died in the job's finish ends it here
        _settle(Chunk.objects.values_list("job_id", flat=True).get(pk=chunk_id), finish)
        return {"chunk": chunk_id, "skipped": "already finished"}
    seen = services_seen()
    with _heartbeat(chunk_id, holder):
        state, error = Chunk.State.DONE, ""
        try:
            work(taken, lambda done, failures: _report(taken, holder, done, failures, seen))
        except Cancelled:
            state = Chunk.State.CANCELLED
        except Exception as problem:  # the chunk fails by name, with why; the others go on
            if is_transient(problem):
                raise  # tried again (chunk_run): what it stored stays, and is skipped next time
            state, error = Chunk.State.FAILED, _said(problem)[:500]
    Chunk.objects.filter(pk=chunk_id, holder=holder).update(state=state, error=error, heartbeat_at=timezone.now())
    _settle(taken.job_id, finish)
    return {"chunk": chunk_id, "state": state}


def _take(chunk_id: int, holder: str, after: str = "") -> Chunk | None:
    """The chunk, now held by `holder`; None when there is nothing to run; raises Held when
    another live holder has it. `after`: the holder of this delivery's own failed try, which
    has ended, so its chunk is taken back at once."""
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
        taken_over = chunk.state == Chunk.State.RUNNING and not (after and chunk.holder == after)
        if taken_over and chunk.heartbeat_at and chunk.heartbeat_at > silent_since:
            raise Held(wait_s=lease_s() / 2)
        if taken_over and chunk.lost + 1 >= MAX_LOST:
            chunk.state = Chunk.State.FAILED
            chunk.error = f"its worker was lost {chunk.lost + 1} times"
            chunk.save(update_fields=["state", "error"])
            transaction.on_commit(lambda: _settle(chunk.job_id))
            return None
        chunk.state, chunk.holder, chunk.heartbeat_at = Chunk.State.RUNNING, holder, now
        chunk.deliveries += 1
        chunk.lost += int(taken_over)
        chunk.save(update_fields=["state", "holder", "heartbeat_at", "deliveries", "lost"])
        return chunk


def _report(chunk: Chunk, holder: str, done: int, failures: list[dict], seen: tuple[str, str]) -> None:
    """The chunk's own count (set, not added: a delivery again counts from what is stored). A new
    failed item while the database or the broker restarted may be the outage's, not the item's:
    the delivery is tried again instead (ServicesRestarted), and the item with it."""
    if len(failures) > chunk.failed:
        check_not_restarted(seen)
    Chunk.objects.filter(pk=chunk.pk, holder=holder).update(
        done=done, failed=len(failures), failures=failures, heartbeat_at=timezone.now()
    )
    chunk.failed = len(failures)
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
        if is_transient(problem):
            raise  # the job stays running; the delivery is tried again and finishes it
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
                try:
                    Chunk.objects.filter(pk=chunk_id, holder=holder).update(heartbeat_at=timezone.now())
                except Exception as error:  # the database away: beat again once it is back
                    if not is_transient(error):
                        raise
                    connection.close()
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"heartbeat-{chunk_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def job_follow(job: Job, progress: Progress, poll_s: float = 0.5, say: Callable[[str], None] = print) -> Job:
    """Draw the workers' progress (the job's row) until the job ends; Ctrl-C cancels it. The
    database away is waited out (the workers wait it out too): the follower says so once, reads
    again until it answers, and ends with the job's real end."""
    away = False
    try:
        while True:
            try:
                job.refresh_from_db()
            except Exception as error:
                if not is_transient(error):
                    raise
                if not away:
                    say(f"job {job.pk}: the database is unavailable ({_said(error)}); waiting for it")
                away = True
                connection.close()  # the next read takes a new connection
                time.sleep(poll_s)
                continue
            if away:
                say(f"job {job.pk}: the database is back")
                away = False
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

    try:
        answered = len(app.control.ping(timeout=1.0) or [])
    except Exception as error:  # the broker away for a moment: the job is sent; the workers will take it
        if not is_transient(error):
            raise
        workers = f"the broker did not answer a ping: {_said(error)}"
    else:
        workers = f"{answered} worker{'' if answered == 1 else 's'} answered" if answered else "no worker answered yet"
    return f"job {job.pk}: {job.total} items in {chunks} chunks sent to the workers ({workers}); Ctrl-C cancels it"


def job_watch(job: Job, title: str, stdout: OutputWrapper, stderr: OutputWrapper) -> Job:
    """A command's part once it has sent a job: say where it runs, then draw its progress under
    `title` on stderr until it ends (Ctrl-C cancels it); the job as it ended."""
    stdout.write(job_announce(job))
    # The stream under the wrapper, written to as is: a progress bar redraws one line (the stubs
    # omit this private field).
    return job_follow(job, Progress(job.total, title, stream=cast(TextIO, stderr._out)), say=stderr.write)


def job_ended_done(job: Job) -> None:
    """A command's exit status for its job: an error unless every chunk ended done."""
    if job.state != Job.State.DONE:
        raise CommandError(f"job {job.pk} ended {job.state}")
