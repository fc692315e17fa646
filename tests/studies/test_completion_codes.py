"""A code for every way out of a study (issue 22): finishing, finding no place left, a screen too
small for the puzzles, failing gold; each as Prolific asks for it, and shown where the person
leaves, a late joiner of a full study before consenting to anything."""

import re
from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from annotation.models import Enrollment, Study
from annotation.studies.setup import StudySetupError, study_create, study_details_update
from annotation.studies.study_settings import CODES
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db
PID = "?PROLIFIC_PID=late1&STUDY_ID=s1&SESSION_ID=x1"


@pytest.fixture
def one_place(verified) -> Study:
    """One puzzle, one person per puzzle: whoever starts first fills the study."""
    verified(types=("Dice_Count",), per_type=1)
    return study_create(name="Full soon", split="test", puzzles_per_annotator=1)


def started(study: Study, query: str = "") -> Client:
    """A browser that opened the invite link, agreed and was given its puzzle."""
    browser = Client()
    link = f"/s/{study.token}/{query}"
    assert "I agree, start" in browser.get(link).content.decode()
    assert browser.post(link).status_code == 302
    assert browser.get(f"/s/{study.token}/next/")["Location"].startswith("/play/")
    return browser


def page_text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_each_study_has_its_own_code_for_each_way_out(one_place):
    codes = [getattr(one_place, name) for name in CODES]
    assert CODES == ("completion_code", "no_places_code", "screened_out_code", "failed_gold_code")
    assert len(set(codes)) == 4 and all(re.fullmatch(r"[A-Z2-9]{8}", code) for code in codes)


def test_the_code_for_another_way_out_must_not_be_the_completion_code(one_place):
    with pytest.raises(StudySetupError, match="no_places_code"):
        study_details_update(one_place, completion_code="C0DE1234", no_places_code="C0DE1234")
    with pytest.raises(StudySetupError, match="must not be empty"):
        study_details_update(one_place, failed_gold_code=" ")


def test_the_staff_form_takes_a_code_per_way_out_and_shows_them_back(one_place, staff):
    edit = f"/studies/{one_place.pk}/edit/"
    form = staff.get(edit).content.decode()
    for name in CODES:
        assert f'name="{name}"' in form and getattr(one_place, name) in form
    new = page_text(staff.get("/studies/new/"))
    assert "No places code" in new and "Screened out code" in new and "Failed gold code" in new
    posted = {name: getattr(one_place, name) for name in CODES} | {"name": "Renamed"}
    posted |= {"no_places_code": "NOPLACE7", "screened_out_code": "SCREEN42", "failed_gold_code": ""}
    assert staff.post(edit, posted).status_code == 302  # an open study: its wording and codes change
    saved = Study.objects.get(pk=one_place.pk)
    assert (saved.no_places_code, saved.screened_out_code) == ("NOPLACE7", "SCREEN42")
    assert saved.failed_gold_code not in ("", one_place.failed_gold_code)  # empty: a new one
    page = page_text(staff.get(f"/studies/{one_place.pk}/"))
    assert "NOPLACE7" in page and "SCREEN42" in page and saved.failed_gold_code in page


def test_a_late_joiner_of_a_full_study_gets_the_no_places_code_before_consent(one_place):
    started(one_place)
    late = Client()
    page = late.get(f"/s/{one_place.token}/{PID}")
    text = page_text(page)
    assert page.status_code == 200 and "Every place in this study is taken" in text
    assert one_place.no_places_code in text and "I agree, start" not in text
    assert f"cc={one_place.no_places_code}" in text  # back to Prolific with that code
    assert Session.objects.count() == 1  # the first person's; the late visit wrote none
    # A join posted from a page shown before the study filled takes no place either.
    refused = late.post(f"/s/{one_place.token}/{PID}")
    assert refused.status_code == 409 and one_place.no_places_code in refused.content.decode()
    assert not Enrollment.objects.filter(crowd_id="late1").exists()


