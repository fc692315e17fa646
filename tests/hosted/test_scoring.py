"""A hosted attempt's scoring and what its page hears (docs/hosted.md, "The verdict"), without a
browser: the proxy's answer() in this process against the real stand-in, the page's batches through
live intake's one entry, as the recorder sends them.

- the verdict is the peer's reply to the one forwarded check, never the page's word;
- the attempt is scored when both the check's final reply and the page's submit have come,
  whichever comes second, under the attempt's row lock; a submit alone scores nothing;
- at the time limit without a check: timed out, and the check that follows never reaches the peer;
- a check answered whose page never sends its submit: the sweep scores it on what came;
- ARENA_SHOW_VERDICT (and practice, and the study's own choice): the page hears its verdict only
  where the person may see it; otherwise only that its answer was received.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from annotation.hosted.proxy import RECEIVED, SUBMITTED_HEADER, Request, Response, answer
from annotation.hosted.verdicts import ALREADY_ANSWERED, pin_of
from annotation.live.attempts import attempt_serve, attempt_start, participant_for_user
from annotation.live.intake import GAP_WAIT_S, attempts_resolve_gaps, batch_receive
from annotation.live.scoring import NO_CHECK, TIMED_OUT
from annotation.models import Attempt, HostedCheck, Study
from puzzles.models import Puzzle
from tests.hosted import standin as data
from tests.hosted.conftest import BENCHMARK

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def person(transactional_db):
    user = get_user_model().objects.create_user(username="pat", password="pw")
    return participant_for_user(user=user)


def dice(index: int = 0) -> Puzzle:
    return Puzzle.objects.filter(type=f"{BENCHMARK}:Dice_Roll_Path").order_by("index")[index]


def opened(person: Any, puzzle: Puzzle, **fields: Any) -> Attempt:
    attempt = attempt_start(participant=person, puzzle=puzzle)
    if fields:
        Attempt.objects.filter(pk=attempt.pk).update(**fields)
        attempt.refresh_from_db()
    attempt_serve(attempt=attempt)
    return Attempt.objects.select_related("puzzle", "study").get(pk=attempt.pk)


def post_check(attempt: Attempt, sent: dict[str, Any]) -> Response:
    """The page's own post to check_answer, as the proxy answers it."""
    pin = pin_of(attempt.uid)
    assert pin is not None
    body = json.dumps(sent).encode()
    return answer(pin, Request("POST", "/api/check_answer", "", {"content-type": "application/json"}, body))


def send(attempt: Attempt, seq: int, events: list[dict[str, Any]], at_ms: float) -> list[dict[str, Any]]:
    """One batch of the recorder's, through intake's one entry."""
    raw = json.dumps({"type": "batch", "seq": seq, "events": events})
    return batch_receive(attempt=attempt, raw=raw, received_ms=at_ms).replies


def hand(start_ms: float) -> list[dict[str, Any]]:
    """What a person's page logs before its answer goes: a load, a move, a press, a key."""
    return [
        {"k": "load", "t": start_ms, "w": 1280, "h": 900, "scale": 1, "state": "visible"},
        {"k": "pointermove", "t": start_ms + 100, "x": 40, "y": 60, "pointer": "mouse"},
        {"k": "pointerdown", "t": start_ms + 200, "x": 40, "y": 60, "button": 0, "pointer": "mouse"},
        {"k": "pointerup", "t": start_ms + 260, "x": 40, "y": 60, "button": 0, "pointer": "mouse"},
        {"k": "keydown", "t": start_ms + 400, "key": "4", "code": "Digit4"},
    ]


def submit(at_ms: float) -> list[dict[str, Any]]:
    return [{"k": "act.submit", "t": at_ms}]


def now_ms() -> float:
    return time.time() * 1000


def checks_received(standin: Any) -> list[dict[str, Any]]:
    """The check_answer calls the stand-in received (the draw's own among them)."""
    _, calls = standin.json("GET", "/_standin/log")
    return [call for call in calls if call["route"] == "check"]


