"""A "wrong truth" suspect takes people, not accounts: accounts joined from one client address,
answers with no hand behind them and excluded annotators plant none (review/labels.py,
datasets/labels.py). Everyone here joins by the real invite link and answers through the real
intake."""

import time

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.datasets.labels import puzzle_labels
from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.models import Attempt, Enrollment
from annotation.review.labels import consensus_suspects
from annotation.studies.access import client_address
from annotation.studies.quality import enrollment_exclude
from annotation.studies.setup import study_create
from tests.live_stream import Hand, submit_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(verified):
    """One puzzle, which everyone who joins is given."""
    verified(types=("Dice_Count",), per_type=1)
    return study_create(name="Sybils", split="test", puzzles_per_annotator=1, overlap=6)


def joined_from(study, address: str, **headers: str) -> Attempt:
    """A browser at this address opens the invite link, starts, and is shown the puzzle."""
    browser = Client(REMOTE_ADDR=address, **headers)
    browser.get(f"/s/{study.token}/")
    assert browser.post(f"/s/{study.token}/").status_code == 302
    play = browser.get(f"/s/{study.token}/next/")["Location"]
    assert browser.get(play).status_code == 200
    return Attempt.objects.get(uid=play.strip("/").split("/")[-1])


def wrong_without_input(attempt: Attempt) -> None:
    """The same wrong sum an honest wrong answer types, sent as actions with no key behind them."""
    now = time.time() * 1000
    hand = Hand(attempt.puzzle, now - 3000)
    hand.wait(1500).log("act.type", text=str(attempt.puzzle.truth["sum"] + 1))
    hand.wait(200).log("act.submit")
    events_append(attempt_id=attempt.pk, batch=Batch(1, hand.events), received_ms=now)


def suspected(study) -> tuple[list, list]:
    """The review's consensus suspects, and the labels' rows suspect by consensus."""
    rows = puzzle_labels(dataset="generated:5", split="test").rows
    return consensus_suspects(), [row for row in rows if "consensus" in row["suspect_reasons"]]


def test_two_accounts_from_one_address_plant_no_suspect(study):
    for _ in range(2):
        submit_answer(joined_from(study, "203.0.113.7"), correct=False)
    assert Attempt.objects.filter(correct=False, input_ok=True).count() == 2
    assert suspected(study) == ([], [])


def test_two_accounts_from_one_ipv6_home_network_plant_no_suspect(study):
    submit_answer(joined_from(study, "2001:db8:1:2::10"), correct=False)
    submit_answer(joined_from(study, "2001:db8:1:2:ffff::99"), correct=False)
    assert suspected(study) == ([], [])


def test_two_connections_of_one_client_behind_a_proxy_are_one_person(study, settings):
    """A load balancer that appends the client's port to X-Forwarded-For must not make each
    connection another person."""
    settings.ARENA_PROXY_HOPS = 1
    for forwarded in ("203.0.113.7:51234", "203.0.113.7:51300"):
        submit_answer(joined_from(study, "10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded), correct=False)
    assert set(Enrollment.objects.values_list("join_address", flat=True)) == {"203.0.113.7"}
    assert suspected(study) == ([], [])


def test_forwarded_addresses_lose_their_ports_only(settings):
    settings.ARENA_PROXY_HOPS = 1
    addresses = ("[2001:db8::1]:443", "2001:db8::1", "198.51.100.4:80", "198.51.100.4")
    assert [client_address({"HTTP_X_FORWARDED_FOR": a, "REMOTE_ADDR": "10.0.0.2"}) for a in addresses] == [
        "2001:db8::1",
        "2001:db8::1",
        "198.51.100.4",
        "198.51.100.4",
    ]


def test_two_answers_without_input_plant_no_suspect(study):
    for address in ("198.51.100.1", "198.51.100.2"):
        wrong_without_input(joined_from(study, address))
    assert Attempt.objects.filter(correct=False, input_ok=False).count() == 2
    assert suspected(study) == ([], [])


def test_an_excluded_annotators_answer_counts_for_nothing(study):
    submit_answer(joined_from(study, "198.51.100.1"), correct=False)
    excluded = joined_from(study, "198.51.100.2")
    submit_answer(excluded, correct=False)
    boss = get_user_model().objects.create_user("boss", is_staff=True)
    enrollment_exclude(enrollment=Enrollment.objects.get(participant=excluded.participant), by=boss, reason="bot")
    assert suspected(study) == ([], [])


def test_two_people_from_two_addresses_still_plant_one(study):
    submit_answer(joined_from(study, "198.51.100.1"), correct=False)
    submit_answer(joined_from(study, "203.0.113.7"), correct=False)
    suspects, rows = suspected(study)
    assert [s.people for s in suspects] == [2]
    assert [(row["wrong_top_count"], row["wrong_top_share"]) for row in rows] == [(2, 1.0)]
