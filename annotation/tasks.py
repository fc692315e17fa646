"""Celery tasks of the annotation side: thin wrappers that report progress and call one runner."""

from celery import shared_task

from annotation.agents.replay import replay_puzzles
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
