"""A key is a hand only where the page's own keyboard path makes the action (issue 26, finding 1).

A red team's script sent the semantic actions plus one Enter keydown stamped at each action's
time and passed as a person, gold included (gold was never marked). The rules on their own first
(annotation/live/evidence.py, no database), then three bots through the real socket on a scored,
a gold and a practice attempt each: one key per action, semantic actions only, and holds timed
by the server's progress frames and never let go as the page lets go (a Space with no keyup or
with a forged window blur, a pointerdown ended by a move on the button). Every one of their
attempts is marked no_input, and quality control, the participants export and the report count
the marks on gold and practice apart.
"""

import csv
import io
import time

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Attempt
from annotation.reporting.render import to_markdown
from annotation.reporting.reports import study_report
from annotation.studies.quality import annotator_table, attempt_marks
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.registry import get_type
from tests.live_stream import Hand, batch, socket_for
from tests.security.test_evidence import T0, judge, puzzle_of

ENTER = {"key": "Enter", "code": "Enter"}
SPACE = {"key": " ", "code": "Space"}
# How long before its batch is sent a bot stamps its hold's start (hold_bot): more than the
# progress frame's rounding can cut from a hold, less than the slack the server allows a claim.
HOLD_LEAD_MS = 100.0


def one_key_per_action(hand: Hand, *acts: dict, key: dict = ENTER) -> Hand:
    """The red team's script: each semantic action with a keydown stamped at its time."""
    for act in acts:
        hand.t += 150
        hand.log("keydown", **key)
        hand.log(act["k"], **{k: v for k, v in act.items() if k != "k"})
    return hand


# --- the rules, no database ---------------------------------------------------------------------
def test_keys_alone_are_no_movement_and_one_key_per_action_backs_nothing():
    dice = puzzle_of("Dice_Count")
    bot = one_key_per_action(Hand(dice, T0), {"k": "act.type", "text": "17"}, {"k": "act.submit"})
    assert judge(dice, bot.events).problem == "no pointer movement or focus before the first action"
    moving = one_key_per_action(Hand(dice, T0).move(300, 400), {"k": "act.type", "text": "17"})
    assert "no keystroke or input event in the focused text box" in judge(dice, moving.events).problem

    option = puzzle_of("Object_Match")
    cycled = one_key_per_action(Hand(option, T0).move(300, 400), {"k": "act.cycle", "delta": 1})
    assert "no press on its arrow button" in judge(option, cycled.events).problem
    cells = puzzle_of("Image_Recognition")
    toggled = one_key_per_action(Hand(cells, T0).move(300, 400), {"k": "act.toggle", "cell": 2}, key=SPACE)
    assert "no press on its cell" in judge(cells, toggled.events).problem


def test_a_key_counts_on_the_control_that_took_the_focus_and_no_other():
    option = puzzle_of("Object_Match")
    right = Hand(option, T0)
    right.t += 400
    right.log("focusin", target="next")
    one_key_per_action(right, {"k": "act.cycle", "delta": 1})
    right.t += 200
    right.log("focusin", target="submit")  # tabbed on
    one_key_per_action(right, {"k": "act.submit"}, key=SPACE)
    assert judge(option, right.events).ok
    wrong = Hand(option, T0)
    wrong.t += 400
    wrong.log("focusin", target="prev")  # the other arrow has the focus: Enter goes back, not on
    one_key_per_action(wrong, {"k": "act.cycle", "delta": 1})
    assert "no press on its arrow button" in judge(option, wrong.events).problem

    dice = puzzle_of("Dice_Count")
    typed = Hand(dice, T0)
    typed.log("focusin", target="text")  # the page focuses the box on load
    typed.type("17")
    typed.t += 200
    typed.log("keydown", **ENTER)
    typed.log("act.submit")  # Enter in the box submits
    assert judge(dice, typed.events).ok
    unfocused = Hand(dice, T0)
    unfocused.log("focusin", target="submit")
    unfocused.type("17")
    assert "no keystroke or input event in the focused text box" in judge(dice, unfocused.events).problem
    no_key = Hand(dice, T0)
    no_key.log("focusin", target="text")
    no_key.t += 300
    no_key.log("input", input_type="insertText")  # typed text with no key before it
    no_key.log("act.type", text="1")
    assert "no keystroke or input event" in judge(dice, no_key.events).problem


