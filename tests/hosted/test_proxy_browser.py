"""The proxy and the page check in real Chromium, against the stand-in server (docs/hosted.md).

Each test registers the stand-in, draws its puzzles and serves the site with a real daphne; the
browser opens each attempt's own host (a-<key>.localhost), which Chromium resolves to this machine.
The stand-in's CDN script is pinned to a local copy the test writes itself (no network).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation.agents.browser import VIEWPORT, chromium
from annotation.agents.server import live_server
from annotation.attempt_hosts import attempt_origin
from annotation.hosted.entries import enter, entry_for
from annotation.hosted.pagecheck import CANNOT_SUBMIT, recorder_done
from annotation.hosted.verdicts import ALREADY_ANSWERED, pin_of
from annotation.live.attempts import attempt_start, participant_for_user
from annotation.models import Attempt, BenchmarkFamily, HostedCheck
from puzzles.models import Puzzle
from tests.hosted import standin as data
from tests.hosted.bodies import BodiesSeen

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NAME = "standin"  # the benchmark fixture's (conftest.py)


@pytest.fixture
def person(transactional_db):
    user = get_user_model().objects.create_user(username="pat", password="pw")
    return participant_for_user(user=user)


def puzzle_of(family: str) -> Puzzle:
    return Puzzle.objects.filter(type=f"{NAME}:{family}", status=Puzzle.Status.DRAFT).order_by("index").first()


def check_log(standin, family: str) -> list[dict[str, Any]]:
    _, calls = standin.json("GET", "/_standin/log")
    return [call for call in calls if call["route"] == "check" and call["family"] == family]


class Browsing(BodiesSeen):
    """A page on an attempt's host, every response body it received kept."""

    def __init__(self, page: Any, origin: str) -> None:
        super().__init__()
        self.page, self.origin = page, origin
        self.shown: dict[str, Any] = {}  # the puzzle its page fetched
        page.on("response", self.keep)

    async def fetch(self, path: str, body: Any = None) -> tuple[int, Any]:
        """The page itself asking its origin (a script of the peer's page could)."""
        return await self.page.evaluate(
            """async ([path, body]) => {
                 const init = body === null ? {} : {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                    body: JSON.stringify(body)};
                 const response = await fetch(path, init);
                 const text = await response.text();
                 return [response.status, text];
               }""",
            [path, body],
        )

    async def settled(self) -> None:
        await asyncio.gather(*self.tasks)


async def open_page(browser: Any, site: str, attempt: Attempt) -> Browsing:
    pin = await sync_to_async(pin_of)(attempt.uid)
    context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    origin = attempt_origin(attempt.uid, site)
    browsing = Browsing(page, origin)
    async with page.expect_response(lambda r: urlsplit(r.url).path == "/api/get_puzzle") as fetched:
        await page.goto(origin + pin.page)
    browsing.shown = await (await fetched.value).json()
    return browsing


def start(person, family: str) -> Attempt:
    return attempt_start(participant=person, puzzle=puzzle_of(family))


def test_the_page_check_verifies_what_its_page_can_answer_and_sets_the_jigsaw_aside(benchmark, standin):
    said = _command("check", NAME)

    drawn = Puzzle.objects.filter(dataset=f"hosted:{NAME}").count()
    progress = [line.split("]")[0] + "]" for line in said.splitlines() if line.startswith("[")]
    assert progress == [f"[{n}/{drawn}]" for n in range(1, drawn + 1)]
    assert f"6 of {drawn} puzzles verified through their page" in said  # Red_Dot: three hits, one sequence
    jigsaw = BenchmarkFamily.objects.get(benchmark=benchmark, family="Static_Jigsaw")
    assert jigsaw.status == BenchmarkFamily.Status.SET_ASIDE
    assert jigsaw.page_check == BenchmarkFamily.PageCheck.FAILED
    assert CANNOT_SUBMIT in jigsaw.reason
    # Every stored verdict is the peer's own reply to the one check forwarded for its attempt.
    for check in HostedCheck.objects.select_related("attempt"):
        reply = check.steps[-1]["reply"]
        assert check.correct is check.attempt.correct is (reply["correct"] is True)
    jigsaws = Puzzle.objects.filter(type=f"{NAME}:Static_Jigsaw")
    assert set(jigsaws.values_list("status", flat=True)) == {Puzzle.Status.FAILED}
    others = Puzzle.objects.filter(dataset=f"hosted:{NAME}").exclude(type=f"{NAME}:Static_Jigsaw")
    assert set(others.values_list("status", flat=True)) == {Puzzle.Status.VERIFIED}

    listing = _command("list", NAME)
    assert "Static_Jigsaw" in listing and "2 set aside" in listing and "2 verified" in listing
    assert "page check: " + CANNOT_SUBMIT in listing


