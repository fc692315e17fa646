"""An answer counts only if a person gave it: semantic actions need the raw input a hand leaves.

The rules on their own (annotation/live/evidence.py, no database), then the attacks through the
real socket: a client that sends only semantic actions, a hold timed by the server's progress
frames. They are marked no_input, shown to staff and left out of Pass@1 while counted and named;
a client whose raw input backs its actions passes.
"""

import time
from types import SimpleNamespace

import numpy as np
import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.live.evidence import input_evidence
from annotation.live.frames import Batch
from annotation.live.intake import events_append
from annotation.models import Attempt
from annotation.reporting.dashboard import pass1_by_type
from annotation.reporting.render import to_csv, to_markdown
from annotation.reporting.reports import study_report
from annotation.studies.quality import annotator_table, attempt_marks
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.registry import get_type
from tests.live_stream import Hand, batch, served_at, socket_for, submit_answer

T0 = 1.8e12  # a page clock, epoch ms


# --- the rules, no database ---------------------------------------------------------------------
class Logged(SimpleNamespace):
    """An event as stored: kind, the page's t, the server's receive time, its fields."""


def logged(events: list[dict]) -> list[Logged]:
    return [
        Logged(kind=e["k"], t=e["t"], received=e["t"] + 20, data={k: v for k, v in e.items() if k not in ("k", "t")})
        for e in events
    ]


def puzzle_of(type_name: str, seed: int = 1) -> SimpleNamespace:
    generated = get_type(type_name).generate(np.random.default_rng(seed))
    return SimpleNamespace(type=type_name, public=generated.public, truth=generated.truth)


def judge(puzzle, events: list[dict], **options):
    layout = get_type(puzzle.type).layout(puzzle.public)
    return input_evidence(logged(events), layout=layout, **options)


