"""The live admin dashboard: its numbers against hand-made data, its socket, who may see it."""

import asyncio
import json
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.live.attempts import attempt_start, participant_for_user, system_participant
from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.models import Attempt, Enrollment, Flag, Participant
from annotation.reporting.dashboard import dashboard_summary
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.live_stream import socket_at, submit_answer

# Transactions for all: the socket tests' consumer reads through its own database connections.
pytestmark = [pytest.mark.django_db(transaction=True)]
TYPES = ("Dice_Count", "Object_Match")


@pytest.fixture
def study(verified):
    verified(types=TYPES, per_type=3)
    return study_create(name="Pilot", split="test", puzzles_per_annotator=6, overlap=3)


def staff_user(name: str = "boss"):
    return get_user_model().objects.create_user(username=name, password="pw", is_staff=True)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def annotate(study, user, plan: list[bool], tally: Counter) -> Enrollment:
    """The annotator answers their queue as planned; tally counts (type, correct) by hand."""
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    for correct in plan:
        attempt = enrollment_next(enrollment=enrollment).attempt
        submit_answer(attempt, correct)
        tally[(attempt.puzzle.type, correct)] += 1
    return enrollment


def events_at(attempt, received_ms: float) -> None:
    """A batch of page events (no submit) received at that time."""
    events_append(
        attempt_id=attempt.pk,
        batch=Batch(attempt.max_seq + 1, [{"k": "focus", "t": received_ms}]),
        received_ms=received_ms,
    )


def flag(puzzle, participant, reason: str, age_s: float, status: str = Flag.Status.OPEN) -> Flag:
    made = Flag.objects.create(puzzle=puzzle, participant=participant, reason=reason, status=status)
    Flag.objects.filter(pk=made.pk).update(created_at=datetime.now(UTC) - timedelta(seconds=age_s))
    return made


def backdate_submit(attempt, age_s: float) -> None:
    Attempt.objects.filter(pk=attempt.pk).update(submitted_at=datetime.now(UTC) - timedelta(seconds=age_s))


def test_the_summary_matches_hand_made_data(study, person):
    tally: Counter = Counter()
    users = {name: person(name)[0] for name in "abcdef"}
    finisher = annotate(study, users["a"], [True, True, False, True, True, True], tally)
    enrollment_next(enrollment=finisher)  # the step after the last puzzle marks them finished
    annotate(study, users["b"], [True, False, False], tally)
    enrollment_join(study=study, user=users["c"], external_ids={})  # joined, nothing done
    excluded_tally: Counter = Counter()
    excluded = annotate(study, users["d"], [True, True], excluded_tally)
    Enrollment.objects.filter(pk=excluded.pk).update(excluded=True)
    # Outside any study, and an agent: neither counts in Pass@1.
    stray = attempt_start(participant=participant_for_user(user=users["e"]), puzzle=study.slots.first().puzzle)
    submit_answer(stray, False)
    agent = system_participant(kind=Participant.Kind.AGENT, label="bot")
    submit_answer(attempt_start(participant=agent, puzzle=study.slots.first().puzzle), True)
    # f is on a puzzle right now; e's open attempt went quiet two minutes ago.
    now_ms = time.time() * 1000
    events_at(attempt_start(participant=participant_for_user(user=users["f"]), puzzle=stray.puzzle), now_ms)
    quiet = attempt_start(participant=participant_for_user(user=users["e"]), puzzle=stray.puzzle)
    events_at(quiet, now_ms - 120_000)
    # Throughput windows: a's first two answers were five and twenty minutes ago.
    a_attempts = list(Attempt.objects.filter(participant__user=users["a"]).order_by("pk"))
    backdate_submit(a_attempts[0], 300)
    backdate_submit(a_attempts[1], 1200)
    puzzle = stray.puzzle
    # Six people's open flags (a person has at most one open flag per puzzle).
    flags = [
        flag(puzzle, participant_for_user(user=users[name]), reason, age)
        for name, reason, age in [
            ("a", "broken", 30),
            ("b", "ambiguous", 60),
            ("c", "other", 100),
            ("d", "unsolvable", 200),
            ("e", "broken", 250),
            ("f", "other", 900),
        ]
    ]
    flag(puzzle, stray.participant, "offensive", 10, status=Flag.Status.DISMISSED)

    with CaptureQueriesContext(connection) as queries:
        summary = dashboard_summary()

    assert len(queries) <= 10  # a handful of aggregates, whatever the data's size
    # Active: a, b, d and e submitted just now (e's stray attempt), f sent events; c did nothing.
    assert summary["active_annotators"] == 5
    assert summary["studies"] == [
        {
            "id": study.pk,
            "name": "Pilot",
            "enrolled": 4,
            "finished": 1,
            "slots_done": 6 + 3 + 2,
            "slots_total": 18,
            "progress": 11 / 18,
        }
    ]
    expected = {t: (tally[(t, True)], tally[(t, True)] + tally[(t, False)]) for t, _ in tally}
    assert {r["type"]: (r["correct"], r["attempts"]) for r in summary["pass1_by_type"]} == expected
    for row in summary["pass1_by_type"]:
        assert row["pass1"] == pytest.approx(row["correct"] / row["attempts"])
    # Humans' submits: a 6 (one 5 min ago, one 20 min ago), b 3, d 2, e 1; the agent's is not counted.
    assert summary["throughput"] == {"last_1m": 10, "last_10m": 11, "per_min_1m": 10.0, "per_min_10m": 1.1}
    newest = Attempt.objects.filter(participant__kind="human").exclude(submitted_at=None).latest("submitted_at")
    assert summary["latest_submit_ms"] == pytest.approx(newest.submitted_at.timestamp() * 1000)
    assert summary["new_flags"]["open"] == 6 and summary["new_flags"]["recent"] == 5
    assert [f["id"] for f in summary["new_flags"]["latest"]] == [f.pk for f in flags[:5]]
    assert summary["new_flags"]["latest"][0] | {"created_at": None} == {
        "id": flags[0].pk,
        "puzzle_type": puzzle.type,
        "puzzle_uid": puzzle.uid,
        "reason": "broken",
        "created_at": None,
    }