def test_verdicts_stored_are_the_peers_one_check_per_attempt_and_a_second_refused(benchmark, standin, person):
    dice = start(person, "Dice_Roll_Path")
    truth = puzzle_of("Dice_Roll_Path").truth["answers"][0]

    async def go(site: str) -> tuple[Any, Any]:
        async with chromium() as browser:
            browsing = await open_page(browser, site, dice)
            await enter(browsing.page, entry_for("number"), [truth + 1], "/api/check_answer")  # a wrong answer
            await recorder_done(browsing.page)
            again = await browsing.fetch("/api/check_answer", {"puzzle_id": "x", "answer": truth})
            return browsing.shown, again

    before = len(check_log(standin, "Dice_Roll_Path"))
    with live_server() as site:
        shown, (status, said) = asyncio.run(go(site))
    dice.refresh_from_db()
    assert shown["puzzle_id"] == puzzle_of("Dice_Roll_Path").public["hosted"]["puzzle_id"]
    assert dice.correct is False and dice.answer == str(truth + 1)  # the page's entry, as the peer judged it
    assert (status, json.loads(said)["error"]) == (409, ALREADY_ANSWERED)
    assert len(check_log(standin, "Dice_Roll_Path")) == before + 1  # the second post never reached the peer
    assert HostedCheck.objects.get(attempt=dice).steps[0]["reply"]["correct"] is False


def test_no_response_the_page_receives_carries_a_truth_value_and_truth_routes_are_refused(benchmark, person):
    attempts = {family: start(person, family) for family in ("Dice_Roll_Path", "Spooky_Size", "Red_Dot")}
    attempts["Static_Jigsaw"] = start(person, "Static_Jigsaw")
    refusals: list[int] = []

    async def tour(site: str) -> list[tuple[str, str, bytes]]:
        bodies = []
        async with chromium() as browser:
            for family, attempt in attempts.items():
                browsing = await open_page(browser, site, attempt)
                puzzle = await sync_to_async(Puzzle.objects.get)(pk=attempt.puzzle_id)
                await browsing.page.click("#puzzle-container")  # the page posts get_ground_truth itself
                for path in ("/api/last_result", "/captcha_data/Dice_Roll_Path/ground_truth.json"):
                    refusals.append((await browsing.fetch(path))[0])
                refusals.append((await browsing.fetch("/api/get_ground_truth", {"puzzle_type": family}))[0])
                refusals.append((await browsing.fetch("/api/get_puzzle?debug_type=Dice_Roll_Path"))[0])
                answers = puzzle.truth["answers"]
                if family == "Static_Jigsaw":  # the page-style answer: the check's reply names the truth
                    answers = [data.page_style_jigsaw_answer(int(puzzle.source_id.split("=")[1]))]
                    await browsing.fetch("/api/check_answer", {"answer": answers[0]})
                else:
                    await enter(browsing.page, entry_for(browsing.shown["input_type"]), answers, "/api/check_answer")
                await recorder_done(browsing.page)
                await browsing.settled()
                bodies += browsing.bodies
        return bodies

    with live_server() as site:
        bodies = asyncio.run(tour(site))
    assert set(refusals) == {403}
    checks = [body for url, _, body in bodies if urlsplit(url).path == "/api/check_answer"]
    assert len(checks) >= len(attempts)  # every family's verdict came back through the page
    leaks = [
        (url, value)
        for url, kind, body in bodies
        for value in data.truth_values() + list(data.TRUTH_FIELDS) * ("json" in kind)
        if value.encode() in body
    ]
    assert leaks == []
    stored = Attempt.objects.filter(pk__in=[a.pk for a in attempts.values()]).values_list("puzzle__type", "correct")
    assert dict(stored) == {
        f"{NAME}:Dice_Roll_Path": True,
        f"{NAME}:Spooky_Size": True,
        f"{NAME}:Red_Dot": True,
        f"{NAME}:Static_Jigsaw": False,
    }


def test_the_page_is_pinned_to_its_attempts_puzzle_and_its_cdn_script_is_the_local_copy(benchmark, person):
    dice = start(person, "Dice_Roll_Path")
    pinned = puzzle_of("Dice_Roll_Path").public["hosted"]["puzzle_id"]

    async def go(site: str) -> tuple[Any, ...]:
        async with chromium() as browser:
            browsing = await open_page(browser, site, dice)
            other = await browsing.fetch("/api/get_puzzle?type=Dice_Roll_Path&puzzle_index=2")
            three = await browsing.page.evaluate("window.THREE && window.THREE.REVISION")
            await browsing.page.goto(browsing.origin + "/?type=Spooky_Size&puzzle_index=1")
            return other, three, browsing.page.url

    with live_server() as site:
        (status, other), three, landed = asyncio.run(go(site))
    assert status == 200 and json.loads(other)["puzzle_id"] == pinned
    assert three == "128"
    assert urlsplit(landed).query == urlsplit(puzzle_of("Dice_Roll_Path").public["hosted"]["page"]).query


def test_a_stateful_familys_state_holds_through_the_proxy(benchmark, standin, person):
    red_dot = start(person, "Red_Dot")
    answers = puzzle_of("Red_Dot").truth["answers"]

    async def go(site: str) -> None:
        async with chromium() as browser:
            browsing = await open_page(browser, site, red_dot)
            await enter(browsing.page, entry_for("red_dot_click"), answers, "/api/check_answer")
            await recorder_done(browsing.page)

    with live_server() as site:
        asyncio.run(go(site))
    check = HostedCheck.objects.get(attempt=red_dot)
    assert [step["reply"].get("status") for step in check.steps] == ["continue", "continue", "completed"]
    red_dot.refresh_from_db()
    assert red_dot.correct is True and len(red_dot.answer) == data.RED_DOT_HITS


def _command(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("benchmarks", *args, stdout=out)
    return out.getvalue()