def test_someone_without_a_place_for_longer_than_the_hold_time_gets_the_no_places_code(verified):
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="Two", split="test", puzzles_per_annotator=2)
    first = started(study)
    second = started(study, PID)  # takes the second puzzle; the first is still held
    play = second.get(f"/s/{study.token}/next/")["Location"]
    enrollment = Enrollment.objects.get(crowd_id="late1")
    submit_answer(enrollment.slots.get().attempts.get(), True)
    waiting = page_text(second.get(f"/s/{study.token}/next/"))
    assert "No puzzle free right now" in waiting and study.no_places_code not in waiting
    assert play.startswith("/play/")
    Enrollment.objects.filter(pk=enrollment.pk).update(
        waiting_since=timezone.now() - timedelta(minutes=study.hold_minutes, seconds=1)
    )
    first.get(f"/s/{study.token}/next/")  # the first person is still at work: their place stays theirs
    gone = page_text(second.get(f"/s/{study.token}/next/"))
    assert "No place is left for you" in gone and study.no_places_code in gone
    assert f"cc={study.no_places_code}" in gone


def test_a_finished_person_who_comes_back_sees_their_code_again(one_place):
    link = f"/s/{one_place.token}/{PID}"
    browser = Client()
    browser.get(link)
    browser.post(link)
    browser.get(f"/s/{one_place.token}/next/")
    enrollment = Enrollment.objects.get(crowd_id="late1")
    resume = browser.get(f"/s/{one_place.token}/pause/").context["resume_url"]
    submit_answer(enrollment.slots.get().attempts.get(), True)
    assert one_place.completion_code in browser.get(f"/s/{one_place.token}/next/").content.decode()
    sessions = Session.objects.count()
    # The same browser without its session (closed and reopened): the invite link, from its cookie.
    browser.cookies.pop("sessionid")
    again = page_text(browser.get(link))
    assert one_place.completion_code in again and "I agree, start" not in again
    assert f"cc={one_place.completion_code}" in again
    # Another device with the resume secret: the code at once, nobody signed in.
    elsewhere = page_text(Client().get(resume))
    assert one_place.completion_code in elsewhere and "Continue" not in elsewhere
    # Whatever became of the study since.
    Study.objects.filter(pk=one_place.pk).update(status=Study.Status.CLOSED, is_open=False)
    assert one_place.completion_code in browser.get(link).content.decode()
    assert Session.objects.count() == sessions


def test_a_person_excluded_as_failing_gold_is_given_the_failed_gold_code(verified, staff):
    pool = verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="Gold", split="test", puzzles_per_annotator=1, gold=[pool[0]])
    browser = started(study, PID)
    enrollment = Enrollment.objects.get(crowd_id="late1")
    qc = staff.get(f"/studies/{study.pk}/annotators/").content.decode()
    assert 'value="failed_gold"' not in qc  # no gold answered yet: nothing to fail
    staff.post(f"/studies/{study.pk}/annotators/{enrollment.pk}/", {"action": "failed_gold"})
    ended = page_text(browser.get(f"/s/{study.token}/next/"))
    assert "Your part in this study has ended" in ended and study.failed_gold_code in ended
    assert f"cc={study.failed_gold_code}" in ended
    staff.post(f"/studies/{study.pk}/annotators/{enrollment.pk}/", {"action": "include"})
    staff.post(f"/studies/{study.pk}/annotators/{enrollment.pk}/", {"action": "exclude", "reason": "tabs"})
    plain = page_text(browser.get(f"/s/{study.token}/next/"))
    assert "Your part in this study has ended" in plain and study.failed_gold_code not in plain


def test_the_invite_page_carries_the_screened_out_code_for_the_device_check(one_place):
    page = page_text(Client().get(f"/s/{one_place.token}/{PID}"))
    assert 'id="screened-out"' in page and one_place.screened_out_code in page
    assert f"cc={one_place.screened_out_code}" in page
