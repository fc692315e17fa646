"""Flags, the review queue, truth corrections, the consensus audit, exports, and who may see them."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Attempt, AuditLog, Event, Flag, Study
from annotation.review.labels import TruthRejected, consensus_suspects, flag_raise, puzzle_correct_truth
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(verified):
    verified(types=("Dice_Count",), per_type=2)
    # Blocked: everyone meets the same puzzle first (a shuffled study gives each person their own order).
    return study_create(name="Labels", split="test", puzzles_per_annotator=2, overlap=3, order=Study.Order.BLOCKED)


def answered(study, person, name, correct_plan):
    user, _ = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    attempts = []
    for correct in correct_plan:
        attempt = enrollment_next(enrollment=enrollment).attempt
        submit_answer(attempt, correct)
        attempts.append(Attempt.objects.get(pk=attempt.pk))
    return user, attempts


def client_for(user, csrf=False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def staff(db):
    return client_for(get_user_model().objects.create_user("boss", is_staff=True))


def test_an_annotator_flags_their_puzzle_and_the_attempt_is_kept(study, person):
    user, (attempt, _) = answered(study, person, "ann", [True, True])
    client = client_for(user, csrf=True)
    client.get(f"/play/{attempt.uid}/")
    headers = {"X-CSRFToken": client.cookies["csrftoken"].value}
    url = f"/attempts/{attempt.uid}/flag/"
    made = client.post(
        url,
        json.dumps({"reason": "ambiguous", "note": "two dice overlap"}),
        content_type="application/json",
        headers=headers,
    )
    assert made.status_code == 201
    flag = Flag.objects.get()
    assert (flag.reason, flag.note, flag.attempt_id, flag.status) == (
        "ambiguous",
        "two dice overlap",
        attempt.pk,
        "open",
    )
    assert Attempt.objects.get(pk=attempt.pk).correct  # kept as it was
    bad = client.post(url, json.dumps({"reason": "boring"}), content_type="application/json", headers=headers)
    assert bad.status_code == 400 and "unknown reason" in bad.json()["error"]
    intruder, _ = person("mallory")
    other = client_for(intruder)
    assert other.post(url, json.dumps({"reason": "broken"}), content_type="application/json").status_code == 404


def test_retiring_resolves_the_flags_and_is_logged(study, person, staff):
    _, (attempt, _) = answered(study, person, "ann", [True, True])
    flag_raise(attempt=attempt, reason="broken")
    url = f"/review/{attempt.puzzle.uid}/resolve/"
    unconfirmed = staff.post(url, {"action": "retire", "note": "unreadable"}, follow=True)
    assert "tick the box to confirm" in unconfirmed.content.decode()
    assert Puzzle.objects.get(pk=attempt.puzzle_id).status == "verified"  # nothing happens unconfirmed
    response = staff.post(url, {"action": "retire", "note": "unreadable", "confirm": "yes"})
    assert response.status_code == 302
    assert Puzzle.objects.get(pk=attempt.puzzle_id).status == "retired"
    assert Flag.objects.get().status == "retired"
    log = AuditLog.objects.get(action="puzzle_retired")
    assert log.details["flags_resolved"] == 1 and log.details["note"] == "unreadable" and log.by.username == "boss"


def test_correcting_the_truth_rescores_every_attempt_and_is_logged(study, person):
    _, (right, _) = answered(study, person, "ann", [True, True])
    _, wrong_attempts = answered(study, person, "bob", [False, False])
    wrong = next(a for a in wrong_attempts if a.puzzle_id == right.puzzle_id)
    puzzle = Puzzle.objects.get(pk=right.puzzle_id)
    boss = get_user_model().objects.create_user("boss2", is_staff=True)
    changed = puzzle_correct_truth(puzzle=puzzle, truth={**puzzle.truth, "sum": int(wrong.answer)}, by=boss)
    assert changed == 2
    assert Attempt.objects.get(pk=wrong.pk).correct and not Attempt.objects.get(pk=right.pk).correct
    log = AuditLog.objects.get(action="truth_corrected")
    assert log.details["old_truth"]["sum"] != log.details["new_truth"]["sum"] and log.details["attempts_changed"] == 2
    with pytest.raises(TruthRejected):
        puzzle_correct_truth(puzzle=puzzle, truth={"sum": "many"}, by=boss)
    assert Puzzle.objects.get(pk=puzzle.pk).truth["sum"] == int(wrong.answer)


def test_the_same_wrong_answer_from_two_people_makes_a_suspect(study, person, staff):
    answered(study, person, "ann", [False, True])
    answered(study, person, "bob", [False, True])
    answered(study, person, "cid", [True, True])
    suspects = consensus_suspects()
    assert len(suspects) == 1 and suspects[0].people == 2
    page = staff.get("/review/").content.decode()
    assert suspects[0].puzzle_uid in page


def test_the_review_page_draws_answers_and_shows_the_truth_to_staff_only(study, person, staff):
    user, (attempt, _) = answered(study, person, "ann", [False, True])
    flag_raise(attempt=attempt, reason="unsolvable", note="I count differently")
    page = staff.get(f"/review/{attempt.puzzle.uid}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "I count differently" in html and str(attempt.puzzle.truth["sum"]) in html
    annotator = client_for(user)
    for url in (
        "/review/",
        f"/review/{attempt.puzzle.uid}/",
        f"/studies/{study.pk}/report.json",
        f"/studies/{study.pk}/events.jsonl",
        "/dashboard/",
    ):
        assert annotator.get(url).status_code == 302, url  # to the sign-in page
    assert (
        annotator.post(f"/review/{attempt.puzzle.uid}/resolve/", {"action": "retire", "confirm": "yes"}).status_code
        == 302
    )
    assert Puzzle.objects.get(pk=attempt.puzzle_id).status == "verified"


def test_the_event_export_streams_every_event_as_json_lines(study, person, staff):
    answered(study, person, "ann", [True, False])
    response = staff.get(f"/studies/{study.pk}/events.jsonl")
    assert response.streaming and response["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert len(lines) == Event.objects.filter(attempt__study=study).count() > 0
    first = lines[0]
    assert {
        "attempt",
        "participant",
        "participant_kind",
        "puzzle",
        "type",
        "purpose",
        "position",
        "seq",
        "index",
        "k",
        "t",
        "received",
    } <= set(first)
    assert first["k"] == "load" and first["participant_kind"] == "human"
    stored = dict(Attempt.objects.filter(study=study).values_list("uid", "position"))
    assert {(line["attempt"], line["position"]) for line in lines} == {(str(u), p) for u, p in stored.items()}
    assert sorted(stored.values()) == [1, 2]  # each answer's place in the person's run
    report = staff.get(f"/studies/{study.pk}/report.json").json()
    assert report["overall"]["attempts"] == 2
    assert staff.get(f"/studies/{study.pk}/report.exe").status_code == 404
