"""One path for every batch a page sends, whether over the WebSocket or the HTTP fallback."""
from __future__ import annotations

from django.conf import settings

from annotation.frames import Batch, FrameError, parse_frame
from annotation.models import Attempt
from annotation.services import (
    Appended, AttemptClosed, BatchConflict, attempt_limits, batch_refuse, events_append,
)


def batch_receive(*, attempt: Attempt, raw: str | bytes, received_ms: float) -> tuple[list[dict], Batch | None]:
    """The frames to answer a raw batch with, and the batch if it was stored."""
    try:
        batch = parse_frame(raw, attempt_limits(puzzle=attempt.puzzle))
    except FrameError as error:
        if error.seq is None:
            return [error.as_frame()], None
        # The page drops a batch refused by number; its place is kept so later ones count.
        kept = batch_refuse(attempt_id=attempt.pk, seq=error.seq, code=error.code, message=error.message,
                            received_ms=received_ms)
        return [error.as_frame(), *_acknowledged(kept, attempt)], None
    try:
        appended = events_append(attempt_id=attempt.pk, batch=batch, received_ms=received_ms)
    except AttemptClosed:
        return [FrameError("closed", "this attempt is already submitted", batch.seq).as_frame()], None
    except BatchConflict as conflict:
        return [FrameError("seq_conflict", str(conflict), batch.seq).as_frame()], None
    return _acknowledged(appended, attempt), batch


def _acknowledged(appended: Appended, attempt: Attempt) -> list[dict]:
    replies = [{"type": "ack", "seq": appended.acked}]
    if appended.submitted:
        replies.append(submitted_frame(correct=appended.correct, show=shows_verdict(attempt)))
    return replies


def shows_verdict(attempt: Attempt) -> bool:
    """Whether people see their verdict: the study's choice, else the site's."""
    return attempt.study.show_verdict if attempt.study_id else settings.ARENA_SHOW_VERDICT


def submitted_frame(*, correct: bool | None, show: bool) -> dict:
    # The verdict at most; the truth itself is never sent.
    return {"type": "submitted", "verdict": {"correct": bool(correct)} if show else None}


def attempt_for(*, uid: str, user) -> Attempt | None:
    """The attempt if it belongs to this signed-in user, else None."""
    if not user.is_authenticated:
        return None
    return Attempt.objects.select_related("puzzle", "study").filter(uid=uid, participant__user=user).first()
