"""Celery tasks of the annotation side: thin wrappers that report progress and call one runner, and
the chunks of the replay, trajectory-export and agent-run jobs."""

import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from celery import Task, shared_task
from django.conf import settings
from django.db import connection
from django.utils import timezone

from annotation.agents.players import rollouts_abandoned_fail
from annotation.agents.prompts import TOOLS_PROMPT
from annotation.agents.replay import ReplayOutcome, replay_puzzles
from annotation.agents.runs import RolloutResult, run_execute
from annotation.datasets.trajectories import (
    Rendered,
    attempt_place,
    attempts_render,
    export_ids,
    export_summary_write,
    render_participant,
    study_attempts,
)
from annotation.live.attempts import system_participant
from annotation.live.intake import attempts_resolve_gaps
from annotation.models import AgentRun, Attempt, Participant, Rollout, Study
from puzzles.jobs.models import Chunk, Job
from puzzles.jobs.runs import CHUNK_TASK, Report, chunk_run, job_start
from puzzles.models import Puzzle, ReplayCheck
from puzzles.selectors import puzzle_selection

Outcome = TypeVar("Outcome")


@shared_task(name="annotation.resolve_gaps", ignore_result=True)
def resolve_gaps_task() -> int:
    """The sweep of `python manage.py resolve_gaps`, sent by beat (settings.CELERY_BEAT_SCHEDULE)."""
    return attempts_resolve_gaps(now_ms=time.time() * 1000)


@shared_task(name="annotation.rollouts_abandoned_fail", ignore_result=True)
def rollouts_abandoned_fail_task() -> int:
    """Fail the rollouts a killed `env serve` or `agent run` left open (agents/players.py), sent by beat."""
    return rollouts_abandoned_fail()


@shared_task(bind=True)
def replay_task(
    self: Task, *, split: str, types: list[str] | None = None, per_type: int | None = None, workers: int = 4
) -> dict:
    """Replay reference answers on the live page; progress as {done, verified, total}."""
    ids = puzzle_selection(split=split, types=types, per_type=per_type)
    done = verified = 0

    def report(outcome: ReplayOutcome) -> None:
        nonlocal done, verified
        done += 1
        verified += outcome.verified
        self.update_state(state="PROGRESS", meta={"done": done, "verified": verified, "total": len(ids)})

    outcomes = replay_puzzles(ids, workers=workers, on_result=report)
    failures = [{"puzzle": o.puzzle_id, "reason": o.reason} for o in outcomes if not o.verified]
    return {"total": len(ids), "verified": sum(o.verified for o in outcomes), "failures": failures}


# --- replay-verification as a job: chunks of puzzle ids on the workers (puzzles/jobs) ------------
REPLAY_CHUNK = 10  # puzzles a chunk: each chunk starts a page server and a Chromium, a few seconds


@shared_task(**CHUNK_TASK)
def replay_chunk_task(self: Task, chunk_id: int, after: str = "") -> dict:
    return chunk_run(self, chunk_id, _replay_chunk, after=after)


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


def _replay_participant() -> Participant:
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


def _in_a_thread(callback: Callable[[Outcome], None]) -> Callable[[Outcome], None]:
    """The callback run in a thread of its own, waited for; a Cancelled it raises comes back here."""

    def call(outcome: Outcome) -> None:
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


# --- a trajectory export as a job: chunks of attempt ids on the workers (puzzles/jobs) -----------
TRAJECTORIES_CHUNK = 10  # attempts a chunk: a page server, a Chromium and 10 replays, under a minute


@shared_task(**CHUNK_TASK)
def trajectories_chunk_task(self: Task, chunk_id: int, after: str = "") -> dict:
    return chunk_run(self, chunk_id, _trajectories_chunk, finish=_trajectories_finish, after=after)


def export_folder(out: str | Path) -> Path:
    """Where a job's export goes: under PRIVATE_ROOT, which every worker and the caller reach (a
    relative `out` is taken there). A folder outside it is refused: a worker's own disk is one
    the caller cannot read."""
    root = Path(settings.PRIVATE_ROOT).resolve()
    folder = (root / out).resolve()
    if not folder.is_relative_to(root) or folder == root:
        raise ValueError(f"a job's export goes in a folder under PRIVATE_ROOT ({root}), not {folder}")
    return folder


def trajectories_job_start(
    study: Study,
    out: str | Path,
    *,
    with_excluded: bool = False,
    with_no_input: bool = False,
    limit: int | None = None,
    system_prompt: str = TOOLS_PROMPT,
    pages: int = 2,
    started_by: str,
    chunk_size: int = TRAJECTORIES_CHUNK,
) -> Job:
    """Render the study's attempts (as `trajectories export` chooses them) as one job into a
    folder under PRIVATE_ROOT; the last chunk to end writes run_summary.json and arena_export.json."""
    folder = export_folder(out)
    ids = export_ids(study_attempts(study, with_excluded=with_excluded, with_no_input=with_no_input), limit)
    render_participant()  # made here, once, not by two workers racing to make it
    return job_start(
        kind="trajectories",
        label=f"trajectories of study {study.name}: {len(ids)} attempts to {folder}",
        items=ids,
        chunk_size=chunk_size,
        task=trajectories_chunk_task,
        started_by=started_by,
        params={
            "study": study.pk,
            "out": str(folder.relative_to(Path(settings.PRIVATE_ROOT).resolve())),
            "with_excluded": with_excluded,
            "with_no_input": with_no_input,
            "system_prompt": system_prompt,
            "pages": pages,
        },
    )


