"""Celery tasks of the annotation side: thin wrappers that report progress and call one runner, and
the replay job's chunks."""

import threading
from collections.abc import Callable

from celery import shared_task
from django.db import connection

from annotation.agents.replay import ReplayOutcome, replay_puzzles
from annotation.live.attempts import system_participant
from annotation.models import Attempt, Participant
from puzzles.jobs.models import Chunk, Job
from puzzles.jobs.runs import Report, chunk_run, job_start
from puzzles.models import Puzzle, ReplayCheck
from puzzles.selectors import puzzle_selection


@shared_task(bind=True)
def replay_task(
    self, *, split: str, types: list[str] | None = None, per_type: int | None = None, workers: int = 4
) -> dict:
    """Replay reference answers on the live page; progress as {done, verified, total}."""
    ids = puzzle_selection(split=split, types=types, per_type=per_type)
    done = verified = 0

    def report(outcome) -> None:
        nonlocal done, verified
        done += 1
        verified += outcome.verified
        self.update_state(state="PROGRESS", meta={"done": done, "verified": verified, "total": len(ids)})

    outcomes = replay_puzzles(ids, workers=workers, on_result=report)
    failures = [{"puzzle": o.puzzle_id, "reason": o.reason} for o in outcomes if not o.verified]
    return {"total": len(ids), "verified": sum(o.verified for o in outcomes), "failures": failures}


# --- replay-verification as a job: chunks of puzzle ids on the workers (puzzles/jobs) ------------
REPLAY_CHUNK = 10  # puzzles a chunk: each chunk starts a page server and a Chromium, a few seconds


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def replay_chunk_task(self, chunk_id: int) -> dict:
    return chunk_run(self, chunk_id, _replay_chunk)


def replay_job_start(ids: list[int], *, label: str, pages: int, started_by: str, chunk_size: int = REPLAY_CHUNK) -> Job:
    """Replay these puzzles as one job; each chunk opens `pages` pages at once on its worker."""
    _replay_participant()  # made here, once, not by two workers racing to make it
    return job_start(
        kind="replay",
        label=label,
        items=ids,
        chunk_size=chunk_size,
        task=replay_chunk_task,
        started_by=started_by,
        params={"pages": pages},
    )


def _replay_participant():
    return system_participant(kind=Participant.Kind.REPLAY, label="reference answers")


def _replay_chunk(chunk: Chunk, report: Report) -> None:
    """Replay the chunk's puzzles not yet replayed since the job began. A delivery after a lost
    worker first removes the replay attempts that worker left without a check (open, or submitted
    but not yet recorded when it died), so each puzzle keeps one attempt and one check."""
    ids, since = chunk.items, chunk.job.created_at
    checked = {
        check.puzzle_id: check
        for check in ReplayCheck.objects.filter(puzzle_id__in=ids, created_at__gte=since).order_by("created_at")
    }
    failures = [_failure(c.puzzle_id, c.reason) for c in checked.values() if not c.verified]
    todo = [puzzle_id for puzzle_id in ids if puzzle_id not in checked]
    if chunk.deliveries > 1:
        Attempt.objects.filter(participant=_replay_participant(), puzzle_id__in=todo, created_at__gte=since).delete()
    done = len(checked)
    report(done, failures)

    def count(outcome: ReplayOutcome) -> None:
        nonlocal done
        done += 1
        if not outcome.verified:
            failures.append(_failure(outcome.puzzle_id, outcome.reason))
        report(done, failures)

    if todo:  # the pages call back from their event loop, where Django refuses database calls
        replay_puzzles(todo, workers=min(chunk.job.params["pages"], len(todo)), on_result=_in_a_thread(count))


def _in_a_thread(callback: Callable[[ReplayOutcome], None]) -> Callable[[ReplayOutcome], None]:
    """The callback run in a thread of its own, waited for; a Cancelled it raises comes back here."""

    def call(outcome: ReplayOutcome) -> None:
        raised: list[BaseException] = []

        def run() -> None:
            try:
                callback(outcome)
            except BaseException as error:  # handed back to the caller's thread
                raised.append(error)
            finally:
                connection.close()  # this thread's own

        thread = threading.Thread(target=run, name="replay-progress")
        thread.start()
        thread.join()
        if raised:
            raise raised[0]

    return call


def _failure(puzzle_id: int, reason: str) -> dict:
    puzzle = Puzzle.objects.get(pk=puzzle_id)
    return {"item": f"puzzle {puzzle_id} ({puzzle.type} {puzzle.split}/{puzzle.source_id})", "reason": reason}
