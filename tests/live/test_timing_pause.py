"""A study's time limit counts time on screen (live/timing.py, "On screen"): a pause the server saw
(the Pause page served, then the puzzle again) and a hidden spell it heard as silence are left out;
a page that kept talking, or a pause never ended by serving the puzzle again, is not.

Each pause is recorded by real requests (the Pause page, the puzzle's page) and then aged in the
database, with the events' receive times, so a 60 s pause needs no 60 s wait; the browser test
(tests/e2e/test_pause_clock.py) pauses for real."""

import time

import pytest
from django.test import Client

from annotation.models import Attempt
from annotation.reporting.reports import study_report
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from tests.live_stream import Hand, deliver, served_at

pytestmark = pytest.mark.django_db
LIMIT_S = 30


@pytest.fixture
def shown(verified, person):
    """A person's first puzzle of a study with a 30 s limit, served by its page; their client."""
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="timed", split="test", puzzles_per_annotator=2, time_limit_s=LIMIT_S)
    user, _ = person("ann")
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    attempt = enrollment_next(enrollment=enrollment).attempt
    client = Client()
    client.force_login(user)
    assert client.get(f"/play/{attempt.uid}/").status_code == 200
    return attempt, client


def pause(attempt, client, *, start_ms: float, end_ms: float | None = None) -> float:
    """The person opens the Pause page, then the puzzle again; the recorded pause is then moved to
    [start_ms, end_ms] (aged: the server's own timestamps, set in the past), or, without end_ms, to
    start at start_ms and end where the server ended it. Returns the pause's end."""
    assert client.get(f"/s/{attempt.study.token}/pause/").status_code == 200
    opened = Attempt.objects.get(pk=attempt.pk).pauses
    assert len(opened) == 1 and opened[0][1] is None  # paused, until the puzzle is shown again
    assert client.get(f"/play/{attempt.uid}/").status_code == 200
    [(start, end)] = Attempt.objects.get(pk=attempt.pk).pauses
    assert start <= end
    end_ms = end if end_ms is None else end_ms
    Attempt.objects.filter(pk=attempt.pk).update(pauses=[[start_ms, end_ms]])
    return end_ms


def answer(hand: Hand, attempt) -> list[dict]:
    hand.press_control("text").type(str(attempt.puzzle.truth["sum"]))
    return hand.press_control("submit", {"k": "act.submit"}).events


def scored(attempt) -> Attempt:
    return Attempt.objects.get(pk=attempt.pk)


def submitted(attempt, events: list[dict], *, t0: float) -> tuple[Attempt, float]:
    """Deliver the events as the page does; the attempt scored, and serving to the submit's
    arrival by the server's clock."""
    deliver(attempt, events)
    return scored(attempt), events[-1]["t"] + 20 - t0


def begun(attempt, client=None) -> tuple[float, Hand]:
    """Served 80 s ago (t0), after a minute's pause from 10.5 s recorded by the client's requests
    when a client is given; the person's hand, on the puzzle from 0.2 s."""
    t0 = time.time() * 1000 - 80_000
    if client is not None:
        pause(attempt, client, start_ms=t0 + 10_500, end_ms=t0 + 70_500)
    served_at(attempt, t0)
    return t0, Hand(attempt.puzzle, t0 + 200)


def left_for_the_pause_page(hand: Hand) -> Hand:
    """After 10 s the page says it is hidden, is silent for the pause, and loads again."""
    hand.wait(10_000).log("visibilitychange", state="hidden")
    hand.quiet(60_400).log("load", w=1280, h=1080, scale=1, state="visible")  # shown again
    return hand


def test_a_60_s_pause_on_a_30_s_limit_is_left_out_of_the_limit_and_of_active_time(shown):
    attempt, client = shown
    t0, hand = begun(attempt, client)
    done, served_ms = submitted(attempt, answer(left_for_the_pause_page(hand).wait(1_000), attempt), t0=t0)
    assert served_ms > 70_000 and done.correct, done.reason  # about 12 s on screen
    # The pause and the hidden spell around it (the page's leaving, its loading) are left out.
    assert served_ms - 61_000 < done.screen_ms < served_ms - 60_000
    assert done.active_ms == pytest.approx(done.wall_ms - 60_000, abs=1_500)
    assert done.input_ok