def test_the_check_first_then_the_pages_submit_scores_the_peers_verdict(benchmark, standin, person):
    attempt = opened(person, dice())
    before = len(checks_received(standin))
    start = now_ms()
    send(attempt, 1, hand(start), start + 500)
    truth = dice().truth["answers"][0]
    # The page says it is right and slow; the peer hears the answer alone, and says it is wrong.
    said = post_check(attempt, {"puzzle_id": "another", "answer": truth + 1, "correct": True, "elapsed_time": 99})
    assert said.status == 200 and (SUBMITTED_HEADER, "1") in said.headers
    attempt.refresh_from_db()
    assert attempt.submitted_at is None  # the page's submit has not come: its events are still arriving
    assert HostedCheck.objects.get(attempt=attempt).correct is False

    replies = send(attempt, 2, submit(start + 900), start + 1000)
    attempt.refresh_from_db()
    assert attempt.is_submitted and attempt.correct is False and attempt.answer == truth + 1
    assert attempt.reason.startswith(f"{BENCHMARK}'s verdict: not correct")
    assert {"type": "submitted", "verdict": None} in replies  # hidden: the site's default
    assert attempt.input_ok and attempt.clock_ok and attempt.wall_ms == pytest.approx(900)
    forwarded = checks_received(standin)[before:]
    assert [(c["puzzle_id"], c["answer"], c["correct"]) for c in forwarded] == [
        (dice().public["hosted"]["puzzle_id"], truth + 1, False)
    ]


def test_the_pages_submit_first_waits_for_the_check_which_then_scores(benchmark, person):
    attempt = opened(person, dice())
    start = now_ms()
    send(attempt, 1, hand(start) + submit(start + 500), start + 600)  # a forged or early submit
    attempt.refresh_from_db()
    assert not attempt.is_closed  # no check answered: nothing to score, the attempt stays open

    post_check(attempt, {"answer": dice().truth["answers"][0]})
    attempt.refresh_from_db()
    assert attempt.is_submitted and attempt.correct is True  # scored under the proxy's own lock
    assert attempt.input_ok


def test_a_second_check_is_refused_and_a_page_without_a_hand_is_marked(benchmark, standin, person):
    attempt = opened(person, dice())
    before = len(checks_received(standin))
    start = now_ms()
    send(attempt, 1, [{"k": "load", "t": start, "w": 1, "h": 1, "scale": 1, "state": "visible"}], start + 100)
    post_check(attempt, {"answer": dice().truth["answers"][0]})
    again = post_check(attempt, {"answer": 1})
    assert (again.status, json.loads(again.body)) == (409, {"error": ALREADY_ANSWERED})
    send(attempt, 2, submit(start + 300), start + 400)
    attempt.refresh_from_db()
    assert attempt.correct is True and attempt.input_ok is False
    assert attempt.input_problem == "no press or key on the page before its answer was sent"
    assert len(checks_received(standin)) == before + 1


def test_at_the_time_limit_without_a_check_it_times_out_and_no_check_follows(benchmark, standin, person):
    study = Study.objects.create(name="limit", split="test", puzzles_per_annotator=1, time_limit_s=10)
    before = len(checks_received(standin))
    served = now_ms()
    attempt = opened(person, dice(), study=study)
    Attempt.objects.filter(pk=attempt.pk).update(served_at=datetime.fromtimestamp((served - 10_000) / 1000, tz=UTC))
    attempt.refresh_from_db()
    send(attempt, 1, hand(served - 9_900), served - 9_800)
    send(attempt, 2, submit(served - 50), served)  # the play page's time-up: the recorder's submit
    attempt.refresh_from_db()
    assert attempt.is_submitted and attempt.correct is False
    assert attempt.reason.startswith(TIMED_OUT) and NO_CHECK in attempt.reason
    said = post_check(attempt, {"answer": dice().truth["answers"][0]})
    assert said.status == 409
    assert len(checks_received(standin)) == before  # refused here, never forwarded


def test_a_check_whose_page_never_submits_is_scored_by_the_sweep(benchmark, person):
    attempt = opened(person, dice())
    start = now_ms()
    send(attempt, 1, hand(start), start + 500)
    post_check(attempt, {"answer": dice().truth["answers"][0]})
    assert attempts_resolve_gaps(now_ms=now_ms()) == 0  # too soon: the page's submit may be on its way
    assert attempts_resolve_gaps(now_ms=now_ms() + GAP_WAIT_S * 1000 + 1000) == 1
    attempt.refresh_from_db()
    assert attempt.is_submitted and attempt.correct is True
    assert attempt.input_ok is False and attempt.input_problem == "the page sent no submit"