def test_closed_studies_leave_the_dashboard(study, person):
    annotate(study, person("a")[0], [True], Counter())
    study.is_open = False
    study.save()
    summary = dashboard_summary()
    assert summary["studies"] == [] and summary["pass1_by_type"] == []
    assert summary["throughput"]["last_1m"] == 1  # what people did still counts as activity


def truth_only_keys() -> set[str]:
    keys = set()
    for public, truth in Puzzle.objects.values_list("public", "truth"):
        keys |= set(truth) - set(public)
    return keys


def all_keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(all_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(all_keys(v) for v in value))
    return set()


def test_the_summary_and_its_json_hold_no_truth(study, person):
    annotate(study, person("a")[0], [True, False, True], Counter())
    attempt = Attempt.objects.filter(submitted_at__isnull=False).first()
    flag(attempt.puzzle, attempt.participant, "ambiguous", 5)
    hidden = truth_only_keys()
    assert hidden  # the check means something: these types do keep answers out of public
    summary = dashboard_summary()
    served = signed_in(staff_user()).get("/dashboard/summary.json").json()
    for document in (summary, served):
        text = json.dumps(document)
        assert not hidden & all_keys(document)
        assert not [key for key in hidden if f'"{key}"' in text]


def test_staff_get_the_page_and_json_and_others_do_not(person):
    boss = signed_in(staff_user())
    page = boss.get("/dashboard/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="dash-initial"' in html and "arena/dashboard.js" in html and "arena/dashboard.css" in html
    assert boss.get("/dashboard/summary.json").json()["type"] == "summary"
    annotator = signed_in(person("ann")[0])
    for client in (annotator, Client()):
        assert client.get("/dashboard/").status_code == 302  # to the site's sign-in page
        assert client.get("/dashboard/summary.json").status_code == 403


# --- the page in the machine's Chromium ----------------------------------------------------------
@pytest.mark.browser
def test_the_page_goes_live_links_reports_updates_and_falls_back_to_polling(study, person):
    from annotation.agents.server import live_server

    boss = staff_user()
    enrollment = enrollment_join(study=study, user=person("ann")[0], external_ids={})
    enrollment_consent(enrollment=enrollment)
    attempt = enrollment_next(enrollment=enrollment).attempt
    with live_server() as base:
        asyncio.run(_drive_dashboard(base, boss, study, attempt))


async def _drive_dashboard(base: str, boss, study, attempt) -> None:
    from annotation.agents.browser import chromium, signed_in_context

    async with chromium() as browser:
        page = await (await signed_in_context(browser, base, boss)).new_page()
        await page.goto("/dashboard/")
        await page.wait_for_selector('#dash-state[data-state="live"]', timeout=5000)
        for fmt in ("html", "csv", "json", "md"):
            assert await page.locator(f'a[href="/studies/{study.pk}/report.{fmt}"]').count() == 1
        assert await page.text_content("#dash-count-1m") == "0"
        await database_sync_to_async(submit_answer)(attempt, True)
        await page.wait_for_function("document.getElementById('dash-count-1m').textContent === '1'", timeout=5000)
        # A socket that never opens: the page says so and keeps itself current over HTTP.
        refused = await (await signed_in_context(browser, base, boss)).new_page()
        await refused.route_web_socket("**/ws/dashboard/", lambda socket: asyncio.ensure_future(socket.close()))
        await refused.goto("/dashboard/")
        await refused.wait_for_selector('#dash-state[data-state="reconnecting"]', timeout=3000)
        await refused.wait_for_selector('#dash-state[data-state="polling"]', timeout=8000)
        assert await refused.text_content("#dash-count-1m") == "1"


# --- the socket -------------------------------------------------------------------------------
def dashboard_socket(session: str | None) -> WebsocketCommunicator:
    return socket_at("/ws/dashboard/", session)


def session_of(user) -> str:
    return signed_in(user).cookies["sessionid"].value


async def next_summary(socket, until, timeout_s: float = 5.0) -> dict:
    """Summaries as they come, until one satisfies `until` (or the time runs out)."""
    deadline = time.monotonic() + timeout_s
    while True:
        frame = await socket.receive_json_from(timeout=max(0.1, deadline - time.monotonic()))
        assert frame["type"] == "summary"
        if until(frame):
            return frame


@pytest.mark.asyncio
async def test_staff_get_a_summary_at_once_and_a_new_one_after_a_submit(open_attempt):
    session = await database_sync_to_async(lambda: session_of(staff_user()))()
    attempt, _ = await database_sync_to_async(open_attempt)("Dice_Count")
    socket = dashboard_socket(session)
    connected, _ = await socket.connect()
    assert connected
    first = await socket.receive_json_from(timeout=5)
    assert first["type"] == "summary" and first["latest_submit_ms"] is None
    sent_ms = time.time() * 1000
    await database_sync_to_async(submit_answer)(attempt, True)
    after = await next_summary(socket, lambda f: f["latest_submit_ms"] is not None)
    assert after["latest_submit_ms"] >= sent_ms - 1000
    assert after["throughput"]["last_1m"] == 1 and after["active_annotators"] == 1
    await socket.disconnect()
    await asyncio.sleep(0)
    assert not [t for t in asyncio.all_tasks() if "_push_changes" in repr(t.get_coro())]  # the loop stopped


@pytest.mark.asyncio
async def test_nothing_is_sent_while_nothing_changes(study):
    session = await database_sync_to_async(lambda: session_of(staff_user()))()
    socket = dashboard_socket(session)
    await socket.connect()
    await socket.receive_json_from(timeout=5)
    assert await socket.receive_nothing(timeout=2.5)  # two ticks with the same numbers
    await socket.disconnect()


@pytest.mark.asyncio
async def test_annotators_and_strangers_are_refused(person):
    session = await database_sync_to_async(lambda: person("ann")[1])()
    for cookie in (session, None):
        socket = dashboard_socket(cookie)
        await socket.connect()
        reply = await socket.receive_json_from()
        assert reply["type"] == "error" and reply["code"] == "not_allowed"
        assert await socket.receive_output() == {"type": "websocket.close", "code": 4403}
        await socket.disconnect()