def semantic_only(*acts: dict) -> list[dict]:
    load = {"k": "load", "t": T0, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
    return [load, *({**a, "t": T0 + 500 + 10 * i} for i, a in enumerate(acts))]


def test_a_click_needs_a_press_at_its_place_and_time():
    puzzle = puzzle_of("Place_Dot")
    hand = Hand(puzzle, T0)
    image = hand.layout.main
    x, y = 100.5, 80.25  # natural pixels
    hand.press(*image.to_stage(x, y), {"k": "act.click", "x": x, "y": y})
    hand.press_control("submit", {"k": "act.submit"})
    assert judge(puzzle, hand.events).ok
    elsewhere = Hand(puzzle, T0).press(*image.to_stage(x + 30, y), {"k": "act.click", "x": x, "y": y})
    found = judge(puzzle, elsewhere.events)
    assert (
        not found.ok and found.problem.startswith("act.click at ") and "no pointer press at its place" in found.problem
    )
    scripted = judge(puzzle, semantic_only({"k": "act.click", "x": x, "y": y}, {"k": "act.submit"}))
    assert (scripted.ok, scripted.problem) == (False, "no pointer movement or focus before the first action")


def test_cells_swaps_and_arrows_need_their_own_cell_or_button():
    cells = puzzle_of("Image_Recognition")
    hand = Hand(cells, T0)
    hand.press(*hand.layout.cell(4).center(), {"k": "act.toggle", "cell": 4})
    assert judge(cells, hand.events).ok
    wrong_cell = Hand(cells, T0).press(*hand.layout.cell(5).center(), {"k": "act.toggle", "cell": 4})
    assert "no press on its cell" in judge(cells, wrong_cell.events).problem

    swap = puzzle_of("Bingo")
    hand = Hand(swap, T0)
    hand.press(*hand.layout.cell(0).center()).press(*hand.layout.cell(7).center(), {"k": "act.swap", "a": 0, "b": 7})
    assert judge(swap, hand.events).ok
    only_second = Hand(swap, T0).press(*hand.layout.cell(7).center(), {"k": "act.swap", "a": 0, "b": 7})
    assert "first cell was never pressed" in judge(swap, only_second.events).problem

    option = puzzle_of("Object_Match")
    forward = Hand(option, T0).press_control("next", {"k": "act.cycle", "delta": 1})
    assert judge(option, forward.events).ok
    backward = Hand(option, T0).press_control("next", {"k": "act.cycle", "delta": -1})
    assert "no press on its arrow button" in judge(option, backward.events).problem
    keyboard = Hand(option, T0).move(300, 300)
    keyboard.t += 200
    keyboard.log("focusin", target="next")  # tabbed to
    keyboard.t += 300
    keyboard.log("keydown", key="Enter", code="Enter")
    keyboard.log("act.cycle", delta=1)  # a focused button pressed with Enter clicks at no place
    assert judge(option, keyboard.events).ok


def test_typing_needs_keys_or_an_input_event():
    puzzle = puzzle_of("Dice_Count")
    hand = Hand(puzzle, T0).press_control("text").type("17").press_control("submit", {"k": "act.submit"})
    assert judge(puzzle, hand.events).ok
    pasted = Hand(puzzle, T0).press_control("text")
    pasted.t += 300
    pasted.log("input", input_type="insertFromPaste")  # pasted from a menu: no key at all
    pasted.log("act.type", text="17")
    assert judge(puzzle, pasted.events).ok
    typed_by_script = Hand(puzzle, T0).press_control("text")
    typed_by_script.t += 300
    typed_by_script.log("act.type", text="17")
    assert "no keystroke or input event" in judge(puzzle, typed_by_script.events).problem


def drag(hand: Hand, puzzle, to: tuple[float, float], *, samples: int = 12) -> Hand:
    """Press on the slider's handle, slide it until the piece's top-left lands at `to`, release."""
    sx, sy = puzzle.public["start_position"]
    slider = hand.layout.slider
    grab = slider.handle.center()
    drop = (grab[0] + slider.handle_shift((to[0] - sx) * hand.layout.main.scale), grab[1])
    hand.move(*grab)
    hand.t += 30
    hand.log("pointerdown", x=grab[0], y=grab[1], button=0, pointer="mouse")
    hand.log("act.drag_start", x=sx, y=sy)
    hand.x, hand.y = grab
    if samples:
        hand.move(*drop, steps=samples)
    hand.t += 30
    hand.log("pointerup", x=drop[0], y=drop[1], button=0, pointer="mouse")
    hand.log("act.drag_end", x=to[0], y=to[1])
    return hand


def test_a_drag_needs_a_press_on_the_handle_a_path_and_a_release():
    puzzle = puzzle_of("Slide_Puzzle")
    target = puzzle.truth["target_position"]
    assert judge(puzzle, drag(Hand(puzzle, T0), puzzle, target).events).ok
    teleported = drag(Hand(puzzle, T0).move(200, 300), puzzle, target, samples=0)
    assert "no pointer path" in judge(puzzle, teleported.events).problem
    drop_only = Hand(puzzle, T0).press(640, 500, {"k": "act.drag_end", "x": target[0], "y": target[1]})
    assert "a drop without a drag" in judge(puzzle, drop_only.events).problem
    # The piece itself does not move on the published page: only the handle does.
    start = puzzle.public["start_position"]
    on_piece = Hand(puzzle, T0).press(
        *Hand(puzzle, T0).layout.slider.piece.center(), {"k": "act.drag_start", "x": start[0], "y": start[1]}
    )
    assert "no pointer press on the handle" in judge(puzzle, on_piece.events).problem


def hold(hand: Hand, *, held_ms: float, released_ms: float) -> Hand:
    """Press the hold button; the page ends the hold after held_ms, the press lifts after released_ms."""
    x, y = hand.layout.control("hold").center()
    hand.move(x, y)
    hand.t += 20
    hand.log("pointerdown", x=x, y=y, button=0, pointer="mouse")
    hand.log("act.hold_start")
    start = hand.t
    if released_ms < held_ms:
        hand.t = start + released_ms
        hand.log("pointerup", x=x, y=y, button=0, pointer="mouse")
    hand.t = start + held_ms
    hand.log("act.hold_end")
    hand.log("act.submit")  # the hold widget submits by itself
    if released_ms >= held_ms:
        hand.t = start + released_ms
        hand.log("pointerup", x=x, y=y, button=0, pointer="mouse")
    return hand


def test_a_hold_needs_a_press_held_for_its_length():
    puzzle = puzzle_of("Hold_Button")
    assert judge(puzzle, hold(Hand(puzzle, T0), held_ms=3000, released_ms=3000).events).ok
    early = judge(puzzle, hold(Hand(puzzle, T0), held_ms=3000, released_ms=400).events)
    assert "the press was released 2.60 s before the hold ended" in early.problem
    timed_by_script = Hand(puzzle, T0).move(300, 300)
    timed_by_script.log("act.hold_start")
    timed_by_script.t += 3000
    timed_by_script.log("act.hold_end")
    timed_by_script.log("act.submit")
    assert "no press on the hold button" in judge(puzzle, timed_by_script.events).problem


def test_touch_needs_no_hover_and_a_submit_at_the_time_limit_needs_no_press():
    puzzle = puzzle_of("Object_Match")
    layout = get_type(puzzle.type).layout(puzzle.public)
    x, y = layout.control("next").center()
    touch = [
        {"k": "load", "t": T0, "w": 390, "h": 844, "scale": 0.3, "state": "visible"},
        {"k": "pointerdown", "t": T0 + 900, "x": x, "y": y, "button": 0, "pointer": "touch"},
        {"k": "pointerup", "t": T0 + 980, "x": x, "y": y, "button": 0, "pointer": "touch"},
        {"k": "click", "t": T0 + 990, "x": x, "y": y, "button": 0},
        {"k": "act.cycle", "t": T0 + 990, "delta": 1},
        {"k": "act.submit", "t": T0 + 30_000},  # time is up: the page submits by itself
    ]
    assert "no press on the submit button" in judge(puzzle, touch).problem
    assert judge(puzzle, touch, free_submit=True).ok
    assert judge(puzzle, touch[:1] + touch[-1:], free_submit=True).ok  # nothing entered: a wrong answer, kept


# --- the attacks, through the real app ------------------------------------------------------------
@pytest.fixture
def study(verified):
    verified(types=("Dice_Count",), per_type=4)
    return study_create(name="Integrity", split="test", puzzles_per_annotator=2, overlap=2)


def join(study, person, name):
    user, _ = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids={"PROLIFIC_PID": f"pid-{name}"})
    enrollment_consent(enrollment=enrollment)
    return enrollment


