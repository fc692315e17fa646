"""Every type solved through the page in real Chromium; wrong answers, drops and the fallback."""

import pytest

from annotation.agents.browser import TO_VIEWPORT, perform, wait_submitted
from annotation.agents.replay import replay_puzzles
from annotation.live.frames import SEQ_BLOCK
from annotation.models import Attempt, Event
from puzzles.models import Puzzle, ReplayCheck
from puzzles.registry import get_type, registry

from .conftest import chromium, page_for, run

pytestmark = pytest.mark.browser


def reference_actions(puzzle: Puzzle) -> list[dict]:
    puzzle_type = get_type(puzzle.type)
    return puzzle_type.compile_actions(puzzle.truth, puzzle_type.layout(puzzle.public))


def test_the_reference_answer_of_every_type_replays_correct_through_the_page(puzzles_of):
    puzzles = puzzles_of()
    assert sorted(p.type for p in puzzles) == registry().names()
    outcomes = replay_puzzles([p.pk for p in puzzles], workers=4)
    failed = {Puzzle.objects.get(pk=o.puzzle_id).type: o.reason for o in outcomes if not o.verified}
    assert failed == {}
    for puzzle in puzzles:
        check = ReplayCheck.objects.get(puzzle=puzzle)
        attempt = Attempt.objects.get(uid=check.attempt_uid)
        assert attempt.correct and attempt.reward == 1.0 and attempt.clock_ok, (puzzle.type, attempt.reason)
        # Real Playwright input backs every action: the replay is never taken for a script.
        assert attempt.input_ok, (puzzle.type, attempt.input_problem)
        kinds = set(attempt.events.values_list("kind", flat=True))
        if puzzle.type == "Hold_Button":  # seconds on the page: it beat while visible
            assert "beat" in kinds
        # Real input reached the page: raw pointer or key events, not only semantic actions.
        assert {"load", "pointerdown", "pointerup"} <= kinds or {"keydown", "keyup"} <= kinds, puzzle.type
        assert "act.submit" in kinds
    assert set(Puzzle.objects.filter(pk__in=[p.pk for p in puzzles]).values_list("status", flat=True)) == {"verified"}


def test_a_wrong_answer_through_the_page_is_stored_as_wrong(site, puzzles_of, annotator):
    puzzle = puzzles_of("Object_Match")[0]
    user, _ = annotator()
    wrong_index = (puzzle.truth["correct_option_index"] + 1) % puzzle.truth["option_count"]
    layout = get_type(puzzle.type).layout(puzzle.public)

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle)
            for _ in range(wrong_index):
                await perform(page, {"action": "click", "arguments": _center(layout.control("next"))})
            await perform(page, {"action": "click", "arguments": _center(layout.control("submit"))})
            await wait_submitted(page, 10)
            return attempt

    attempt = Attempt.objects.get(pk=run(scenario()).pk)
    assert attempt.correct is False and attempt.answer == wrong_index
    assert attempt.input_ok, attempt.input_problem
    assert attempt.action_count == wrong_index


def test_a_socket_dropped_mid_attempt_loses_no_events(site, puzzles_of, annotator):
    puzzle = puzzles_of("Dice_Count")[0]
    user, _ = annotator()
    answer = str(puzzle.truth["sum"])
    layout = get_type(puzzle.type).layout(puzzle.public)

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle)
            await perform(page, {"action": "click", "arguments": _center(layout.control("text"))})
            await page.keyboard.type("9")
            await page.keyboard.press("Backspace")
            await page.wait_for_function("window.arena.state().connected")
            await page.evaluate("window.arena.socket().close()")  # the network drops
            for x in range(200, 400, 20):  # the person goes on acting meanwhile
                await page.mouse.move(x, 500)
            await page.keyboard.type(answer)
            await page.wait_for_function(
                "window.arena.state().connected && window.arena.state().pending === 0", timeout=15000
            )
            await perform(page, {"action": "click", "arguments": _center(layout.control("submit"))})
            await wait_submitted(page, 10)
            return attempt

    attempt = Attempt.objects.get(pk=run(scenario()).pk)
    assert attempt.correct, attempt.reason
    events = list(Event.objects.filter(attempt=attempt).order_by("seq", "index"))
    seqs = sorted({e.seq for e in events})
    assert seqs == list(range(1, len(seqs) + 1))  # no batch missing
    keys = [e.data["key"] for e in events if e.kind == "keydown"]
    assert keys == ["9", "Backspace", *answer]
    assert sum(e.kind == "pointermove" for e in events) >= 10
    assert attempt.input_ok, attempt.input_problem


def test_without_websockets_the_page_falls_back_to_http(site, puzzles_of, annotator):
    puzzle = puzzles_of("Image_Recognition")[0]
    user, _ = annotator()
    no_sockets = "window.WebSocket = function () { throw new Error('blocked by the network'); };"

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle, init_script=no_sockets)
            for action in reference_actions(puzzle):
                await perform(page, action)
            await wait_submitted(page, 20)
            return attempt, await page.evaluate("window.arena.state().transport")

    attempt, transport = run(scenario())
    attempt = Attempt.objects.get(pk=attempt.pk)
    assert transport == "http"
    assert attempt.correct, attempt.reason
    assert attempt.input_ok, attempt.input_problem


def _center(rect) -> dict:
    x, y = rect.center()
    return {"x": round(x), "y": round(y)}