def test_a_pause_the_page_never_said_it_left_for_gets_no_time(shown):
    """Tab A goes offline and keeps the puzzle on screen; tab B opens the Pause page and, a minute
    later, Continue. A never said "hidden", so the pause is not A's: no time back (else it could be
    done MAX_PAUSES times over). An honest page says it left even when its beacon is lost: the
    "hidden" stays in its saved copy and the next load of the attempt resends it."""
    attempt, client = shown
    t0, hand = begun(attempt, client)
    hand.wait(10_000).quiet(60_400).log("load", w=1280, h=1080, scale=1, state="visible")
    done, served_ms = submitted(attempt, answer(hand.wait(1_000), attempt), t0=t0)
    assert done.correct is False and "the limit is 30 s" in done.reason
    assert done.screen_ms == pytest.approx(served_ms)


def test_a_page_that_hid_for_a_moment_as_the_pause_began_gets_that_moment_only(shown):
    """Tab A says "hidden" as tab B opens the Pause page, "visible" a second later, then goes
    offline (silent) and keeps the puzzle on screen through B's pause: the pause counts only while
    A said it was hidden."""
    attempt, client = shown
    t0, hand = begun(attempt, client)
    hand.wait(10_000).hidden(1_000).quiet(59_400)
    done, served_ms = submitted(attempt, answer(hand.wait(1_000), attempt), t0=t0)
    assert done.correct is False and "the limit is 30 s" in done.reason
    assert done.screen_ms > served_ms - 2_000


def test_a_pause_whose_hidden_arrived_late_with_the_next_load_counts(shown):
    """The beacon at the leaving was lost: the "hidden" comes with the next load's resend."""
    attempt, client = shown
    t0, hand = begun(attempt, client)
    hidden = hand.wait(10_000).log("visibilitychange", state="hidden")
    first = deliver(attempt, hand.events[:-1])
    hand.events.clear()
    hand.quiet(60_400).log("load", w=1280, h=1080, scale=1, state="visible")
    deliver(attempt, [hidden], first_seq=len(first) + 1, latency_ms=60_400)  # resent by the load
    events = answer(hand.wait(1_000), attempt)
    deliver(attempt, events, first_seq=len(first) + 2)
    done = scored(attempt)
    served_ms = events[-1]["t"] + 20 - t0
    assert done.correct, done.reason
    assert served_ms - 61_000 < done.screen_ms < served_ms - 60_000


def test_the_same_silence_without_a_pause_is_too_late(shown):
    attempt, _ = shown
    _, hand = begun(attempt)
    hand.wait(10_000).quiet(60_400).log("load", w=1280, h=1080, scale=1, state="visible")
    deliver(attempt, answer(hand.wait(1_000), attempt))
    done = scored(attempt)
    assert done.correct is False and "the limit is 30 s" in done.reason
    assert done.screen_ms > 70_000


def test_a_tab_that_keeps_the_puzzle_beating_through_the_pause_gets_no_time(shown):
    attempt, client = shown
    _, hand = begun(attempt, client)
    deliver(attempt, answer(hand.wait(71_400), attempt))  # the puzzle stayed open elsewhere, beating
    done = scored(attempt)
    assert done.correct is False and "the limit is 30 s" in done.reason


def test_a_pause_still_open_at_the_submit_gets_no_time(shown):
    attempt, client = shown
    t0 = time.time() * 1000 - 80_000
    assert client.get(f"/s/{attempt.study.token}/pause/").status_code == 200
    Attempt.objects.filter(pk=attempt.pk).update(pauses=[[t0 + 10_500, None]])
    served_at(attempt, t0)
    hand = Hand(attempt.puzzle, t0 + 200).wait(10_000)
    hand.log("visibilitychange", state="hidden")
    hand.quiet(60_400).log("visibilitychange", state="visible")  # never served again: never left
    done, served_ms = submitted(attempt, answer(hand.wait(1_000), attempt), t0=t0)
    # The open pause adds nothing; the hidden spell the page reported, and the server heard as
    # silence, counts as long as the page says: 60.4 s.
    assert done.correct and done.screen_ms == pytest.approx(served_ms - 60_400)


