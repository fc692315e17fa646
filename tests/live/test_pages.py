"""Two pages of one attempt (two browsers, or a reload resending what the last load left): each
load numbers its batches in a range of its own, so nothing one page sends meets the other's
numbers; each is acknowledged within its range; the answer is the submitting page's; and a batch
that cannot be stored is named on the attempt (docs/events.md, "Pages")."""

import json
import time

import pytest
from django.test import Client

from annotation.live.attempts import attempt_new_page
from annotation.live.frames import SEQ_BLOCK, FrameError, parse_batch
from annotation.live.intake import Decision, batch_receive
from annotation.models import Attempt, Event
from tests.live_stream import batch, ev, load

pytestmark = pytest.mark.django_db


def receive(attempt: Attempt, raw: str, at: float):
    return batch_receive(
        attempt=Attempt.objects.select_related("puzzle", "study").get(pk=attempt.pk), raw=raw, received_ms=at
    )


def typed(text: str, t: float) -> list[dict]:
    """A typed answer as the page logs it: the text box takes the focus, a key, its input, the action."""
    return [
        ev("focusin", t, target="text"),
        ev("keydown", t + 1, key=text[-1], code="Digit1"),
        ev("input", t + 2, input_type="insertText"),
        ev("act.type", t + 2, text=text),
        ev("keyup", t + 3, key=text[-1], code="Digit1"),
    ]


