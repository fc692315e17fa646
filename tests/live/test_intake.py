"""Intake's one entry: every frame parsed once and answered by one decision (docs/intake.md)."""

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.live.intake import Decision, batch_receive, frames_store_next
from annotation.models import Attempt, Event
from tests.live_stream import batch, ev

pytestmark = pytest.mark.django_db


def receive(attempt: Attempt, raw: str, at: float):
    return batch_receive(
        attempt=Attempt.objects.select_related("puzzle", "study").get(pk=attempt.pk), raw=raw, received_ms=at
    )


def test_each_frame_gets_one_decision_and_the_frames_of_the_protocol(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    first = batch(1, ev("beat", now))
    stored = receive(attempt, first, now)
    assert (stored.decision, stored.replies) == (Decision.STORED, [{"type": "ack", "seq": 1}])
    resent = receive(attempt, first, now + 1)
    assert (resent.decision, resent.replies) == (Decision.RESENT, [{"type": "ack", "seq": 1}])
    conflict = receive(attempt, batch(1, ev("act.submit", now)), now + 2)
    assert conflict.decision == Decision.CONFLICT and conflict.replies[0]["code"] == "seq_conflict"
    refused = receive(attempt, '{"type": "batch", "seq": 2, "events": []}', now + 3)
    assert refused.decision == Decision.REFUSED and refused.replies[-1] == {"type": "ack", "seq": 2}
    assert not refused.held and Event.objects.get(attempt=attempt, seq=2).kind == Event.REFUSED


def test_a_submit_beyond_a_gap_is_decided_gap_then_closed_once_scored(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    receive(attempt, batch(1, ev("beat", now)), now)
    gap = receive(attempt, batch(3, ev("act.type", now + 1, text="7"), ev("act.submit", now + 2)), now + 2)
    assert (gap.decision, gap.replies) == (Decision.GAP, [{"type": "ack", "seq": 1}])
    scored = receive(attempt, batch(2, ev("beat", now + 1)), now + 3)
    assert scored.decision == Decision.STORED and scored.replies[1]["type"] == "submitted"
    closed = receive(attempt, batch(4, ev("beat", now + 4)), now + 4)
    assert closed.decision == Decision.CLOSED and closed.replies[0]["code"] == "closed"


def test_a_batch_stored_during_a_gap_looks_for_waiting_submits_once(open_attempt):
    """Every batch stored while a batch is missing asks whether a submit waits beyond the gap (for
    a reload that made it whole, or a wait that ran out): one query answers both."""
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    receive(attempt, batch(1, ev("beat", now)), now)
    receive(attempt, batch(3, ev("beat", now + 1)), now + 1)  # batch 2 missing: a gap
    with CaptureQueriesContext(connection) as queries:
        held = receive(attempt, batch(4, ev("beat", now + 2)), now + 2)
    assert held.replies == [{"type": "ack", "seq": 1}]  # stored, acknowledged at the gap's edge
    looks = [q["sql"] for q in queries.captured_queries if "'act.submit'" in q["sql"]]
    assert len(looks) == 1, looks


def test_a_hold_is_started_and_stopped_by_the_last_word_of_a_batch(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    started = receive(attempt, batch(1, ev("act.hold_end", now), ev("act.hold_start", now + 1)), now + 1)
    stopped = receive(attempt, batch(2, ev("act.hold_start", now + 2), ev("act.hold_end", now + 3)), now + 3)
    assert (started.hold, stopped.hold) == ("start", "stop")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement round is PostgreSQL's")
def test_frames_that_are_not_the_usual_next_batch_come_back_parsed_for_the_entry(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    other, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    items = [(attempt, batch(1, ev("beat", now)), now), (attempt, batch(2, ev("beat", now)), now), (other, "{", now)]
    usual, second, broken = frames_store_next(items)
    assert usual.decision == Decision.STORED and usual.replies == [{"type": "ack", "seq": 1}]
    assert second.seq == 2 and broken.code == "bad_frame"  # not stored here, not parsed again
    after = batch_receive(attempt=attempt, raw=second, received_ms=now, next_tried=True)
    assert after.decision == Decision.STORED and after.replies == [{"type": "ack", "seq": 2}]


def _stored_as_read(attempt) -> list[tuple]:
    """An attempt's events as the site reads them back, each value with its type (10 and 10.0 differ)."""
    rows = Event.objects.filter(attempt=attempt).order_by("seq", "index")
    return [
        (seq, index, kind, t, received, sorted((name, type(value), value) for name, value in data.items()))
        for seq, index, kind, t, received, data in rows.values_list("seq", "index", "kind", "t", "received", "data")
    ]


# As a browser writes a batch, but with numbers the way other writers may put them: trailing zeros,
# more digits than a float holds; and text with an escaped quote, a non-ASCII letter and an escape.
AS_WRITTEN = (
    '{"type": "batch", "seq": 1, "events": ['
    '{"k": "pointermove", "t": 1790000000000.12500, "x": 10.50, "y": 0.1234567890123456789, "pointer": "mouse"},'
    '{"pointer": "pen", "y": -0.0, "x": 3.25, "t": 1790000000001.5, "k": "pointerdown", "button": 2},'
    '{"k": "keydown", "t": 1790000000002.0, "key": "\\"\\u0041", "code": "Quote\\/ü"}]}'
)


def test_a_frame_stored_from_its_own_text_reads_back_as_its_events_encoded_again(open_attempt):
    """The usual batch goes to the database as the frame's text when it reads as validated; the
    events read back are then the very values, of the very types, that encoding them gives."""
    from dataclasses import replace

    from annotation.live.intake import batches_append_next, frame_read

    as_text, _ = open_attempt("Dice_Count")
    encoded, _ = open_attempt("Dice_Count")
    parsed = frame_read(attempt=as_text, raw=AS_WRITTEN)
    assert parsed.text == AS_WRITTEN  # taken as written
    assert batches_append_next([(as_text.pk, parsed, 5.0)]) == {(as_text.pk, 1)}
    assert batches_append_next([(encoded.pk, replace(parsed, text=None), 5.0)]) == {(encoded.pk, 1)}
    assert _stored_as_read(as_text) == _stored_as_read(encoded)
    assert _stored_as_read(as_text)[2][5] == [("code", str, "Quote/ü"), ("key", str, '"A')]
    counters = ("acked_seq", "event_count", "event_bytes")
    assert Attempt.objects.filter(pk=as_text.pk).values(*counters).get() == (
        Attempt.objects.filter(pk=encoded.pk).values(*counters).get()
    )


def test_a_frame_whose_numbers_validation_changes_is_encoded_again(open_attempt):
    """An integer where a number is declared is stored as the float validation made of it (as
    ever), and a number with an exponent as its float: neither frame is stored from its text."""
    from annotation.live.intake import frame_read

    attempt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    whole = batch(1, ev("pointermove", now, x=10, y=20.5, pointer="mouse"))
    exponent = batch(2, ev("pointermove", now + 1, x=1.5, y=20.5, pointer="mouse")).replace("1.5", "1.5e0")
    assert frame_read(attempt=attempt, raw=whole).text is None
    assert frame_read(attempt=attempt, raw=exponent).text is None
    assert frame_read(attempt=attempt, raw=whole.encode()).text is None  # a binary frame
    items = [(attempt, whole, now)]
    assert frames_store_next(items)[0].decision == Decision.STORED
    assert frames_store_next([(attempt, exponent, now)])[0].decision == Decision.STORED
    assert [data for *_, data in _stored_as_read(attempt)] == [
        [("pointer", str, "mouse"), ("x", float, 10.0), ("y", float, 20.5)],
        [("pointer", str, "mouse"), ("x", float, 1.5), ("y", float, 20.5)],
    ]


def _gapped(open_attempt, *, ago_s: float):
    """An attempt whose submit (batch 3) has waited ago_s behind batch 2, which never came."""
    attempt, _ = open_attempt("Dice_Count")
    then = time.time() * 1000 - ago_s * 1000
    receive(attempt, batch(1, ev("load", then, w=1280, h=1080, scale=1, state="visible")), then)
    answer = str(attempt.puzzle.truth["sum"])
    gap = receive(attempt, batch(3, ev("act.type", then + 1, text=answer), ev("act.submit", then + 2)), then + 2)
    assert gap.decision == Decision.GAP
    return attempt


def test_any_later_frame_of_the_attempt_scores_a_submit_that_waited_out_the_gap(open_attempt):
    from annotation.live.intake import GAP_WAIT_S

    waited = _gapped(open_attempt, ago_s=GAP_WAIT_S + 1)
    now = time.time() * 1000
    later = receive(waited, batch(4, ev("beat", now)), now)  # the page beats on, by the HTTP fallback
    assert later.replies[0] == {"type": "ack", "seq": 1} and later.replies[1]["type"] == "submitted"
    resent = _gapped(open_attempt, ago_s=GAP_WAIT_S + 1)
    now = time.time() * 1000
    again = receive(resent, batch(3, ev("act.type", now, text="1"), ev("act.submit", now)), now)  # its own resend
    assert again.decision == Decision.RESENT and again.replies[1]["type"] == "submitted"
    for attempt in (waited, resent):
        attempt.refresh_from_db()
        assert attempt.submitted_at is not None and attempt.missing_batches == [2] and attempt.correct
    early = _gapped(open_attempt, ago_s=1)  # still within the wait: the missing batch may come
    now = time.time() * 1000
    assert receive(early, batch(4, ev("beat", now)), now).replies == [{"type": "ack", "seq": 1}]


def test_with_tasks_inline_the_web_process_sweeps_on_the_next_frame(open_attempt, settings, monkeypatch):
    """The embedded default has no broker and so no beat: any page's next frame sweeps (at most
    every GAP_SWEEP_S), scoring another attempt whose page is gone."""
    from annotation.live import intake

    gone = _gapped(open_attempt, ago_s=intake.GAP_WAIT_S + 1)
    other, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setitem(intake._sweep, "due", 0.0)
    receive(other, batch(1, ev("beat", now)), now)
    gone.refresh_from_db()
    assert gone.submitted_at is None  # with a broker, beat's entry sweeps instead
    settings.CELERY_TASK_ALWAYS_EAGER = True
    receive(other, batch(2, ev("beat", now)), now)
    gone.refresh_from_db()
    assert gone.submitted_at is not None and gone.missing_batches == [2]


def test_outbound_frames_are_held_to_their_declaration():
    from annotation.live.frames import ack_frame, error_frame, hold_frame, outbound_problem, submitted_frame

    made = [
        ack_frame(0),
        error_frame("bad_frame", "why", 3),
        error_frame("closed", "why"),
        hold_frame(0.5),
        submitted_frame(correct=True, show=True),
        submitted_frame(correct=True, show=False),
    ]
    assert [outbound_problem(frame) for frame in made] == [None] * len(made)
    wrong = [
        {"type": "ack"},
        {"type": "ack", "seq": 1, "extra": 1},
        {"type": "error", "code": "oops", "message": "m"},
        {"type": "hold", "progress": 2},
        {"type": "submitted", "verdict": {"correct": True, "truth": [1, 2]}},
        {"type": "verdict"},
    ]
    assert all(outbound_problem(frame) for frame in wrong)


def test_every_frame_type_and_error_code_the_page_handles_is_declared():
    """static/arena/events.js acts on frame types and error codes by name: each one is declared
    (live/frames.py), so a renamed frame on either side fails here, not silently in a browser."""
    import re
    from pathlib import Path

    from annotation.live.frames import ERROR_CODES, OUTBOUND

    page = (Path(__file__).resolve().parents[2] / "static" / "arena" / "events.js").read_text()
    handle = page[page.index("  handle(frame) {") :]
    handle = handle[: handle.index("\n  }\n")]
    types = set(re.findall(r'frame\.type === "(\w+)"', handle))
    codes = set(re.findall(r'frame\.code === "(\w+)"', handle))
    for listed in re.findall(r"\[([^\]]*)\]\.includes\(frame\.code\)", handle):
        codes |= set(re.findall(r'"(\w+)"', listed))
    assert types == set(OUTBOUND)  # every declared type is handled, and nothing else
    assert codes and codes <= ERROR_CODES, codes - ERROR_CODES


def test_the_sweep_visits_only_waited_submits_and_one_failing_never_fails_a_store(open_attempt, settings, monkeypatch):
    """The inline sweep runs on some page's frame: an attempt whose scoring raises (here a row whose
    pauses are not pairs) is logged and left, the others are scored, and the frame that
    swept is stored and acknowledged as usual. Gapped attempts with no submit, or a submit still
    within its wait, are not visited at all."""
    from annotation.live import intake

    broken = _gapped(open_attempt, ago_s=intake.GAP_WAIT_S + 1)
    Attempt.objects.filter(pk=broken.pk).update(pauses=[[1.0]])
    fine = _gapped(open_attempt, ago_s=intake.GAP_WAIT_S + 1)
    fresh = _gapped(open_attempt, ago_s=1)
    unsubmitted, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    receive(unsubmitted, batch(1, ev("beat", now)), now)
    receive(unsubmitted, batch(3, ev("beat", now)), now)  # batch 2 never came, and no submit
    assert set(intake.attempts_waiting_out_a_gap(now_ms=now)) == {broken.pk, fine.pk}
    other, _ = open_attempt("Dice_Count")
    settings.CELERY_TASK_ALWAYS_EAGER = True  # no broker: the web process sweeps
    monkeypatch.setitem(intake._sweep, "due", 0.0)
    swept = receive(other, batch(1, ev("beat", now)), now)
    assert swept.decision == Decision.STORED and swept.replies == [{"type": "ack", "seq": 1}]
    states = {a.pk: a.submitted_at is not None for a in Attempt.objects.filter(pk__in=[broken.pk, fine.pk, fresh.pk])}
    assert states == {broken.pk: False, fine.pk: True, fresh.pk: False}
