"""Times are the server's: a study's limit runs on its clock from serving the puzzle to the submit's
arrival, the durations a page reports are bounded by what the server saw, and silence counts as
hidden time. Serving times are set in the past rather than waited for."""

import time

import pytest
from django.test import Client

from annotation.live.attempts import attempt_start, participant_for_user
from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.models import Attempt
from annotation.studies.quality import attempt_marks
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from tests.live_stream import Hand, deliver, served_at

pytestmark = pytest.mark.django_db


def first_attempt(study, person, name="ann"):
    user, _ = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    return enrollment_next(enrollment=enrollment).attempt


def answer(hand: Hand, attempt) -> list[dict]:
    """Click the text box, type the right sum, press submit."""
    hand.press_control("text").type(str(attempt.puzzle.truth["sum"]))
    return hand.press_control("submit", {"k": "act.submit"}).events


def ending_now(events: list[dict]) -> list[dict]:
    """The same events, moved in time so that the last one happens now."""
    shift = time.time() * 1000 - 20 - events[-1]["t"]
    return [{**e, "t": e["t"] + shift} for e in events]


@pytest.fixture
def timed(verified):
    verified(types=("Dice_Count",), per_type=2)
    return study_create(name="timed", split="test", puzzles_per_annotator=2, time_limit_s=30)


@pytest.mark.parametrize("attack", ["silent until the end", "load at once, then quiet"])
def test_a_45_s_look_with_6_s_of_stamped_events_fails_a_30_s_limit(timed, person, attack):
    attempt = first_attempt(timed, person)
    now = time.time() * 1000
    served_at(attempt, now - 45_000)
    events = ending_now(answer(Hand(attempt.puzzle, 0).wait(5_500), attempt))
    # What the page's clock claims: about 6 s (the typing's length varies with the sum's digits).
    assert 5_500 < events[-1]["t"] - events[0]["t"] < 7_000
    if attack == "silent until the end":
        deliver(attempt, events)
    else:  # the load goes out as the page opens; the rest, stamped as if 6 s long, at the end
        events_append(attempt_id=attempt.pk, batch=Batch(1, events[:1]), received_ms=now - 44_500)
        deliver(attempt, events[1:], first_seq=2)
    attempt.refresh_from_db()
    assert attempt.correct is False and "the limit is 30 s" in attempt.reason  # right, but too late
    assert attempt.clock_ok is False and attempt.wall_ms >= 44_000  # timed by the server: 45 s, not 6
    assert attempt.input_ok  # a hand typed it: only the time is wrong


def test_a_person_looking_20_s_on_a_30_s_limit_is_on_time_and_timed_by_the_page(timed, person):
    attempt = first_attempt(timed, person)
    now = time.time() * 1000
    served_at(attempt, now - 21_000)
    hand = Hand(attempt.puzzle, now - 20_500).wait(19_000)  # looking, not moving: the page beats
    deliver(attempt, answer(hand, attempt))
    attempt.refresh_from_db()
    assert attempt.correct and attempt.clock_ok and attempt.input_ok
    assert attempt.wall_ms == pytest.approx(hand.t - (now - 20_500))
    assert attempt.active_ms == attempt.wall_ms  # beats: the server heard the page all along


def test_a_first_event_long_after_serving_is_marked_and_timed_by_the_server(open_attempt):
    late, _ = open_attempt("Dice_Count")
    prompt, _ = open_attempt("Dice_Count")
    now = time.time() * 1000
    served_at(late, now - 20_000)
    served_at(prompt, now - 2_600)
    for attempt in (late, prompt):
        deliver(attempt, ending_now(answer(Hand(attempt.puzzle, 0).wait(1_500), attempt)))
        attempt.refresh_from_db()
    # Its events began 18 s after serving: the server's 20 s count, not the page's 2 s.
    assert late.clock_ok is False and late.wall_ms >= 19_900 and late.first_action_ms >= 18_000
    assert prompt.clock_ok is True and prompt.wall_ms < 2_500  # the page's own, precise clock


def test_silence_in_arrival_counts_as_hidden_time(verified, person):
    verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="untimed", split="test", puzzles_per_annotator=3)
    user, _ = person("ann")
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    now = time.time() * 1000
    timelines = [
        lambda hand: hand.wait(2_000).quiet(40_000),  # says nothing, and not that it was hidden
        lambda hand: hand.wait(42_000),  # visible and beating, the pointer still
        lambda hand: hand.wait(2_000).hidden(40_000),  # says it was hidden, and is silent too
    ]
    done = []
    for timeline in timelines:
        attempt = enrollment_next(enrollment=enrollment).attempt
        served_at(attempt, now - 45_100)
        deliver(attempt, answer(timeline(Hand(attempt.puzzle, now - 45_000)), attempt))
        attempt.refresh_from_db()
        assert attempt.clock_ok and attempt.input_ok and attempt.wall_ms > 42_000
        done.append(attempt)
    quiet, looking, tabbed = done
    assert quiet.active_ms < 4_000  # 40 s of silence, less the beat it should have taken
    assert looking.active_ms == looking.wall_ms
    # Hidden and silent are the same 40 s, counted once.
    assert tabbed.active_ms == pytest.approx(tabbed.wall_ms - 40_000, abs=1_000)
    marks = attempt_marks(study=study)
    assert "hidden" in marks[quiet.pk] and "hidden" in marks[tabbed.pk] and looking.pk not in marks


def test_serving_the_puzzle_starts_its_clock_once(stored_puzzle, person):
    user, _ = person("ann")
    participant = participant_for_user(user=user)
    shown, moved_on_to = (attempt_start(participant=participant, puzzle=stored_puzzle("Dice_Count")) for _ in range(2))
    client = Client()
    client.force_login(user)
    assert Attempt.objects.get(pk=shown.pk).served_at is None
    client.get(f"/play/{shown.uid}/")
    first = Attempt.objects.get(pk=shown.pk).served_at
    client.get(f"/play/{shown.uid}/")  # a reload keeps the first moment
    assert first is not None and Attempt.objects.get(pk=shown.pk).served_at == first
    client.get(f"/play/{moved_on_to.uid}/data/")  # moving on in place serves too
    assert Attempt.objects.get(pk=moved_on_to.pk).served_at is not None