def test_clicks_map_to_natural_pixels_whatever_the_window_size(site, puzzles_of, annotator):
    puzzle = puzzles_of("Place_Dot")[0]
    user, _ = annotator()
    layout = get_type(puzzle.type).layout(puzzle.public)
    target = puzzle.truth["target_position"]

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle)
            await page.set_viewport_size({"width": 900, "height": 700})  # the stage scales down
            await page.wait_for_timeout(200)
            # The stage fits under the person's chrome, centred.
            left, top, width = await page.evaluate(
                "() => { const r = document.getElementById('stage').getBoundingClientRect(); "
                "return [r.left, r.top, r.width]; }"
            )
            scale = width / 1280
            assert top > 0 and scale == pytest.approx(min(900 / 1280, (700 - top) / 1080), abs=0.01)
            for stage_point in (layout.main.to_stage(*target), layout.control("submit").center()):
                await page.mouse.click(left + stage_point[0] * scale, top + stage_point[1] * scale)
            await wait_submitted(page, 10)
            return attempt, scale

    attempt, scale = run(scenario())
    attempt = Attempt.objects.get(pk=attempt.pk)
    assert attempt.correct, attempt.reason
    # One window pixel is 1/scale stage pixels: the click lands within that of the target.
    assert abs(attempt.answer[0] - target[0]) < 2.5 and abs(attempt.answer[1] - target[1]) < 2.5
    assert attempt.input_ok, attempt.input_problem  # raw stage pixels and natural pixels agree when scaled
    resize = attempt.events.get(kind="resize")
    assert (resize.data["w"], resize.data["h"]) == (900, 700)
    assert resize.data["scale"] == pytest.approx(scale, abs=1e-3)


def test_a_reload_goes_on_numbering_and_the_answer_is_what_was_entered_after_it(site, puzzles_of, annotator):
    puzzle = puzzles_of("Object_Match")[0]
    user, _ = annotator()
    layout = get_type(puzzle.type).layout(puzzle.public)
    next_button, submit = _center(layout.control("next")), _center(layout.control("submit"))

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle)
            for _ in range(2):
                await perform(page, {"action": "click", "arguments": next_button})
            await page.reload()  # the page shows the first option again
            await page.wait_for_selector("#status[data-state]", state="attached")
            await perform(page, {"action": "click", "arguments": next_button})
            await perform(page, {"action": "click", "arguments": submit})
            await wait_submitted(page, 10)
            return attempt

    attempt = Attempt.objects.get(pk=run(scenario()).pk)
    assert attempt.answer == 1 and attempt.action_count == 3
    assert attempt.input_ok, attempt.input_problem
    events = list(attempt.events.order_by("seq", "index"))
    assert [e.kind for e in events].count("load") == 2
    # Each load numbers its batches in a range of its own (docs/events.md), with no gap in either.
    by_page: dict[int, list[int]] = {}
    for seq in sorted({e.seq for e in events}):
        by_page.setdefault(seq // SEQ_BLOCK, []).append(seq % SEQ_BLOCK)
    assert list(by_page) == [0, 1], by_page
    assert all(seqs == list(range(1, len(seqs) + 1)) for seqs in by_page.values()), by_page
    assert "refused" not in {e.kind for e in events}


def test_a_touch_tap_counts_as_a_human_hand(site, puzzles_of, annotator):
    """A phone or tablet: the tap is the input that backs the click (no mouse movement first)."""
    from asgiref.sync import sync_to_async
    from django.conf import settings

    from annotation.agents.browser import VIEWPORT, open_attempt, session_for
    from annotation.live.attempts import attempt_start, participant_for_user

    puzzle = puzzles_of("Geometry_Click")[0]
    user, _ = annotator()
    (tap,) = reference_actions(puzzle)  # the type submits on its first click

    async def scenario():
        participant = await sync_to_async(participant_for_user)(user=user)
        attempt = await sync_to_async(attempt_start)(participant=participant, puzzle=puzzle)
        async with chromium() as browser:
            context = await browser.new_context(viewport=VIEWPORT, base_url=site, has_touch=True)
            session = await sync_to_async(session_for)(user)
            await context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": site}])
            page = await context.new_page()
            await open_attempt(page, attempt.uid)
            [(x, y)] = await page.evaluate(TO_VIEWPORT, [[tap["arguments"]["x"], tap["arguments"]["y"]]])
            await page.touchscreen.tap(x, y)
            await wait_submitted(page, 10)
            return attempt

    attempt = Attempt.objects.get(pk=run(scenario()).pk)
    assert attempt.correct, attempt.reason
    assert attempt.input_ok, attempt.input_problem
    pointers = set(Event.objects.filter(attempt=attempt, kind="pointerdown").values_list("data__pointer", flat=True))
    assert pointers == {"touch"}


def test_an_open_socket_that_answers_nothing_is_dropped_and_the_page_falls_back_to_http(site, puzzles_of, annotator):
    """A black hole: the socket opens, then nothing sent arrives and nothing comes back."""
    puzzle = puzzles_of("Geometry_Click")[0]
    user, _ = annotator()
    black_hole = "WebSocket.prototype.send = function () {};"

    async def scenario():
        async with chromium() as browser:
            page, attempt = await page_for(browser, site, user, puzzle, init_script=black_hole)
            for action in reference_actions(puzzle):
                await perform(page, action)
            await wait_submitted(page, 60)
            return attempt, await page.evaluate("window.arena.state().transport")

    attempt, transport = run(scenario())
    attempt = Attempt.objects.get(pk=attempt.pk)
    assert transport == "http"  # the dead socket was noticed; the fallback delivered
    assert attempt.correct and attempt.input_ok, (attempt.reason, attempt.input_problem)
    seqs = sorted(set(Event.objects.filter(attempt=attempt).values_list("seq", flat=True)))
    assert seqs == list(range(1, len(seqs) + 1))  # no gap: every batch the page made arrived
