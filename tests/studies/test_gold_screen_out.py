"""Failed gold screens a person out at the moment it is decided (issue 33): the study's gold rule
(Study.gold_screen_out_at) ends their part at the step after the gold answer that fails it, with
the failed-gold code, their places back in the queue; they never reach the completion code."""

import re

import pytest
from django.test import Client

from annotation.models import Attempt, AuditLog, Enrollment, Slot, Study
from annotation.studies.quality import enrollment_include
from annotation.studies.queue import FAILED_GOLD, enrollment_next
from annotation.studies.setup import StudySetupError, study_create
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db
LINK = "?PROLIFIC_PID=g1&SESSION_ID=gs1"


def page_text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def gold_study(verified, *, per_person: int, golds: int, screen_out_at: int | None) -> Study:
    pool = verified(types=("Dice_Count",), per_type=per_person + golds + 1)
    return study_create(
        name="Gold rule",
        split="test",
        puzzles_per_annotator=per_person,
        gold=pool[:golds],
        gold_screen_out_at=screen_out_at,
    )


def answer_until(browser: Client, study: Study, *, wrong_golds: int) -> str:
    """Work through the study in one browser, answering the first wrong_golds gold puzzles wrong
    and everything else right; returns the page the run ends on."""
    link = f"/s/{study.token}/{LINK}"
    browser.get(link)
    browser.post(link)
    wrong_left = wrong_golds
    for _ in range(study.puzzles_total() + 1):
        step = browser.get(f"/s/{study.token}/next/")
        if step.status_code == 200:
            return page_text(step)
        attempt = Attempt.objects.get(uid=step["Location"].split("/")[2])
        wrong = attempt.purpose == Attempt.Purpose.GOLD and wrong_left > 0
        wrong_left -= wrong
        submit_answer(attempt, not wrong)
    raise AssertionError("the run never ended")


def test_a_wrong_gold_answer_screens_out_at_the_next_step_with_the_failed_gold_code(verified):
    study = gold_study(verified, per_person=3, golds=1, screen_out_at=1)
    browser = Client()
    ended = answer_until(browser, study, wrong_golds=1)
    assert "Your part in this study has ended" in ended and study.failed_gold_code in ended
    assert f"cc={study.failed_gold_code}" in ended and study.completion_code not in ended
    enrollment = Enrollment.objects.get(crowd_id="g1")
    assert (enrollment.excluded, enrollment.excluded_reason, enrollment.finished_at) == (True, FAILED_GOLD, None)
    gold = Attempt.objects.get(participant_id=enrollment.participant_id, purpose=Attempt.Purpose.GOLD)
    # At once: after the gold, no further puzzle was handed out.
    assert not Attempt.objects.filter(participant_id=enrollment.participant_id, created_at__gt=gold.created_at)
    log = AuditLog.objects.get(enrollment=enrollment, action=AuditLog.Action.ANNOTATOR_EXCLUDED)
    assert log.by is None and log.details["reason"] == FAILED_GOLD and log.details["reopened"]
    assert not Slot.objects.filter(enrollment=enrollment).exists()  # their places are back in the queue
    again = page_text(browser.get(f"/s/{study.token}/next/"))
    assert study.failed_gold_code in again and study.completion_code not in again
    elsewhere = page_text(Client().get(f"/s/{study.token}/?PROLIFIC_PID=g1"))  # another browser, the same id
    assert study.failed_gold_code in elsewhere and study.completion_code not in elsewhere


def test_a_failing_gold_as_the_last_puzzle_never_gives_the_completion_code(verified):
    study = gold_study(verified, per_person=1, golds=1, screen_out_at=1)  # the gold comes last
    ended = answer_until(Client(), study, wrong_golds=1)
    assert study.failed_gold_code in ended and study.completion_code not in ended
    assert Enrollment.objects.get(crowd_id="g1").finished_at is None


def test_fewer_wrong_golds_than_the_rule_finish_as_usual(verified):
    study = gold_study(verified, per_person=1, golds=2, screen_out_at=2)
    ended = answer_until(Client(), study, wrong_golds=1)
    assert study.completion_code in ended and study.failed_gold_code not in ended
    assert not Enrollment.objects.get(crowd_id="g1").excluded


def test_without_a_rule_a_wrong_gold_leaves_the_decision_to_staff(verified):
    study = gold_study(verified, per_person=1, golds=1, screen_out_at=None)
    ended = answer_until(Client(), study, wrong_golds=1)
    assert study.completion_code in ended and not Enrollment.objects.get(crowd_id="g1").excluded


def test_staff_who_include_someone_screened_out_have_the_last_word(verified, staff):
    study = gold_study(verified, per_person=3, golds=1, screen_out_at=1)
    browser = Client()
    answer_until(browser, study, wrong_golds=1)
    enrollment = Enrollment.objects.get(crowd_id="g1")
    enrollment_include(enrollment=enrollment, by=None)
    step = enrollment_next(enrollment=Enrollment.objects.get(pk=enrollment.pk))
    # Not screened out a second time by the same answers: back at work, or finished when the gold
    # was their last puzzle (their answered places are given back).
    assert step.kind in ("attempt", "finished")
    after = browser.get(f"/s/{study.token}/next/", follow=True)
    assert study.failed_gold_code not in after.content.decode()
    assert not Enrollment.objects.get(pk=enrollment.pk).excluded


def test_set_up_refuses_a_rule_no_run_could_meet(verified):
    with pytest.raises(StudySetupError, match="needs at least 2 gold puzzles; the study has 1"):
        gold_study(verified, per_person=1, golds=1, screen_out_at=2)