def test_a_keyboard_click_needs_the_arrows_that_moved_the_crosshair_there():
    dot = puzzle_of("Place_Dot")
    image = Hand(dot, T0).layout.main
    cx, cy = image.to_natural(*image.rect.center())
    far = (cx + 80 / image.scale, cy - 30 / image.scale)  # 80 stage px right, 30 up

    def keyboard(arrows: list[str]) -> Hand:
        hand = Hand(dot, T0)
        hand.t += 300
        hand.log("focusin", target="image")
        for key in arrows:
            hand.t += 100
            hand.log("keydown", key=key, code=key)
        hand.t += 100
        hand.log("keydown", **ENTER)
        hand.log("act.click", x=far[0], y=far[1])
        return hand

    enough = ["ArrowRight"] * 4 + ["ArrowUp"] * 2  # Shift + arrow: 25 px a press
    assert judge(dot, keyboard(enough).events).ok
    found = judge(dot, keyboard(["ArrowRight"] * 2 + ["ArrowUp"] * 2).events)
    assert "the arrow keys never moved the crosshair there" in found.problem
    assert "never moved the crosshair" in judge(dot, keyboard([]).events).problem  # one Enter, no arrows


def test_a_pointer_press_needs_its_pointerdown_and_pointerup_at_its_place():
    cells = puzzle_of("Image_Recognition")
    hand = Hand(cells, T0)
    x, y = hand.layout.cell(4).center()
    hand.move(x, y)
    hand.t += 80
    hand.log("pointerup", x=x, y=y, button=0, pointer="mouse")
    hand.log("click", x=x, y=y, button=0)
    hand.log("act.toggle", cell=4)
    assert "no press on its cell" in judge(cells, hand.events).problem  # no pointerdown
    elsewhere = Hand(cells, T0)
    ox, oy = elsewhere.layout.cell(0).center()
    elsewhere.move(ox, oy)
    elsewhere.log("pointerdown", x=ox, y=oy, button=0, pointer="mouse")
    elsewhere.move(x, y)
    elsewhere.log("pointerup", x=x, y=y, button=0, pointer="mouse")
    elsewhere.log("act.toggle", cell=4)
    assert "no press on its cell" in judge(cells, elsewhere.events).problem  # pressed on another cell


def held(hand: Hand, *, by: str, let_go: bool) -> Hand:
    """A hold of 3 s on the hold button, by the pointer or by Space; let go at its end or never."""
    x, y = hand.layout.control("hold").center()
    hand.move(x, y)
    hand.t += 20
    if by == "key":
        hand.log("focusin", target="hold")
        hand.log("keydown", **SPACE)
    else:
        hand.log("pointerdown", x=x, y=y, button=0, pointer="mouse")
    hand.log("act.hold_start")
    hand.t += 3000
    if let_go:
        hand.log("keyup", **SPACE) if by == "key" else hand.log("pointerup", x=x, y=y, button=0, pointer="mouse")
    hand.log("act.hold_end")
    hand.log("act.submit")
    return hand


def test_a_hold_is_let_go_at_its_end_by_the_key_or_pointer_that_started_it():
    puzzle = puzzle_of("Hold_Button")
    for by in ("key", "pointer"):
        assert judge(puzzle, held(Hand(puzzle, T0), by=by, let_go=True).events).ok, by
        never = judge(puzzle, held(Hand(puzzle, T0), by=by, let_go=False).events)
        assert "act.hold_end" in never.problem and "the press was not let go when the hold ended" in never.problem
    unfocused = Hand(puzzle, T0).move(300, 300)
    unfocused.log("keydown", **SPACE)  # a key, but the hold button never had the focus
    unfocused.log("act.hold_start")
    assert "no press on the hold button" in judge(puzzle, unfocused.events).problem


def test_a_hold_ends_as_the_page_ends_it_and_a_window_blur_is_no_hand():
    """The page ends a hold on the key's keyup, a pointerup or pointercancel, or the pointer
    leaving the button (widgets.js, hold); a forged blur or a move on the button is none of them."""
    puzzle = puzzle_of("Hold_Button")
    key_then_blur = held(Hand(puzzle, T0), by="key", let_go=False)
    key_then_blur.events.insert(-2, {"k": "blur", "t": key_then_blur.t})
    assert "the press was not let go when the hold ended" in judge(puzzle, key_then_blur.events).problem

    button = Hand(puzzle, T0).layout.control("hold")
    x, y = button.center()

    def pointer_hold(*end: tuple[str, float]) -> list[dict]:
        """A mouse press on the button, held 3 s, then `end`'s events at the hold's end."""
        hand = held(Hand(puzzle, T0), by="pointer", let_go=False)
        for kind, ex in end:
            fields = {"button": 0} if kind != "pointermove" else {}
            hand.events.insert(-2, {"k": kind, "t": hand.t, "x": ex, "y": y, "pointer": "mouse", **fields})
        return hand.events

    wiggle = judge(puzzle, pointer_hold(("pointermove", x + 1)))  # a move that stays on the button
    assert "the press was not let go when the hold ended" in wiggle.problem
    off = button.x + button.w + 2
    assert judge(puzzle, pointer_hold(("pointermove", x + 1), ("pointermove", off))).ok  # slid off: pointerleave
    assert judge(puzzle, pointer_hold(("pointercancel", x))).ok


