"""The live page's HTTP side: the page, its data, the fallback for batches, practice attempts."""

import json
import time

import pytest
from django.test import Client

from annotation.live.frames import SEQ_BLOCK
from annotation.models import Attempt, Event
from puzzles.models import Puzzle

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def batch(seq: int, *events) -> str:
    return json.dumps({"type": "batch", "seq": seq, "events": list(events)})


def test_the_page_embeds_public_data_only_and_refuses_other_people(open_attempt, person):
    attempt, _ = open_attempt("Geometry_Click")
    owner = signed_in(attempt.participant.user)
    page = owner.get(f"/play/{attempt.uid}/")
    assert page.status_code == 200
    data = page.context["page_data"]
    assert data["widget"] == "point" and data["auto_submit"] and data["next_seq"] == 1
    assert "truth" not in page.content.decode() and str(attempt.puzzle.truth["point"]) not in page.content.decode()
    fetched = owner.get(f"/play/{attempt.uid}/data/").json()
    # The same data (tokens are masked anew), but for the second load's own range of batch numbers.
    assert (fetched["next_seq"], fetched["acked"]) == (SEQ_BLOCK + 1, SEQ_BLOCK)
    again = {"csrf": None, "next_seq": None, "acked": None}
    assert {**fetched, **again} == {**data, **again}
    intruder, _ = person("mallory")
    assert signed_in(intruder).get(f"/play/{attempt.uid}/").status_code == 404
    assert signed_in(intruder).get(f"/play/{attempt.uid}/data/").status_code == 404
    assert Client().get(f"/play/{attempt.uid}/").status_code == 302  # to the sign-in page


def test_the_http_fallback_stores_batches_and_needs_the_csrf_token(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    client = signed_in(attempt.participant.user)
    client.get(f"/play/{attempt.uid}/")
    token = client.cookies["csrftoken"].value
    now = time.time() * 1000
    body = batch(
        1,
        {"k": "load", "t": now, "w": 1, "h": 1, "scale": 1, "state": "visible"},
        {"k": "act.type", "t": now + 1, "text": str(attempt.puzzle.truth["sum"])},
        {"k": "act.submit", "t": now + 2},
    )
    url = f"/attempts/{attempt.uid}/events/"
    assert client.post(url, body, content_type="application/json").status_code == 403  # no token
    reply = client.post(url, body, content_type="application/json", headers={"X-CSRFToken": token})
    assert reply.json() == [{"type": "ack", "seq": 1}, {"type": "submitted", "verdict": None}]
    again = client.post(f"{url}?csrf={token}", batch(2, {"k": "focus", "t": now + 3}), content_type="application/json")
    assert again.status_code == 400 and again.json()[0]["code"] == "closed"  # a beacon after submit
    assert Attempt.objects.get(pk=attempt.pk).correct
    assert Event.objects.filter(attempt=attempt).count() == 3


def test_the_fallback_refuses_another_persons_attempt_and_bad_frames(open_attempt, person):
    attempt, _ = open_attempt()
    intruder, _ = person("mallory")
    client = signed_in(intruder)
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    url = f"/attempts/{attempt.uid}/events/"
    refused = client.post(
        url,
        batch(1, {"k": "focus", "t": time.time() * 1000}),
        content_type="application/json",
        headers={"X-CSRFToken": token},
    )
    assert refused.status_code == 403 and refused.json()[0]["code"] == "not_allowed"
    owner = signed_in(attempt.participant.user)
    owner.get("/accounts/login/")
    bad = owner.post(
        url, "{not json", content_type="application/json", headers={"X-CSRFToken": owner.cookies["csrftoken"].value}
    )
    assert bad.status_code == 400 and "not JSON" in bad.json()[0]["message"]
    assert not Event.objects.exists()


def test_the_verdict_is_shown_only_when_the_site_says_so(open_attempt, settings):
    settings.ARENA_SHOW_VERDICT = True
    attempt, _ = open_attempt("Geometry_Click")
    client = signed_in(attempt.participant.user)
    client.get("/accounts/login/")
    now = time.time() * 1000
    x, y = attempt.puzzle.truth["point"]
    reply = client.post(
        f"/attempts/{attempt.uid}/events/",
        batch(1, {"k": "act.click", "t": now, "x": x, "y": y}, {"k": "act.submit", "t": now}),
        content_type="application/json",
        headers={"X-CSRFToken": client.cookies["csrftoken"].value},
    )
    assert reply.json()[1] == {"type": "submitted", "verdict": {"correct": True}}


def test_people_may_practise_only_on_replay_verified_puzzles(stored_puzzle, person):
    puzzle = stored_puzzle("Bingo")
    user, _ = person("pat")
    client = Client()
    client.force_login(user)
    assert client.post(f"/puzzles/{puzzle.uid}/try/").status_code == 404  # a draft: not yet verified
    Puzzle.objects.filter(pk=puzzle.pk).update(status=Puzzle.Status.VERIFIED)
    response = client.post(f"/puzzles/{puzzle.uid}/try/")
    attempt = Attempt.objects.get(participant__user=user)
    assert response.status_code == 302 and response["Location"] == f"/play/{attempt.uid}/"