def scripted_submit(attempt, seq: int = 1):
    """What a script sends: the right answer as semantic actions, no hand behind them."""
    now = time.time() * 1000
    events = [
        {"k": "load", "t": now - 900, "w": 1280, "h": 1080, "scale": 1, "state": "visible"},
        {"k": "act.type", "t": now - 300, "text": str(attempt.puzzle.truth["sum"])},
        {"k": "act.submit", "t": now - 200},
    ]
    events_append(attempt_id=attempt.pk, batch=Batch(seq, events), received_ms=now)


@pytest.mark.django_db
def test_a_semantic_only_client_is_marked_and_left_out_of_pass1_but_counted_and_named(study, person):
    human, bot = join(study, person, "human"), join(study, person, "bot")
    for correct in (True, False):
        submit_answer(enrollment_next(enrollment=human).attempt, correct, wall_ms=4000)
    scripted = []
    for _ in range(2):
        scripted.append(enrollment_next(enrollment=bot).attempt)
        scripted_submit(scripted[-1])

    for attempt in Attempt.objects.filter(pk__in=[a.pk for a in scripted]):
        assert attempt.correct is True  # the verifier is fooled...
        assert (
            attempt.input_ok is False
            and attempt.input_problem == "no pointer movement or focus before the first action"
        )
    assert set(Attempt.objects.filter(participant=human.participant).values_list("input_ok", flat=True)) == {True}
    marks = attempt_marks(study=study)
    assert all("no_input" in marks[a.pk] for a in scripted)
    rows = {r["name"]: r for r in annotator_table(study=study)}
    assert (rows["bot"]["no_input"], rows["human"]["no_input"]) == (2, 0)

    report = study_report(study=study)  # ...but the report is not
    (dice,) = report["types"]
    assert (dice["correct"], dice["attempts"], dice["pass1"], dice["no_input"]) == (1, 2, 0.5, 2)
    assert report["overall"]["pass1_pooled"] == 0.5 and report["overall"]["no_input"] == 2
    assert report["annotators"] == 1  # the bot gave no answer that counts
    assert "without input evidence" in report["rules"]
    assert "Excluded: 2 without input evidence (actions with no pointer or key input behind them): Dice_Count 2." in (
        to_markdown(report)
    )
    header, row = to_csv(report).splitlines()[:2]
    columns = dict(zip(header.split(","), row.split(",")))
    assert columns["no_input"] == "2"
    assert pass1_by_type() == [{"type": "Dice_Count", "attempts": 2, "correct": 1, "pass1": 0.5}]

    staff = Client()
    staff.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    page = staff.get(f"/studies/{study.pk}/annotators/").content.decode()
    assert '<span class="chip">no input 2</span>' in page  # the bot's two attempts, marked on its row


@pytest.mark.django_db
def test_re_scoring_checks_the_input_again(study, person):
    from annotation.review.labels import puzzle_correct_truth

    bot = join(study, person, "bot")
    attempt = enrollment_next(enrollment=bot).attempt
    scripted_submit(attempt)
    Attempt.objects.filter(pk=attempt.pk).update(input_ok=None, input_problem="")  # scored before evidence was kept
    puzzle = attempt.puzzle
    puzzle_correct_truth(puzzle=puzzle, truth=dict(puzzle.truth), by=None)
    attempt.refresh_from_db()
    assert attempt.input_ok is False and "no pointer movement" in attempt.input_problem


