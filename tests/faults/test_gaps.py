"""A batch that never arrives never leaves an attempt unscorable: a submit behind it is scored on
what came (after a bounded wait, or at once when a reload made the missing batch irrelevant), and
the attempt names what was missing."""

import time

import pytest
from django.core.management import call_command

from annotation.live import intake
from annotation.live.frames import Batch
from annotation.live.intake import GAP_WAIT_S, attempt_resolve_gap, events_append
from annotation.models import Attempt
from tests.annotation.conftest import batch, socket_for

pytestmark = pytest.mark.django_db


def ev(kind: str, t: float, **fields) -> dict:
    return {"k": kind, "t": t, **fields}


def load(t: float) -> dict:
    return ev("load", t, w=1280, h=1080, scale=1, state="visible")


def send(attempt, seq: int, *events: dict, at: float) -> intake.Appended:
    return events_append(attempt_id=attempt.pk, batch=Batch(seq, list(events)), received_ms=at)


def test_a_submit_behind_a_missing_batch_is_scored_after_the_wait(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    answer = str(attempt.puzzle.truth["sum"])
    send(attempt, 1, load(now), at=now)
    waiting = send(attempt, 3, ev("act.type", now + 2, text=answer), ev("act.submit", now + 3), at=now + 3)
    assert (waiting.acked, waiting.submitted) == (1, False)  # batch 2 may still come
    assert not attempt_resolve_gap(attempt_id=attempt.pk, now_ms=now + 3 + GAP_WAIT_S * 1000 - 100)
    assert attempt_resolve_gap(attempt_id=attempt.pk, now_ms=now + 3 + GAP_WAIT_S * 1000 + 1)
    scored = Attempt.objects.get(pk=attempt.pk)
    assert scored.submitted_at is not None and scored.answer == answer and scored.correct
    assert scored.missing_batches == [2]


def test_a_complete_answer_after_a_reload_is_scored_at_once_despite_an_earlier_gap(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    send(attempt, 1, load(now), at=now)
    # Batch 2 (the first page's last typing) is lost; the person reloads and answers again.
    appended = send(
        attempt,
        3,
        load(now + 1000),
        ev("act.type", now + 2000, text=str(attempt.puzzle.truth["sum"])),
        ev("act.submit", now + 2100),
        at=now + 2100,
    )
    assert appended.submitted and appended.correct
    scored = Attempt.objects.get(pk=attempt.pk)
    assert scored.missing_batches == [2] and scored.action_count == 1


def test_the_sweep_scores_what_no_socket_is_left_to_resolve(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    past = time.time() * 1000 - (GAP_WAIT_S + 5) * 1000  # the page left long ago
    send(attempt, 1, load(past), at=past)
    send(attempt, 3, ev("act.type", past + 1, text="3"), ev("act.submit", past + 2), at=past + 2)
    call_command("resolve_gaps")
    assert Attempt.objects.get(pk=attempt.pk).missing_batches == [2]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_socket_scores_a_gapped_submit_itself_and_tells_the_page(open_attempt, monkeypatch):
    from channels.db import database_sync_to_async

    from annotation.live import consumers

    monkeypatch.setattr(consumers, "GAP_WAIT_S", 0.1)
    monkeypatch.setattr(intake, "GAP_WAIT_S", 0.1)
    attempt, session = await database_sync_to_async(open_attempt)("Dice_Count")
    now = time.time() * 1000
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    await socket.send_to(text_data=batch(1, load(now)))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    await socket.send_to(text_data=batch(3, ev("act.type", now + 1, text="1"), ev("act.submit", now + 2)))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}  # batch 2 is still missing
    assert await socket.receive_json_from(timeout=5) == {"type": "submitted", "verdict": None}
    await socket.disconnect()
    scored = await database_sync_to_async(Attempt.objects.get)(pk=attempt.pk)
    assert scored.submitted_at is not None and scored.missing_batches == [2]