def _trajectories_chunk(chunk: Chunk, report: Report) -> None:
    """Render the chunk's attempts whose folder is not written yet. A folder appears whole (written
    under a temporary name, then renamed), so one that exists is complete and skipped; the
    temporary folders a killed worker left are removed first."""
    params, out = chunk.job.params, export_folder(chunk.job.params["out"])
    attempts = Attempt.objects.select_related("puzzle").in_bulk(chunk.items)
    places = {pk: attempt_place(out, attempt) for pk, attempt in attempts.items()}
    failures = [_attempt_failure(pk, "no longer stored") for pk in chunk.items if pk not in attempts]
    todo = [pk for pk in chunk.items if pk in places and not (places[pk] / "summary.json").is_file()]
    for pk in todo:
        for partial in places[pk].parent.glob(f".{places[pk].name}.partial-*"):
            shutil.rmtree(partial, ignore_errors=True)
    done = len(chunk.items) - len(todo)
    report(done, failures)

    def count(rendered: Rendered) -> None:
        nonlocal done
        done += 1
        if rendered.entry is None:
            failures.append(_attempt_failure(rendered.attempt_id, rendered.problem))
        report(done, failures)

    if todo:  # the pages call back from their event loop, where Django refuses database calls
        attempts_render(
            todo,
            out,
            system_prompt=params["system_prompt"],
            workers=min(params["pages"], len(todo)),
            on_result=_in_a_thread(count),
        )


def _attempt_failure(attempt_id: int, reason: str) -> dict:
    return {"item": f"attempt {attempt_id}", "reason": reason, "attempt": attempt_id}


def _trajectories_finish(job: Job) -> None:
    """run_summary.json and arena_export.json over every chunk's folders (read back from the
    shared folder), and the render attempts a killed worker left behind."""
    params = job.params
    study = Study.objects.get(pk=params["study"])
    ids = [pk for items in job.chunks.order_by("number").values_list("items", flat=True) for pk in items]
    selection = study_attempts(study, with_excluded=params["with_excluded"], with_no_input=params["with_no_input"])
    failed = [
        {"attempt": failure["attempt"], "problem": failure["reason"]}
        for failures in job.chunks.values_list("failures", flat=True)
        for failure in failures
    ]
    puzzles = Attempt.objects.filter(pk__in=ids).values("puzzle_id")
    Attempt.objects.filter(
        participant=render_participant(), puzzle_id__in=puzzles, created_at__gte=job.created_at
    ).delete()
    export_summary_write(
        study,
        export_folder(params["out"]),
        selection,
        ids,
        failed=failed,
        seconds=((job.finished_at or timezone.now()) - job.created_at).total_seconds(),
        workers=params["pages"],
    )


# --- an agent run as a job: chunks of rollout ids on the workers (puzzles/jobs) --------------------
AGENT_CHUNK = 10  # rollouts a chunk: a page server, a Chromium and `pages` model conversations at once


@shared_task(**CHUNK_TASK)
def agent_chunk_task(self: Task, chunk_id: int, after: str = "") -> dict:
    return chunk_run(self, chunk_id, _agent_chunk, after=after)


def agent_job_start(
    run: AgentRun, *, pages: int, started_by: str, retry_failed: bool = False, chunk_size: int = AGENT_CHUNK
) -> Job:
    """The run's pending rollouts (and its failed ones, with retry_failed) as one job. Each worker
    calls the model server itself, with the key it finds in its own environment under the run's
    api_key_env: the key never goes through the broker or the database."""
    if retry_failed:
        run.rollouts.filter(status=Rollout.Status.FAILED).update(status=Rollout.Status.PENDING)
    order = {puzzle: place for place, puzzle in enumerate(run.puzzles)}
    pending = run.rollouts.filter(status=Rollout.Status.PENDING).values_list("pk", "puzzle_id", "index")
    ids = [pk for pk, puzzle, index in sorted(pending, key=lambda r: (order.get(r[1], len(order)), r[2]))]
    return job_start(
        kind="agent",
        label=f"agent run {run.name}",
        items=ids,
        chunk_size=chunk_size,
        task=agent_chunk_task,
        started_by=started_by,
        params={"run": run.pk, "pages": pages},
    )


def _agent_chunk(chunk: Chunk, report: Report) -> None:
    """Play the chunk's rollouts still pending; those a delivery before this one ended count as
    done (failed ones among the failures). A rollout a lost worker left half played is still
    pending, and is played again from a fresh attempt."""
    run = AgentRun.objects.get(pk=chunk.job.params["run"])
    ended = Rollout.objects.filter(pk__in=chunk.items).exclude(status=Rollout.Status.PENDING)
    failures = [
        _rollout_failure(pk, reason)
        for pk, reason in ended.filter(status=Rollout.Status.FAILED).values_list("pk", "reason")
    ]
    done = ended.count()
    report(done, failures)

    def count(result: RolloutResult) -> None:
        nonlocal done
        done += 1
        if result.status == Rollout.Status.FAILED:
            failures.append(_rollout_failure(result.rollout_id, result.reason))
        report(done, failures)

    if done < len(chunk.items):  # the pages call back from their event loop, where Django refuses database calls
        run_execute(
            run,
            api_key=os.environ.get(run.settings["api_key_env"], ""),
            workers=min(chunk.job.params["pages"], len(chunk.items) - done),
            rollout_ids=chunk.items,
            on_result=_in_a_thread(count),
        )


def _rollout_failure(rollout_id: int, reason: str) -> dict:
    return {"item": f"rollout {rollout_id}", "reason": reason}