async def receive_until(socket, kind: str) -> dict:
    while (frame := await socket.receive_json_from(timeout=10))["type"] != kind:
        pass
    return frame


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_hold_timed_by_the_servers_progress_frames_is_caught(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Hold_Button")
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    now = time.time() * 1000
    # A script that knows better than to send nothing but actions: it moves the pointer, then
    # starts the hold with no press at all and lets the server's progress frames time it.
    moves = [{"k": "pointermove", "t": now + i, "x": 300.0 + i, "y": 500.0, "pointer": "mouse"} for i in range(5)]
    load = {"k": "load", "t": now - 10, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
    await socket.send_to(text_data=batch(1, load, *moves, {"k": "act.hold_start", "t": now + 10}))
    assert await socket.receive_json_from() == {"type": "ack", "seq": 1}
    while (await socket.receive_json_from(timeout=10))["progress"] < 1:
        pass
    end = time.time() * 1000
    await socket.send_to(text_data=batch(2, {"k": "act.hold_end", "t": end}, {"k": "act.submit", "t": end}))
    await receive_until(socket, "submitted")
    await socket.disconnect()
    stored = await database_sync_to_async(Attempt.objects.get)(pk=attempt.pk)
    assert stored.correct is True  # held long enough, by the server's own measure...
    assert stored.input_ok is False and "act.hold_start" in stored.input_problem  # ...by no hand
    assert "no press on the hold button" in stored.input_problem


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_client_whose_raw_input_backs_its_actions_passes(open_attempt):
    attempt, session = await database_sync_to_async(open_attempt)("Geometry_Click")
    now = time.time() * 1000
    await database_sync_to_async(served_at)(attempt, now - 1500)
    x, y = attempt.puzzle.truth["point"]
    hand = Hand(attempt.puzzle, now - 1200)
    hand.press(*hand.layout.main.to_stage(x, y), {"k": "act.click", "x": x, "y": y}, {"k": "act.submit"})
    socket = socket_for(attempt.uid, session)
    assert (await socket.connect())[0]
    await socket.send_to(text_data=batch(1, *hand.events))
    await receive_until(socket, "submitted")
    await socket.disconnect()
    stored = await database_sync_to_async(Attempt.objects.get)(pk=attempt.pk)
    assert (stored.correct, stored.input_ok, stored.input_problem, stored.clock_ok) == (True, True, "", True)


def test_the_keyboard_is_a_hand_too():
    """The page's keyboard crosshair clicks with Enter once the arrows moved it there, the
    slider's handle slides with the arrow keys: each on the control that took the focus."""
    dot = puzzle_of("Place_Dot")
    hand = Hand(dot, T0)
    hand.t += 300
    hand.log("focusin", target="image")  # tabbed to the picture: the crosshair shows at its centre
    image = hand.layout.main
    centre = image.to_natural(*image.rect.center())
    for _ in range(2):
        hand.t += 120
        hand.log("keydown", key="ArrowRight", code="ArrowRight")  # with Shift: 25 stage px each
    hand.t += 200
    hand.log("keydown", key="Enter", code="Enter")
    hand.log("act.click", x=centre[0] + 50 / image.scale, y=centre[1])
    hand.t += 80
    hand.log("keyup", key="Enter", code="Enter")
    hand.press_control("submit", {"k": "act.submit"})
    assert judge(dot, hand.events).ok

    slide = puzzle_of("Slide_Puzzle")
    start_x, start_y = slide.public["start_position"]
    keys = Hand(slide, T0)
    keys.t += 300
    keys.log("focusin", target="slider")
    keys.t += 100
    keys.log("keydown", key="ArrowRight", code="ArrowRight")
    keys.log("act.drag_start", x=start_x, y=start_y)
    for _ in range(5):
        keys.t += 33
        keys.log("keydown", key="ArrowRight", code="ArrowRight")
    keys.t += 40
    keys.log("keyup", key="ArrowRight", code="ArrowRight")
    keys.log("act.drag_end", x=start_x + 10, y=start_y)
    assert judge(slide, keys.events).ok
    never_let_go = Hand(slide, T0)
    never_let_go.t += 300
    never_let_go.log("focusin", target="slider")
    never_let_go.log("keydown", key="ArrowRight", code="ArrowRight")
    never_let_go.log("act.drag_start", x=start_x, y=start_y)
    never_let_go.t += 500
    never_let_go.log("act.drag_end", x=start_x + 10, y=start_y)
    assert "no key let go at the drop" in judge(slide, never_let_go.events).problem