def test_each_load_gets_a_range_of_its_own(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    firsts = [attempt_new_page(attempt=attempt) for _ in range(3)]
    assert firsts == [1, SEQ_BLOCK + 1, 2 * SEQ_BLOCK + 1]
    assert Attempt.objects.get(pk=attempt.pk).pages_served == 3


def test_an_attempt_with_batches_from_before_the_ranges_starts_its_next_load_on_a_new_one(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    Attempt.objects.filter(pk=attempt.pk).update(max_seq=7, acked_seq=7)  # numbered 1..7, no load counted
    assert attempt_new_page(attempt=Attempt.objects.get(pk=attempt.pk)) == SEQ_BLOCK + 1


def test_two_pages_interleaved_lose_nothing_and_each_is_acknowledged_within_its_range(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    a, b = (attempt_new_page(attempt=attempt) for _ in range(2))
    now = time.time() * 1000
    answers = [
        receive(attempt, batch(a, load(now)), now),
        receive(attempt, batch(a + 1, ev("beat", now + 1)), now + 1),
        receive(attempt, batch(b, load(now + 2)), now + 2),  # the second browser
        receive(attempt, batch(b + 1, ev("beat", now + 3)), now + 3),
        receive(attempt, batch(a + 2, ev("beat", now + 4)), now + 4),  # the first resumes: its saved batch
        receive(attempt, batch(b + 2, ev("beat", now + 5)), now + 5),
        receive(attempt, batch(b + 1, ev("beat", now + 3)), now + 6),  # a resend of the second's
        receive(attempt, batch(a + 1, ev("beat", now + 1)), now + 7),  # and of the first's
    ]
    assert [(r.decision, r.replies) for r in answers] == [
        (Decision.STORED, [{"type": "ack", "seq": a}]),
        (Decision.STORED, [{"type": "ack", "seq": a + 1}]),
        (Decision.STORED, [{"type": "ack", "seq": b}]),
        (Decision.STORED, [{"type": "ack", "seq": b + 1}]),
        (Decision.STORED, [{"type": "ack", "seq": a + 2}]),
        (Decision.STORED, [{"type": "ack", "seq": b + 2}]),
        (Decision.RESENT, [{"type": "ack", "seq": b + 2}]),
        (Decision.RESENT, [{"type": "ack", "seq": a + 2}]),
    ]
    stored = sorted(Event.objects.filter(attempt=attempt).values_list("seq", flat=True))
    assert stored == [a, a + 1, a + 2, b, b + 1, b + 2]
    assert Attempt.objects.get(pk=attempt.pk).unstored_batches == []


@pytest.mark.parametrize("who_submits", ["first", "second"])
def test_the_answer_is_the_submitting_pages_own(open_attempt, who_submits):
    """Each page shows its own state: what the other page typed was never on its screen. The
    first page types the right sum, the second a wrong one; whichever submits is judged on its own."""
    attempt, _ = open_attempt("Dice_Count")
    right = str(attempt.puzzle.truth["sum"])
    a, b = (attempt_new_page(attempt=attempt) for _ in range(2))
    now = time.time() * 1000
    receive(attempt, batch(a, load(now), ev("pointermove", now + 1, x=640, y=900, pointer="mouse")), now + 10)
    receive(attempt, batch(b, load(now + 20), ev("pointermove", now + 21, x=640, y=900, pointer="mouse")), now + 30)
    receive(attempt, batch(a + 1, *typed(right, now + 40)), now + 50)
    receive(attempt, batch(b + 1, *typed(right + "1", now + 60)), now + 70)
    page = a + 2 if who_submits == "first" else b + 2
    submitted = receive(attempt, batch(page, ev("act.submit", now + 80)), now + 90)
    assert submitted.decision == Decision.STORED and submitted.replies[-1]["type"] == "submitted"
    attempt.refresh_from_db()
    assert attempt.correct is (who_submits == "first"), attempt.reason
    assert attempt.missing_batches == [] and attempt.scored_through == page


def test_a_batch_that_cannot_be_stored_is_named_on_the_attempt(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    a, b = (attempt_new_page(attempt=attempt) for _ in range(2))
    now = time.time() * 1000
    receive(attempt, batch(a, load(now), *typed(str(attempt.puzzle.truth["sum"]), now + 1)), now + 10)
    clash = receive(attempt, batch(a, load(now), ev("beat", now + 2)), now + 11)  # another page on a's range
    assert clash.decision == Decision.CONFLICT and clash.replies[0]["code"] == "seq_conflict"
    receive(attempt, batch(a + 1, ev("act.submit", now + 20)), now + 20)
    late = receive(attempt, batch(b, load(now + 5), ev("beat", now + 6)), now + 30)  # after the submit
    assert late.decision == Decision.CLOSED
    receive(attempt, batch(b, load(now + 5), ev("beat", now + 6)), now + 31)  # sent again: named once
    assert Attempt.objects.get(pk=attempt.pk).unstored_batches == [
        {"seq": a, "events": 2, "why": "seq_conflict"},
        {"seq": b, "events": 2, "why": "closed"},
    ]


def test_a_multiple_of_the_range_is_no_batch_number():
    with pytest.raises(FrameError, match="no batch number"):
        parse_batch({"type": "batch", "seq": SEQ_BLOCK, "events": [ev("beat")]}, limits=None)


def test_the_fallback_takes_several_batches_in_one_request_each_answered_as_alone(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    client = Client(enforce_csrf_checks=True)
    client.force_login(attempt.participant.user)
    data = client.get(f"/play/{attempt.uid}/").context["page_data"]
    first, now = data["next_seq"], time.time() * 1000
    frames = [
        {"type": "batch", "seq": first, "events": [load(now)]},
        {"type": "batch", "seq": first + 1, "events": []},  # refused: its place is kept
        {"type": "batch", "seq": first + 2, "events": [ev("beat", now + 1)]},
    ]
    post = client.post(
        data["events_url"], json.dumps(frames), content_type="application/json", headers={"X-CSRFToken": data["csrf"]}
    )
    assert post.status_code == 200
    replies = post.json()
    assert [r["type"] for r in replies] == ["ack", "error", "ack", "ack"]
    assert [r["seq"] for r in replies] == [first, first + 1, first + 1, first + 2]
    kinds = list(Event.objects.filter(attempt=attempt).order_by("seq").values_list("kind", flat=True))
    assert kinds == ["load", Event.REFUSED, "beat"]
    too_many = [{"type": "batch", "seq": first + 3 + i, "events": [ev("beat")]} for i in range(data["post_max"] + 1)]
    refused = client.post(
        data["events_url"], json.dumps(too_many), content_type="application/json", headers={"X-CSRFToken": data["csrf"]}
    )
    assert refused.status_code == 400 and refused.json()[0]["code"] == "bad_frame"