def test_a_hidden_spell_counts_only_as_long_as_the_page_says(shown):
    attempt, _ = shown
    t0, hand = begun(attempt)
    hand.wait(10_000).log("visibilitychange", state="hidden")
    hand.quiet(20_000).log("visibilitychange", state="visible")
    hand.quiet(40_400)  # silent again, and not saying it was hidden: on screen by the limit's count
    done, served_ms = submitted(attempt, answer(hand.wait(1_000), attempt), t0=t0)
    assert done.correct is False and done.screen_ms == pytest.approx(served_ms - 20_000)


def test_the_page_data_after_a_pause_says_the_time_on_screen(shown):
    attempt, client = shown
    t0, hand = begun(attempt)
    hand.wait(10_000).log("visibilitychange", state="hidden")
    deliver(attempt, hand.events)
    ended = pause(attempt, client, start_ms=t0 + 10_500)  # the server's own end: the puzzle shown again
    asked = time.time() * 1000
    data = client.get(f"/play/{attempt.uid}/data/").json()
    answered = time.time() * 1000
    # 10.5 s before the pause, then from its end to the moment the server answered (between the
    # ask and the answer, however slow the box): not 80 s.
    assert 10_500 + asked - ended - 1 <= data["study"]["elapsed_ms"] <= 10_500 + answered - ended + 1


def test_a_wrong_answer_after_a_pause_is_wrong_not_timed_out(shown):
    attempt, client = shown
    t0, hand = begun(attempt, client)
    left_for_the_pause_page(hand).wait(1_000).press_control("text").type("0")
    done, served_ms = submitted(attempt, hand.press_control("submit", {"k": "act.submit"}).events, t0=t0)
    assert done.correct is False and served_ms > LIMIT_S * 1000 and done.screen_ms < LIMIT_S * 1000 / 2
    (row,) = study_report(study=attempt.study)["types"]
    assert (row["wrong"], row["timed_out"]) == (1, 0)  # the report reads the clock on screen too


def test_a_page_that_says_hidden_and_keeps_beating_gains_two_beats_at_most(shown):
    attempt, _ = shown
    t0, hand = begun(attempt)
    hand.wait(10_000).log("visibilitychange", state="hidden")
    hand.wait(60_400).log("visibilitychange", state="visible")  # "hidden", yet beating every second
    done, served_ms = submitted(attempt, answer(hand.wait(1_000), attempt), t0=t0)
    # The longest silence: from the beat before the "hidden" (its own batch aside) to the next.
    assert done.correct is False and done.screen_ms >= served_ms - 2 * 1_000 - 1


def test_the_pause_page_says_the_clock_stops_and_how_long_the_puzzle_is_kept(shown):
    attempt, client = shown
    page = client.get(f"/s/{attempt.study.token}/pause/").content.decode()
    assert "clock is stopped" in page and f"its {LIMIT_S} seconds count only while" in page
    assert f"stays yours for {attempt.study.hold_minutes} minutes" in page


def test_a_page_that_flips_hidden_and_visible_between_its_beats_stays_on_screen(shown):
    """Hidden 0.9 s of every second, visible and beating in the rest: the server hears it all along,
    so the hidden spells fall in no silence and take nothing off (they took 54 s of 60)."""
    attempt, _ = shown
    t0, hand = begun(attempt)
    for _ in range(60):
        hand.wait(100).log("visibilitychange", state="hidden")
        hand.wait(900).log("visibilitychange", state="visible")
    done, served_ms = submitted(attempt, answer(hand.wait(1_000), attempt), t0=t0)
    assert done.correct is False and "the limit is 30 s" in done.reason
    assert done.screen_ms == pytest.approx(served_ms)