def test_a_touch_tap_may_slide_across_a_cell_edge_and_a_mouse_press_may_not():
    """At a phone's scale (0.45) a tap that lands 10 CSS px inside the neighbouring cell and lifts
    in the target cell is a press on the target, as the browser's click is; a mouse's is not."""
    cells = puzzle_of("Image_Recognition")

    def tap(pointer: str) -> list[dict]:
        hand = Hand(cells, T0)
        hand.events[0]["scale"] = 0.45
        target, neighbour = hand.layout.cell(4), hand.layout.cell(3)
        down = (neighbour.x + neighbour.w - 10 / 0.45, neighbour.y + neighbour.h / 2)
        up = (target.x + 4, down[1])
        hand.move(*down)
        hand.log("pointerdown", x=down[0], y=down[1], button=0, pointer=pointer)
        hand.t += 90
        hand.log("pointerup", x=up[0], y=up[1], button=0, pointer=pointer)
        hand.log("click", x=up[0], y=up[1], button=0)
        hand.log("act.toggle", cell=4)
        return hand.events

    assert judge(cells, tap("touch")).ok
    assert judge(cells, tap("pen")).ok
    assert "no press on its cell" in judge(cells, tap("mouse")).problem


# --- the bots, through the real socket, on scored, gold and practice attempts --------------------
def three_purposes_study(verified, type_name: str):
    """A study of one type with a practice puzzle, a gold puzzle and one scored puzzle each."""
    practice, gold, *_ = verified(types=(type_name,), per_type=4)
    return study_create(
        name=f"Keys {type_name}", split="test", puzzles_per_annotator=1, overlap=1, practice=[practice], gold=[gold]
    )


def enrol(study, person, name: str):
    user, session = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids={"PROLIFIC_PID": f"pid-{name}"})
    enrollment_consent(enrollment=enrollment)
    return enrollment, session


async def receive_until(socket, kind: str) -> dict:
    while (frame := await socket.receive_json_from(timeout=10))["type"] != kind:
        pass
    return frame


async def one_key_bot(socket, attempt) -> None:
    """The red team's bot: the right sum typed and submitted, one Enter keydown at each action."""
    now = time.time() * 1000
    typed, sent = now - 400, now - 200
    await socket.send_to(
        text_data=batch(
            1,
            {"k": "load", "t": now - 900, "w": 1280, "h": 1080, "scale": 1, "state": "visible"},
            {"k": "keydown", "t": typed, **ENTER},
            {"k": "act.type", "t": typed, "text": str(attempt.puzzle.truth["sum"])},
            {"k": "keydown", "t": sent, **ENTER},
            {"k": "act.submit", "t": sent},
        )
    )


