"""People in a study over a hosted benchmark, end to end in real Chromium (docs/hosted.md, docs/studies.md).

The stand-in is registered and drawn, its puzzles verified by the page check; a study mixes our own
Dice_Count with two of the stand-in's families (Dice_Roll_Path, stateless; Red_Dot, stateful,
multi-step and server-timed), with a hosted practice puzzle (Spooky_Size) and a hosted gold. Two
people join by the invite link and work through it on our play page, the peer's page framed below
the study bar. Then: every stored verdict is the stand-in's own answer to the same submission; no
response either browser received carries a truth value; every batch each recorder numbered is
stored; times come from the events; the staff's pages show the study.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.async_api import TimeoutError as PlaywrightTimeout

from annotation.agents.browser import VIEWPORT, chromium, perform, wait_submitted
from annotation.agents.server import live_server
from annotation.hosted.entries import enter, entry_for
from annotation.hosted.pagecheck import benchmark_check, recorder_done
from annotation.hosted.proxy import RECEIVED
from annotation.live.frames import SEQ_BLOCK
from annotation.models import Attempt, Enrollment, HostedCheck, Study
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.e2e.conftest import verified_puzzles
from tests.e2e.test_live_page import reference_actions
from tests.hosted import standin as data
from tests.hosted.bodies import BodiesSeen
from tests.hosted.conftest import BENCHMARK

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHECK = "/api/check_answer"
HOSTED = ("Dice_Roll_Path", "Red_Dot")
WRONG = {"p2": "Dice_Roll_Path"}  # p2 answers their scored Dice_Roll_Path wrong
NOT_TEXT = ("image/", "font/", "audio/", "video/")
INPUT_TYPES = {"Red_Dot": "red_dot_click", "Spooky_Size": "spooky_size_click", "Dice_Roll_Path": "number"}


class Person(BodiesSeen):
    """One person's browser: every response body it received, and each page's recorder as it ended."""

    def __init__(self, pid: str) -> None:
        super().__init__()
        self.pid = pid
        self.streams: dict[str, dict[str, Any]] = {}  # attempt uid -> the page's own count at its end


def hosted_puzzles(family: str) -> list[Puzzle]:
    return list(Puzzle.objects.filter(type=f"{BENCHMARK}:{family}", status=Puzzle.Status.VERIFIED).order_by("index"))


async def answer_hosted(page: Any, person: Person, attempt: Attempt, puzzle: Puzzle) -> None:
    """On the framed peer's page, as a person: the truth, or a wrong number where planned."""
    handle = await page.wait_for_selector("iframe.hosted-frame")
    frame = await handle.content_frame()
    assert frame is not None
    family = puzzle.type.split(":", 1)[1]
    answers = list(puzzle.truth["answers"])
    if WRONG.get(person.pid) == family and attempt.purpose == Attempt.Purpose.SCORED:
        answers = [answers[0] + 1]
    await enter(page, entry_for(INPUT_TYPES[family]), answers, CHECK, within=frame)
    try:
        await recorder_done(frame)
    except PlaywrightTimeout:
        said = await frame.evaluate("window.arenaRecorder.state()")
        raise AssertionError(f"never scored: page {said}; {await sync_to_async(_stored)(attempt.uid)}") from None
    person.streams[attempt.uid] = await frame.evaluate("window.arenaRecorder.state()")


def _stored(uid: str) -> str:
    """For a failure's message: what the server holds of an attempt."""
    attempt = Attempt.objects.get(uid=uid)
    check = HostedCheck.objects.filter(attempt=attempt).first()
    refused = list(attempt.events.filter(kind="refused").values_list("seq", "data"))
    submits = list(attempt.events.filter(kind="act.submit").values_list("seq", "received"))
    return (
        f"submitted_at {attempt.submitted_at}, acked {attempt.acked_seq}, max {attempt.max_seq}, "
        f"unstored {attempt.unstored_batches}, refused {refused}, submits {submits}, "
        f"check {check.finished_at if check else None} {check.correct if check else None}"
    )


async def work_through(browser: Any, site: str, token: str, person: Person) -> str:
    """Join by the invite link, practise, answer every puzzle of the run, end with the code."""
    context = await browser.new_context(viewport=VIEWPORT, base_url=site)
    page = await context.new_page()
    page.on("response", person.keep)
    await page.goto(f"/s/{token}/?PROLIFIC_PID={person.pid}&STUDY_ID=hosted1")
    await page.get_by_role("button", name="I agree, start").click()
    for _ in range(12):
        await page.wait_for_selector("#completion-code, #status[data-state]", state="attached")
        if await page.locator("#completion-code").count():
            code = await page.locator("#completion-code").text_content()
            await asyncio.gather(*person.tasks)  # every body read before the browser goes
            await context.close()
            return str(code)
        shown = json.loads(await page.locator("#page-data").text_content() or "{}")
        attempt = await sync_to_async(Attempt.objects.select_related("puzzle").get)(uid=shown["attempt"])
        if shown.get("hosted"):
            await answer_hosted(page, person, attempt, attempt.puzzle)
        else:
            for action in reference_actions(attempt.puzzle):
                await perform(page, action)
        await wait_submitted(page, 30)
        if not shown.get("hosted"):
            person.streams[attempt.uid] = await page.evaluate("window.arena.state()")
        practice_over = page.locator("dialog.practice-done[open] a.continue")
        await (practice_over if await practice_over.count() else page.locator(".studybar a.continue")).click()
    raise AssertionError(f"{person.pid} never finished")


