"""When a submit counts as made at the time limit (live/scoring.py, time_up_from_ms): within 5 s of
the limit, and never more than a quarter of it, on screen. Scoring (a submit without input at the
limit is the page's own) and the report and QC ("timed out" rather than "wrong") read that one rule."""

import re
import time

import pytest
from django.urls import reverse

from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.models import Attempt, Enrollment
from annotation.reporting.reports import study_report
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from tests.live_stream import Hand, served_at, submit_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def five_s(verified, person):
    """make(name) -> a person's first puzzle of one study with a 5 s limit."""
    verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="quick", split="test", puzzles_per_annotator=1, overlap=3, time_limit_s=5)

    def make(name: str) -> Attempt:
        user, _ = person(name)
        enrollment = enrollment_join(study=study, user=user, external_ids={})
        enrollment_consent(enrollment=enrollment)
        return enrollment_next(enrollment=enrollment).attempt

    return study, make


def test_on_a_5_s_limit_a_wrong_answer_at_3_s_is_wrong_and_one_at_4_6_s_timed_out(five_s):
    study, first_puzzle = five_s
    submit_answer(first_puzzle("early"), False, wall_ms=3_000)
    submit_answer(first_puzzle("late"), False, wall_ms=4_600)
    (row,) = study_report(study=study)["types"]
    assert (row["wrong"], row["timed_out"]) == (1, 1)


def test_the_qc_page_says_what_the_report_says(five_s, staff):
    study, first_puzzle = five_s
    early, late = first_puzzle("early"), first_puzzle("late")
    submit_answer(early, False, wall_ms=3_000)
    submit_answer(late, False, wall_ms=4_600)
    said = {}
    for attempt in (early, late):
        enrollment = Enrollment.objects.get(study=study, participant_id=attempt.participant_id)
        page = staff.get(reverse("annotation:annotator-attempts", args=[study.pk, enrollment.pk])).content.decode()
        said[attempt.pk] = re.findall(r'<span class="verdict verdict-[\w-]+">([^<]+)</span>', page)
    assert said == {early.pk: ["wrong"], late.pk: ["timed out"]}


def test_a_submit_without_input_well_before_a_5_s_limit_is_not_the_pages_own(five_s):
    _, first_puzzle = five_s
    outcomes = {}
    for name, after_ms in (("early", 3_000), ("at the limit", 4_600)):
        attempt = first_puzzle(name)
        now = time.time() * 1000
        served_at(attempt, now - after_ms - 100)
        hand = Hand(attempt.puzzle, now - after_ms).wait(after_ms)
        hand.log("act.submit")  # nothing entered, no press: the page's timer, or a script
        events_append(attempt_id=attempt.pk, batch=Batch(1, hand.events), received_ms=now)
        outcomes[name] = Attempt.objects.get(pk=attempt.pk).input_ok
    assert outcomes == {"early": False, "at the limit": True}