@pytest.mark.parametrize(
    ("site_shows", "purpose", "study_shows", "heard"),
    [
        (False, Attempt.Purpose.SCORED, None, False),
        (True, Attempt.Purpose.SCORED, None, True),
        (False, Attempt.Purpose.PRACTICE, None, True),  # practice teaches the rules: always shown
        (True, Attempt.Purpose.SCORED, False, False),  # a study's own choice wins over the site's
        (False, Attempt.Purpose.SCORED, True, True),
    ],
)
def test_the_page_hears_its_verdict_only_where_the_person_may_see_it(
    benchmark, person, settings, site_shows, purpose, study_shows, heard
):
    settings.ARENA_SHOW_VERDICT = site_shows
    study = None
    if study_shows is not None:
        study = Study.objects.create(name="v", split="test", puzzles_per_annotator=1, show_verdict=study_shows)
    attempt = opened(person, dice(), purpose=purpose, study=study)
    said = post_check(attempt, {"answer": dice().truth["answers"][0]})
    body = json.loads(said.body)
    assert (SUBMITTED_HEADER, "1") in said.headers
    if heard:
        assert body["correct"] is True and not set(body) & {"correct_answer", "user_answer", "details"}
    else:
        assert body == RECEIVED
    assert not any(value.encode() in said.body for value in data.truth_values())
    start = now_ms()
    replies = send(attempt, 1, hand(start) + submit(start + 500), start + 600)
    verdict = next(reply["verdict"] for reply in replies if reply["type"] == "submitted")
    assert verdict == ({"correct": True} if heard else None)


def test_a_multi_step_familys_steps_move_the_page_on_and_only_the_last_is_the_verdict(benchmark, person):
    red_dot = Puzzle.objects.filter(type=f"{BENCHMARK}:Red_Dot").order_by("index").first()
    attempt = opened(person, red_dot)
    pin = pin_of(attempt.uid)
    assert pin is not None
    fetched = answer(pin, Request("GET", "/api/get_puzzle", "type=Red_Dot", {}))
    assert fetched.status == 200
    replies = [post_check(attempt, {"answer": step}) for step in red_dot.truth["answers"]]
    steps = [json.loads(reply.body) for reply in replies]
    assert [step.get("status") for step in steps[:-1]] == ["continue"] * (data.RED_DOT_HITS - 1)
    assert all("next_dot" in step for step in steps[:-1])  # the page must draw the next dot
    assert steps[-1] == RECEIVED
    assert [(SUBMITTED_HEADER, "1") in reply.headers for reply in replies] == [False] * (data.RED_DOT_HITS - 1) + [True]
    start = now_ms()
    send(attempt, 1, hand(start) + submit(start + 500), start + 600)
    attempt.refresh_from_db()
    assert attempt.correct is True and attempt.answer == red_dot.truth["answers"]


class Logged:
    def __init__(self, kind: str, t: float, **data: Any) -> None:
        self.kind, self.t, self.received, self.data = kind, t, t, data


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([Logged("pointermove", 1), Logged("pointerdown", 5), Logged("pointerup", 5), Logged("act.submit", 9)], ""),
        ([Logged("pointerdown", 5), Logged("pointerup", 6), Logged("act.submit", 9)], "no pointer movement"),
        ([Logged("pointermove", 1), Logged("pointerdown", 5), Logged("act.submit", 9)], "never released"),
        ([Logged("pointermove", 1), Logged("act.submit", 9)], "no press or key"),
        ([Logged("focusin", 1, target="other"), Logged("keydown", 5, key="7"), Logged("act.submit", 9)], ""),
    ],
)
def test_a_hosted_pages_submit_needs_a_hand_before_it(events, problem):
    from annotation.live.evidence import page_input_evidence

    evidence = page_input_evidence(events)
    assert evidence.ok is (problem == "") and problem in evidence.problem