def test_two_people_complete_a_study_mixing_our_types_and_a_hosted_benchmark(benchmark, standin):
    verified_puzzles(["Dice_Count"], per_type=2, seed=31)
    outcomes = benchmark_check(name=BENCHMARK)  # the page check: only verified puzzles are offered
    assert {o.family for o in outcomes if o.verified} >= {"Dice_Roll_Path", "Red_Dot", "Spooky_Size"}
    practice = hosted_puzzles("Spooky_Size")[:1]
    gold = hosted_puzzles("Dice_Roll_Path")[1:]
    study = study_create(
        name="Hosted and ours",
        split="test",
        types=["Dice_Count", *(f"{BENCHMARK}:{family}" for family in HOSTED)],
        puzzles_per_annotator=5,  # the whole pool: every block for everyone
        overlap=2,
        order=Study.Order.BLOCKED,
        practice=practice,
        gold=gold,
    )
    people = [Person("p1"), Person("p2")]

    async def everyone() -> list[str]:
        async with chromium() as browser:
            # One after the other: a stateful family's state at the peer is per puzzle, so two
            # people on one Red_Dot at the same moment would reset each other (docs/hosted.md).
            return [await work_through(browser, site, study.token, person) for person in people]

    with live_server() as site:
        codes = asyncio.run(everyone())
    assert codes == [study.completion_code] * 2

    attempts = list(Attempt.objects.filter(study=study).select_related("puzzle"))
    hosted = [a for a in attempts if a.puzzle.type.startswith(f"{BENCHMARK}:")]
    assert {a.puzzle.type.split(":")[1] for a in hosted} >= {*HOSTED, "Spooky_Size"}
    assert any(a.puzzle.type == "Dice_Count" for a in attempts)
    assert {a.purpose for a in hosted} == {Attempt.Purpose.SCORED, Attempt.Purpose.PRACTICE, Attempt.Purpose.GOLD}
    assert all(a.is_submitted for a in attempts)

    # The verdict is the stand-in's own answer to the submission the proxy forwarded.
    _, calls = standin.json("GET", "/_standin/log")
    checks = [call for call in calls if call["route"] == "check"]
    for attempt in hosted:
        record = HostedCheck.objects.get(attempt=attempt)
        said = [c for c in checks if c["puzzle_id"] == attempt.puzzle.public["hosted"]["puzzle_id"]]
        last = [c for c in said if c["answer"] == record.steps[-1]["answer"]]
        assert last and all(c["correct"] is attempt.correct for c in last), attempt.puzzle.type
        assert attempt.correct is record.correct
    wrong = [a for a in hosted if a.correct is False]
    assert [(a.participant.enrollments.get().external_ids["PROLIFIC_PID"], a.puzzle.type) for a in wrong] == [
        ("p2", f"{BENCHMARK}:Dice_Roll_Path")
    ]
    red_dots = [a for a in hosted if a.puzzle.type.endswith(":Red_Dot")]
    assert red_dots and all(len(a.answer) == data.RED_DOT_HITS for a in red_dots)

    # No response either browser received carries a truth value; scored checks heard no verdict.
    leaks = [
        (url, value)
        for person in people
        for url, kind, body in person.bodies
        if not kind.startswith(NOT_TEXT)
        for value in data.truth_values() + list(data.TRUTH_FIELDS) * ("json" in kind)
        if value.encode() in body
    ]
    assert leaks == []
    heard = [json.loads(body) for p in people for url, _, body in p.bodies if urlsplit(url).path == CHECK and body]
    finals = [said for said in heard if said.get("status") != "continue"]
    assert RECEIVED in finals  # scored work: the page learns only that its answer was received
    assert any(said.get("correct") is True for said in finals)  # practice: verdicts are shown

    # Every batch each page numbered is stored, nothing refused or missing; times from the events.
    for person in people:
        for uid, stream in person.streams.items():
            attempt = Attempt.objects.get(uid=uid)
            assert stream["pending"] == 0, (person.pid, uid)
            first = (stream["nextSeq"] // SEQ_BLOCK) * SEQ_BLOCK + 1
            numbered = set(range(first, stream["nextSeq"]))
            stored = set(attempt.events.filter(seq__gte=first, seq__lt=stream["nextSeq"]).values_list("seq", flat=True))
            assert numbered and stored == numbered, (person.pid, attempt.puzzle.type)
            assert attempt.unstored_batches == [] and attempt.missing_batches == []
    framed = [stream for person in people for uid, stream in person.streams.items() if "submitted" in stream]
    assert any(stream["transport"] == "ws" for stream in framed)  # the recorder's own socket carried them
    assert all(a.wall_ms and a.active_ms and a.clock_ok and a.input_ok for a in hosted), [
        (a.puzzle.type, a.wall_ms, a.clock_ok, a.input_problem) for a in hosted
    ]

    # The staff's pages: the annotators' list and each person's attempts show hosted work.
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("staff", is_staff=True))
    assert staff.get(f"/studies/{study.pk}/annotators/").status_code == 200
    for enrollment in Enrollment.objects.filter(study=study):
        page = staff.get(f"/studies/{study.pk}/annotators/{enrollment.pk}/attempts/")
        assert page.status_code == 200 and "Red_Dot" in page.content.decode()
    # The live dashboard counts the hosted families' scored answers with ours, by type.
    rows = {row["type"]: row for row in staff.get("/dashboard/summary.json").json()["pass1_by_type"]}
    for family in HOSTED:
        scored = [a for a in hosted if a.puzzle.type.endswith(family) and a.purpose == Attempt.Purpose.SCORED]
        assert rows[f"{BENCHMARK}:{family}"]["attempts"] == len(scored)
