"""A crowd id is no password; one person, one enrolment; nobody hoards places; no sign-in on GET."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.models import Attempt, Enrollment, Slot, Study
from annotation.studies.access import resume_token
from annotation.studies.queue import enrollment_join, enrollment_next
from annotation.studies.setup import study_create


def joined(study, query="", client=None):
    """A browser that opened the invite link (with its query) and pressed start (the form posts back to the link)."""
    client = client or Client()
    client.get(f"/s/{study.token}/{query}")
    return client, client.post(f"/s/{study.token}/{query}")


@pytest.fixture
def study(verified):
    verified(types=("Dice_Count",), per_type=3)
    # Blocked: everyone is offered the puzzles in one order, so a place given back is the next one
    # taken (a shuffled study gives each person their own order).
    return study_create(name="s", split="test", puzzles_per_annotator=1, order=Study.Order.BLOCKED)


def test_knowing_someones_crowd_id_signs_nobody_in_as_them(study):
    joined(study, "?PROLIFIC_PID=victim")
    attacker = Client()
    page = attacker.get(f"/s/{study.token}/?PROLIFIC_PID=victim")
    # The id's owner is told how to continue (their browser, their resume link, the platform's own
    # link with its session id); nothing in the page lets this browser act as them.
    assert "started this study in another browser" in page.content.decode()
    assert "I agree, start" not in page.content.decode() and "_auth_user_id" not in attacker.session
    refused = attacker.post(f"/s/{study.token}/?PROLIFIC_PID=victim")
    assert refused.status_code == 409 and "_auth_user_id" not in attacker.session
    # Nor with a session id that is not the one the platform gave its owner.
    forged = attacker.post(f"/s/{study.token}/?PROLIFIC_PID=victim&SESSION_ID=guessed")
    assert forged.status_code == 409 and "_auth_user_id" not in attacker.session
    assert attacker.get(f"/s/{study.token}/next/")["Location"] == f"/s/{study.token}/"
    assert Enrollment.objects.filter(study=study).count() == 1


def test_a_forged_or_foreign_resume_token_is_refused(study, verified):
    other = study_create(name="other", split="test", puzzles_per_annotator=1)
    joined(other, "?PROLIFIC_PID=p")
    token = resume_token(Enrollment.objects.get(study=other))
    assert Client().get(f"/s/{study.token}/resume/{token}/").status_code == 404  # another study's
    assert Client().post(f"/s/{study.token}/resume/{token}x/").status_code == 404  # tampered


def test_a_resume_token_never_signs_in_an_account_with_a_password(study, person):
    user, _ = person("staffer")
    user.is_staff = True
    user.save()
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    stranger = Client()
    assert stranger.post(f"/s/{study.token}/resume/{resume_token(enrollment)}/").status_code == 404
    assert "_auth_user_id" not in stranger.session


def test_the_browser_that_joined_continues_with_its_cookie(study):
    browser, started = joined(study, "?PROLIFIC_PID=p1")
    first = browser.get(started["Location"])["Location"]
    browser.session.flush()
    browser.cookies.pop("sessionid")
    again = browser.get(f"/s/{study.token}/?PROLIFIC_PID=p1")
    assert "Continue where I stopped" in again.content.decode() and "_auth_user_id" not in browser.session
    resumed = browser.post(f"/s/{study.token}/?PROLIFIC_PID=p1", follow=True)
    assert resumed.redirect_chain[-1][0] == first


def test_another_persons_id_cannot_be_attached_to_an_enrolment(study):
    attacker, _ = joined(study, "?PROLIFIC_PID=mine")
    attacker.get(f"/s/{study.token}/?PROLIFIC_PID=theirs")
    attacker.post(f"/s/{study.token}/?PROLIFIC_PID=theirs")
    enrollment = Enrollment.objects.get(study=study)
    assert (enrollment.crowd_id, enrollment.external_ids) == ("mine", {"PROLIFIC_PID": "mine"})
    _, started = joined(study, "?PROLIFIC_PID=theirs")
    assert started.status_code == 302  # the real owner of the id still joins


@pytest.mark.django_db(transaction=True)
def test_one_crowd_id_gets_one_enrolment_however_many_browsers_join_at_once(verified):
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=1, overlap=4)
    barrier, codes = threading.Barrier(4), []

    def join():
        try:
            client = Client()
            client.get(f"/s/{study.token}/?workerId=w1")
            barrier.wait()
            codes.append(client.post(f"/s/{study.token}/?workerId=w1").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=join) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [302, 403, 403, 403]
    assert Enrollment.objects.filter(study=study, crowd_id="w1").count() == 1


def test_anonymous_joins_from_one_address_are_rate_limited(study, settings):
    settings.ARENA_JOINS_PER_HOUR = 3
    codes = [joined(study, client=Client(REMOTE_ADDR="203.0.113.9"))[1].status_code for _ in range(4)]
    assert codes == [302, 302, 302, 403]
    assert joined(study, client=Client(REMOTE_ADDR="203.0.113.10"))[1].status_code == 302  # someone else


def test_the_client_address_behind_our_proxy_is_the_forwarded_one(study, settings):
    settings.ARENA_JOINS_PER_HOUR, settings.ARENA_PROXY_HOPS = 1, 1

    def via_proxy(client_ip):
        return Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=f"198.51.100.1, {client_ip}")

    assert joined(study, client=via_proxy("203.0.113.1"))[1].status_code == 302
    assert joined(study, client=via_proxy("203.0.113.2"))[1].status_code == 302  # not all one address
    assert joined(study, client=via_proxy("203.0.113.2"))[1].status_code == 403


def store(attempt, *events, at):
    """Store a batch of events as if received at `at` (a datetime)."""
    received = at.timestamp() * 1000
    rows = [{"k": kind, "t": received, **fields} for kind, fields in events]
    events_append(attempt_id=attempt.pk, batch=Batch(attempt.max_seq + 1, rows), received_ms=received)
    attempt.refresh_from_db()


def test_a_place_taken_and_never_acted_on_goes_back_after_the_hold_time(study, person):
    hoarder, _ = joined(study)
    hoarder.get(f"/s/{study.token}/next/")
    held = Slot.objects.get(study=study, enrollment__isnull=False)
    later = timezone.now() + timedelta(minutes=study.hold_minutes + 1)
    enrollment = Enrollment.objects.get(study=study)
    attempt = Attempt.objects.get(slot=held)
    load = ("load", {"w": 1280, "h": 1080, "scale": 1, "state": "visible"})
    store(attempt, load, ("beat", {}), at=later - timedelta(minutes=1))  # the page open, nobody acting
    for _ in range(3):  # asking again and again does not keep it
        enrollment_next(enrollment=enrollment, now=later)
    assert Slot.objects.get(pk=held.pk).expires_at < later
    other, _ = person("other")
    rival = enrollment_join(study=study, user=other, external_ids={})
    rival.consented_at = timezone.now()
    rival.save()
    assert enrollment_next(enrollment=rival, now=later).attempt.puzzle_id == held.puzzle_id


def test_a_place_is_kept_while_its_holder_acts(study):
    browser, _ = joined(study)
    browser.get(f"/s/{study.token}/next/")
    held = Slot.objects.get(study=study, enrollment__isnull=False)
    later = timezone.now() + timedelta(minutes=study.hold_minutes + 1)
    move = ("pointermove", {"x": 600.0, "y": 500.0, "pointer": "mouse"})
    store(Attempt.objects.get(slot=held), move, at=later - timedelta(minutes=1))
    enrollment_next(enrollment=Enrollment.objects.get(study=study), now=later)
    assert Slot.objects.get(pk=held.pk).expires_at > later


def test_a_study_may_require_a_crowd_id(verified):
    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="s", split="test", puzzles_per_annotator=1, require_crowd_id=True)
    assert joined(study)[1].status_code == 403
    assert joined(study, "?PROLIFIC_PID=p")[1].status_code == 302


def test_the_invite_page_signs_nobody_in_on_get(study):
    browser = Client()
    assert browser.get(f"/s/{study.token}/?PROLIFIC_PID=x").status_code == 200
    assert "_auth_user_id" not in browser.session and not Enrollment.objects.exists()


@pytest.mark.parametrize("value", ["a\x00b", "a\nb", "x" * 101])
def test_a_crowd_id_with_control_characters_or_too_long_is_a_clear_400(study, value):
    page = Client().get(f"/s/{study.token}/", {"PROLIFIC_PID": value})
    assert page.status_code == 400 and "PROLIFIC_PID must be printable text" in page.content.decode()