async def semantic_bot(socket, attempt) -> None:
    now = time.time() * 1000
    load = {"k": "load", "t": now - 900, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
    typed = {"k": "act.type", "t": now - 300, "text": str(attempt.puzzle.truth["sum"])}
    await socket.send_to(text_data=batch(1, load, typed, {"k": "act.submit", "t": now - 200}))


def hold_bot(*, by: str, end_with: str):
    """A pointer that wanders, then a hold started by Space on the focused hold button or by a
    pointerdown on it, timed by the server's progress frames and ended by `end_with`: nothing,
    a window blur, or a pointermove on the button. None of them lets go as the page does.
    (Without the focusin a Space is caught at the start: no press on the hold button.)

    The hold counts for the shorter of the page's claim (end minus start, by the bot's clock)
    and what the server saw (the two arrivals apart, plus CLOCK_SLACK_MS). Both exceed the hold
    time by order alone, never by speed: the start is stamped before it is sent, so before the
    server's measure begins; the progress frame of 1 goes out once that measure has reached the
    hold time (but for its rounding to 3 places: under HOLD_LEAD_MS); the end is stamped after
    that frame arrives and sent after that. A start stamped after the send (it was now + 10 ms)
    claimed up to 10 ms less than the server saw, and failed whenever the progress tick that
    crossed the hold time came less than that after it: where the 100 ms ticks fall depends on
    the box's speed (the claim's margin over the hold ranged 18 to 77 ms in 15 holds at load 1)."""

    async def play(socket, attempt) -> None:
        x, y = get_type(attempt.puzzle.type).layout(attempt.puzzle.public).control("hold").center()
        # Pressed HOLD_LEAD_MS before the batch goes out, so before the server receives it and
        # starts its measure; the end below is stamped after the server's measure reached the
        # hold time. The page's claim then exceeds the hold at any speed (hold_bot's docstring).
        pressed = time.time() * 1000 - HOLD_LEAD_MS
        load = {"k": "load", "t": pressed - 10, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}
        moves = [
            {"k": "pointermove", "t": pressed - 10 + i, "x": x - 5 + i, "y": y, "pointer": "mouse"} for i in range(5)
        ]
        if by == "key":
            press = [{"k": "focusin", "t": pressed - 4, "target": "hold"}, {"k": "keydown", "t": pressed, **SPACE}]
        else:
            press = [{"k": "pointerdown", "t": pressed, "x": x, "y": y, "button": 0, "pointer": "mouse"}]
        await socket.send_to(text_data=batch(1, load, *moves, *press, {"k": "act.hold_start", "t": pressed}))
        while (frame := await socket.receive_json_from(timeout=10))["type"] != "hold" or frame["progress"] < 1:
            pass
        t = time.time() * 1000
        ending = {
            "nothing": [],
            "blur": [{"k": "blur", "t": t}],
            "move": [{"k": "pointermove", "t": t, "x": x + 1, "y": y, "pointer": "mouse"}],
        }[end_with]
        await socket.send_to(text_data=batch(2, *ending, {"k": "act.hold_end", "t": t}, {"k": "act.submit", "t": t}))

    return play


async def play_every_puzzle(enrollment, session, bot) -> list[Attempt]:
    """Practice, gold and the scored puzzle, in the queue's order, each answered by the bot."""
    played = []
    while (step := await database_sync_to_async(enrollment_next)(enrollment=enrollment)).attempt is not None:
        attempt = await database_sync_to_async(Attempt.objects.select_related("puzzle").get)(pk=step.attempt.pk)
        socket = socket_for(attempt.uid, session)
        assert (await socket.connect())[0]
        await bot(socket, attempt)
        await receive_until(socket, "submitted")
        await socket.disconnect()
        played.append(attempt)
    return played


def assert_marked_everywhere(study, bot_name: str, played: list[Attempt]) -> None:
    stored = Attempt.objects.filter(pk__in=[a.pk for a in played])
    assert sorted(stored.values_list("purpose", flat=True)) == ["gold", "practice", "scored"]
    assert [(a.purpose, a.input_ok) for a in stored if a.input_ok is not False] == []
    marks = attempt_marks(study=study)
    assert [a.purpose for a in stored if "no_input" not in marks.get(a.pk, [])] == []
    (row,) = [r for r in annotator_table(study=study) if r["name"] == bot_name]
    assert (row["no_input"], row["gold_no_input"], row["practice_no_input"]) == (1, 1, 1)

    staff = Client()
    staff.force_login(get_user_model().objects.create_user(f"boss-{bot_name}", is_staff=True))
    exported = staff.get(f"/studies/{study.pk}/participants.csv").content.decode()
    (line,) = [r for r in csv.DictReader(io.StringIO(exported)) if r["name"] == bot_name]
    assert (line["marks_no_input"], line["gold_no_input"], line["practice_no_input"]) == ("1", "1", "1")
    page = staff.get(f"/studies/{study.pk}/annotators/").content.decode()
    assert '<span class="chip">no input on gold 1</span>' in page

    report = study_report(study=study)
    assert report["no_input_beside_pool"] == {"gold": 1, "practice": 1}
    assert "without input evidence beside the scored puzzles: gold 1, practice 1" in to_markdown(report)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize("bot", [one_key_bot, semantic_bot], ids=["one key per action", "semantic only"])
async def test_typing_bots_are_marked_on_scored_gold_and_practice(verified, person, bot):
    study = await database_sync_to_async(three_purposes_study)(verified, "Dice_Count")
    enrollment, session = await database_sync_to_async(enrol)(study, person, "bot")
    played = await play_every_puzzle(enrollment, session, bot)
    stored = await database_sync_to_async(list)(Attempt.objects.filter(pk__in=[a.pk for a in played]))
    assert all(a.correct for a in stored)  # the verifier is fooled on every one...
    await database_sync_to_async(assert_marked_everywhere)(study, "bot", played)  # ...the marks are not


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("by", "end_with"),
    [("key", "nothing"), ("key", "blur"), ("pointer", "move")],
    ids=["key never let go", "key then a window blur", "pointerdown then a move on the button"],
)
async def test_a_bot_hold_is_marked_on_scored_gold_and_practice(verified, person, by, end_with):
    study = await database_sync_to_async(three_purposes_study)(verified, "Hold_Button")
    enrollment, session = await database_sync_to_async(enrol)(study, person, "holder")
    played = await play_every_puzzle(enrollment, session, hold_bot(by=by, end_with=end_with))
    stored = await database_sync_to_async(list)(Attempt.objects.filter(pk__in=[a.pk for a in played]))
    assert all(a.correct for a in stored)  # held long enough, by the server's own measure...
    assert {a.input_problem.split(":")[-1].strip() for a in stored} == {"the press was not let go when the hold ended"}
    await database_sync_to_async(assert_marked_everywhere)(study, "holder", played)  # ...by no hand
