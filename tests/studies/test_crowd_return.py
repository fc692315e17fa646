"""One person per study by their crowd id, on any device (issue 33): a finished person who opens the
link again in another browser sees their own outcome and code, never the no-places code nor the
consent page; a person in progress gets their own run back with the platform session they joined
with, and otherwise a page that says how to continue; never a second enrolment (access.py)."""

import re

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from annotation.models import Attempt, Enrollment, Study
from annotation.studies.quality import enrollment_exclude
from annotation.studies.queue import FAILED_GOLD
from annotation.studies.setup import study_create
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db
LINK = "?PROLIFIC_PID=pid1&STUDY_ID=s1&SESSION_ID=sess1"


def page_text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def joined(study: Study, query: str = LINK) -> Client:
    """A browser that opened the invite link and agreed; it holds its puzzle."""
    browser = Client()
    link = f"/s/{study.token}/{query}"
    assert "I agree, start" in browser.get(link).content.decode()
    assert browser.post(link).status_code == 302
    assert browser.get(f"/s/{study.token}/next/")["Location"].startswith("/play/")
    return browser


def finish(browser: Client, study: Study, crowd_id: str) -> None:
    """Answer every place the person is given, right, until the end page."""
    enrollment = Enrollment.objects.get(study=study, crowd_id=crowd_id)
    for _ in range(study.puzzles_total()):
        open_attempt = Attempt.objects.filter(
            participant_id=enrollment.participant_id, study=study, submitted_at__isnull=True, abandoned_at=None
        ).first()
        if open_attempt is None:
            break
        submit_answer(open_attempt, True)
        browser.get(f"/s/{study.token}/next/")
    assert study.completion_code in browser.get(f"/s/{study.token}/next/").content.decode()


@pytest.fixture
def one_each(verified) -> Study:
    """Two puzzles, one place each, one puzzle per person: two people fill it."""
    verified(types=("Dice_Count",), per_type=2)
    return study_create(name="Two people", split="test", puzzles_per_annotator=1)


def test_a_finished_person_in_another_browser_sees_their_code_in_a_full_study(one_each):
    finish(joined(one_each), one_each, "pid1")
    joined(one_each, "?PROLIFIC_PID=pid2&SESSION_ID=sess2")  # the last place: the study is full
    sessions = Session.objects.count()
    for query in (LINK, "?PROLIFIC_PID=pid1"):  # with their session or without: an outcome is no secret
        page = page_text(Client().get(f"/s/{one_each.token}/{query}"))
        assert 'id="completion-code"' in page and one_each.completion_code in page
        assert f"cc={one_each.completion_code}" in page  # back to Prolific with it
        assert one_each.no_places_code not in page and "I agree, start" not in page
        assert "resume-link" not in page  # the crowd id shows no secret
    assert Session.objects.count() == sessions  # nobody was signed in
    assert Enrollment.objects.filter(study=one_each, crowd_id="pid1").count() == 1


def test_after_an_exclusion_frees_a_place_the_finished_person_is_not_offered_consent_again(one_each):
    finish(joined(one_each), one_each, "pid1")
    joined(one_each, "?PROLIFIC_PID=pid2")
    other = Enrollment.objects.get(crowd_id="pid2")
    enrollment_exclude(enrollment=other, by=staff_user(), reason="tabs")  # a place is free again
    newcomer = page_text(Client().get(f"/s/{one_each.token}/?PROLIFIC_PID=pid3"))
    assert "I agree, start" in newcomer  # the freed place is offered to someone new...
    again = Client()
    page = page_text(again.get(f"/s/{one_each.token}/{LINK}"))
    assert one_each.completion_code in page and "I agree, start" not in page  # ...not to pid1
    posted = again.post(f"/s/{one_each.token}/{LINK}")  # a start posted from an old consent page
    assert one_each.completion_code in page_text(posted)
    assert Enrollment.objects.filter(study=one_each).count() == 2


def staff_user():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get_or_create(username="qc", defaults={"is_staff": True})[0]


def test_a_person_in_progress_gets_their_own_run_back_with_the_session_they_joined_with(one_each):
    first = joined(one_each)
    attempt = Attempt.objects.get(study=one_each)
    phone = Client()
    offer = phone.get(f"/s/{one_each.token}/{LINK}")
    assert offer.status_code == 200 and 'id="from-platform"' in page_text(offer)
    assert phone.get(f"/s/{one_each.token}/next/")["Location"] == f"/s/{one_each.token}/"  # a GET signed nobody in
    resumed = phone.post(f"/s/{one_each.token}/{LINK}", follow=True)
    assert resumed.redirect_chain[-1][0] == f"/play/{attempt.uid}/"  # exactly where they stopped
    assert Enrollment.objects.filter(study=one_each).count() == 1
    # The phone keeps the secret now: the plain link continues there as in the first browser.
    assert "Continue where I stopped" in page_text(phone.get(f"/s/{one_each.token}/?PROLIFIC_PID=pid1"))
    assert first.get(f"/s/{one_each.token}/next/")["Location"] == f"/play/{attempt.uid}/"


@pytest.mark.parametrize(
    "query",
    ["?PROLIFIC_PID=pid1", "?PROLIFIC_PID=pid1&SESSION_ID=guessed", "?PROLIFIC_PID=pid1&SESSION_ID="],
)
def test_a_crowd_id_in_progress_without_its_session_is_told_how_to_continue(one_each, query):
    joined(one_each)
    joined(one_each, "?PROLIFIC_PID=pid2")  # the study is full now
    sessions = Session.objects.count()
    elsewhere = Client()
    page = page_text(elsewhere.get(f"/s/{one_each.token}/{query}"))
    assert "You have started this study in another browser" in page and "resume link" in page
    for code in (one_each.no_places_code, one_each.completion_code, one_each.failed_gold_code):
        assert code not in page  # no way out's code: they are still in
    assert "I agree, start" not in page and "resume-link" not in page
    refused = elsewhere.post(f"/s/{one_each.token}/{query}")
    assert refused.status_code == 409 and 'id="elsewhere"' in refused.content.decode()
    assert elsewhere.get(f"/s/{one_each.token}/next/")["Location"] == f"/s/{one_each.token}/"
    assert Session.objects.count() == sessions and Enrollment.objects.filter(study=one_each).count() == 2


def test_a_person_who_joined_without_a_session_id_is_never_resumed_by_one(one_each):
    joined(one_each, "?PROLIFIC_PID=pid1")  # the link carried no SESSION_ID: nothing to match
    page = page_text(Client().get(f"/s/{one_each.token}/{LINK}"))
    assert "You have started this study in another browser" in page


def test_a_person_excluded_as_failing_gold_sees_that_code_on_another_browser(verified):
    pool = verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="Gold", split="test", puzzles_per_annotator=1, gold=[pool[0]])
    joined(study)
    enrollment_exclude(enrollment=Enrollment.objects.get(crowd_id="pid1"), by=staff_user(), reason=FAILED_GOLD)
    page = page_text(Client().get(f"/s/{study.token}/?PROLIFIC_PID=pid1"))
    assert "Your part in this study has ended" in page and study.failed_gold_code in page
    assert study.completion_code not in page and study.no_places_code not in page
