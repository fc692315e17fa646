"""Human trajectories: attempts a person solved in Chromium, exported by replaying their events."""

import asyncio
import io
import json
import random

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from PIL import Image

from annotation.agents.browser import TO_VIEWPORT, chromium, open_attempt, signed_in_context, wait_submitted
from annotation.agents.server import live_server
from annotation.datasets.trajectories import attempt_steps, study_attempts
from annotation.live.attempts import participant_for_user
from annotation.models import Attempt, Enrollment, Participant, Study
from puzzles.models import Puzzle
from puzzles.registry import get_type
from puzzles.services import bank_generate
from tests.agents.fakes import FakeChatServer

from .test_reasoning import fake_model

RED = np.array([231, 76, 60])  # the point widget's dot (static/arena/play.css)


def reference(puzzle: Puzzle) -> list[dict]:
    puzzle_type = get_type(puzzle.type)
    return puzzle_type.compile_actions(puzzle.truth, puzzle_type.layout(puzzle.public))


class Person:
    """A hand on the person's page: curved approaches sampled by the browser, a pause, a press."""

    def __init__(self, page, seed: int = 3):
        self.page, self.rng = page, random.Random(seed)

    async def to_viewport(self, x: float, y: float) -> tuple[float, float]:
        [(vx, vy)] = await self.page.evaluate(TO_VIEWPORT, [[x, y]])
        return vx, vy

    async def approach(self, x: float, y: float) -> None:
        vx, vy = await self.to_viewport(x, y)
        mid = (vx + self.rng.uniform(-60, 60), vy + self.rng.uniform(-60, 60))
        await self.page.mouse.move(*mid, steps=8)
        await self.page.mouse.move(vx, vy, steps=8)
        await self.page.wait_for_timeout(120)

    async def click(self, x: float, y: float) -> None:
        await self.approach(x, y)
        await self.page.mouse.down()
        await self.page.wait_for_timeout(70)
        await self.page.mouse.up()
        await self.page.wait_for_timeout(150)

    async def drag(self, start: tuple[float, float], end: tuple[float, float]) -> None:
        await self.approach(*start)
        await self.page.mouse.down()
        ex, ey = await self.to_viewport(*end)
        await self.page.mouse.move(ex, ey, steps=25)
        await self.page.wait_for_timeout(80)
        await self.page.mouse.up()
        await self.page.wait_for_timeout(150)


def towards_the_centre(puzzle: Puzzle, point: tuple[float, float], by: tuple[float, float]) -> tuple[float, float]:
    """A point `by` px from `point` on the side of the picture's centre, so it lands on the picture
    wherever the end lies (the bank is random per run: an end near the left edge put a click 40 px
    to its left outside the picture, where the page logs no dot)."""
    cx, cy = get_type(puzzle.type).layout(puzzle.public).image.rect.center()
    return (point[0] + (by[0] if point[0] < cx else -by[0]), point[1] + (by[1] if point[1] < cy else -by[1]))


@pytest.fixture
def solved(transactional_db):
    """A person solves three puzzles of a study in Chromium on their own page: Place_Dot (a click
    beside the end first, then on it, then Submit), Slide_Puzzle (a drag) and Dice_Count (typing,
    then Enter). Returns the study, the attempts and the person's Place_Dot clicks (stage px)."""
    bank_generate(split="test", per_type=1, types=["Place_Dot", "Slide_Puzzle", "Dice_Count"], bank_seed=43, workers=1)
    Puzzle.objects.filter(dataset="generated:43").update(status=Puzzle.Status.VERIFIED)
    puzzles = {p.type: p for p in Puzzle.objects.filter(dataset="generated:43")}
    study = Study.objects.create(name="Trajectories", split="test", puzzles_per_annotator=3)
    user = get_user_model().objects.create_user(username="tess", password="pw")
    participant = participant_for_user(user=user)
    Enrollment.objects.create(study=study, participant=participant)
    attempts = {
        name: Attempt.objects.create(participant=participant, puzzle=puzzle, study=study)
        for name, puzzle in puzzles.items()
    }
    dot_click, dot_submit = reference(puzzles["Place_Dot"])
    end = (dot_click["arguments"]["x"], dot_click["arguments"]["y"])
    beside = towards_the_centre(puzzles["Place_Dot"], end, (40, 25))
    slide = reference(puzzles["Slide_Puzzle"])  # a drag, then Submit

    async def scenario():
        with live_server() as site:
            async with chromium() as browser:
                context = await signed_in_context(browser, site, user)
                page = await context.new_page()
                hand = Person(page)
                await open_attempt(page, attempts["Place_Dot"].uid)
                await hand.click(*beside)
                await hand.click(*end)
                await hand.click(dot_submit["arguments"]["x"], dot_submit["arguments"]["y"])
                await wait_submitted(page, 15)
                await open_attempt(page, attempts["Slide_Puzzle"].uid)
                for action in slide:
                    args = action["arguments"]
                    if action["action"] == "drag":
                        await hand.drag((args["start_x"], args["start_y"]), (args["end_x"], args["end_y"]))
                    else:
                        await hand.click(args["x"], args["y"])
                await wait_submitted(page, 15)
                await open_attempt(page, attempts["Dice_Count"].uid)
                await hand.approach(640, 900)
                await page.keyboard.type(str(puzzles["Dice_Count"].truth["sum"]), delay=90)
                await page.keyboard.press("Enter")
                await wait_submitted(page, 15)

    asyncio.run(scenario())
    done = {name: Attempt.objects.get(pk=a.pk) for name, a in attempts.items()}
    for attempt in done.values():
        assert attempt.correct and attempt.input_ok, (attempt.puzzle.type, attempt.reason, attempt.input_problem)
    return study, done, (beside, end)


def folder_of(out, attempt):
    (found,) = out.glob(f"*/*/attempt_{attempt.uid}")
    return found


def color_at(png_path, x: int, y: int) -> np.ndarray:
    image = np.asarray(Image.open(png_path).convert("RGB"))
    return image[y - 2 : y + 3, x - 2 : x + 3].reshape(-1, 3).mean(axis=0)


@pytest.mark.browser
def test_a_browser_solved_attempt_exports_one_screenshot_per_action_with_the_marker_where_the_person_clicked(
    solved, tmp_path
):
    study, attempts, (beside, end) = solved
    out = tmp_path / "trajectories"
    said = io.StringIO()
    call_command("trajectories", "export", "--study", str(study.pk), "--out", str(out), "--workers", "2", stdout=said)
    assert "3 of 3 attempts" in said.getvalue()
    assert not Attempt.objects.filter(participant__kind=Participant.Kind.REPLAY).exists()  # the replay's, deleted

    place = folder_of(out, attempts["Place_Dot"])
    meta = json.loads((place / "metafile.json").read_text())
    actions = [s["action"] for s in meta["steps"]]
    assert [a.split("(")[0] for a in actions] == ["click", "click", "click"]
    shots = sorted(p.name for p in (place / "screenshots").iterdir())
    assert len(shots) == len(actions) + 1  # the page before the first action, then one after each
    for number, (step, (x, y)) in enumerate(zip(meta["steps"][:2], (beside, end)), start=1):
        args = json.loads(step["action"][len("click(") : -1])
        assert abs(args["x"] - x) <= 1 and abs(args["y"] - y) <= 1  # page pixels: where the person clicked
        assert step["screenshot_path"] == f"screenshots/screenshot_step_{number}.png"
        image = place / step["screenshot_path"]
        assert np.abs(color_at(image, args["x"], args["y"]) - RED).max() < 30, number  # the dot is there

    # The dot moves: gone from beside the end after the second click, absent from the end before
    # it. The image under the dot is random per run (the bank key comes from a throwaway secret)
    # and may itself be reddish, so each screenshot is compared with the others, not with RED.
    def around(point):
        return [color_at(place / f"screenshots/screenshot_step_{n}.png", *map(round, point)) for n in (0, 1, 2)]

    before, first, second = around(beside)
    assert np.abs(second - before).max() < 10 and np.abs(second - first).max() > 20
    before, first, second = around(end)
    assert np.abs(first - before).max() < 10 and np.abs(second - before).max() > 20
    assert (
        meta["steps"][1]["arena_acts"][0]["k"] == "act.click" and meta["steps"][2]["arena_acts"][0]["k"] == "act.submit"
    )

    summary = json.loads((place / "summary.json").read_text())
    assert summary["correct"] and summary["total_steps"] == 3 and summary["puzzle_type"].startswith("Place_Dot_")
    assert summary["arena_replay"]["same_answer"] and summary["arena_replay"]["correct"]
    sft = json.loads((place / "sft_data.json").read_text())
    roles = [m["role"] for m in sft["conversations"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert sft["conversations"][1]["content"][0]["image"] == "screenshots/screenshot_step_0.png"
    assert sft["conversations"][2]["content"] == f"<think></think>\n{actions[0]}"

    path = np.load(place / "arena_pointer.npz")
    assert len(path["t"]) > 20 and np.all(np.diff(path["t"]) >= 0)  # samples in time order
    assert np.all(np.diff(path["segment"]) >= 0) and path["segment"].max() == 3
    downs = np.flatnonzero(path["kind"] == 1)
    assert len(downs) == 3 and all(path["buttons"][i] == 1 for i in downs)
    assert abs(path["x"][downs[0]] - beside[0]) < 1.5 and abs(path["y"][downs[0]] - beside[1]) < 1.5
    assert set(path["pointer_types"][path["pointer"]]) == {"mouse"}

    slide = json.loads((folder_of(out, attempts["Slide_Puzzle"]) / "summary.json").read_text())
    assert [t["action"].split("(")[0] for t in slide["transitions"]] == ["drag", "click"]
    assert slide["arena_replay"]["same_answer"], slide["arena_replay"]
    dice = json.loads((folder_of(out, attempts["Dice_Count"]) / "metafile.json").read_text())
    typed = str(attempts["Dice_Count"].puzzle.truth["sum"])
    assert [s["action"] for s in dice["steps"]] == [
        f'type_text({{"text": "{typed}"}})',
        'press_key({"key": "Enter"})',
    ]
    run = json.loads((out / "run_summary.json").read_text())
    assert run["agent"] == "human" and run["total_puzzles"] == 3 and run["total_correct"] == 3
    assert not (place / "arena_reasoning.json").exists()  # off by default

    # The reasoning fill, against a fake model server: step 2's text names coordinates and is dropped.
    texts = {
        1: "The dashed line from the car ends further along, so I try a spot near it.",
        2: f"I click at ({end[0]}, {end[1]}), the end of the line.",
        3: "The dot sits at the end of the car's path, so I submit.",
    }
    with FakeChatServer(fake_model(texts)) as server:
        reasoned = tmp_path / "reasoned"
        call_command(
            "trajectories",
            "export",
            "--study",
            "Trajectories",
            "--out",
            str(reasoned),
            "--workers",
            "2",
            "--reason-with",
            server.url,
            "--model",
            "writer-m",
            stdout=io.StringIO(),
        )
    place = folder_of(reasoned, attempts["Place_Dot"])
    meta = json.loads((place / "metafile.json").read_text())
    assert [s["reasoning"] for s in meta["steps"]] == [texts[1], "", texts[3]]
    records = json.loads((place / "arena_reasoning.json").read_text())["steps"]
    assert [(r["kept"], r["why"]) for r in records] == [(True, ""), (False, "names coordinates"), (True, "")]
    assert "row" not in records[0]["description"] and records[2]["description"] == "submitted the answer"
    sft = json.loads((place / "sft_data.json").read_text())
    assert sft["conversations"][2]["content"].startswith(f"<think>{texts[1]}</think>\nclick(")


def test_events_become_published_actions():
    """A press that travels is a drag, one held is a hold, keys in a row are typing, presses on a
    person's chrome (above the stage) are left out, semantic actions go to the step they came in."""
    events = [
        ("load", 0.0, {}),
        ("pointermove", 10.0, {"x": 100, "y": 100, "pointer": "mouse"}),
        ("pointerdown", 20.0, {"x": 100, "y": -30, "button": 0, "pointer": "mouse"}),  # the chrome
        ("pointerup", 90.0, {"x": 100, "y": -30, "button": 0, "pointer": "mouse"}),
        ("pointerdown", 100.0, {"x": 100, "y": 100, "button": 0, "pointer": "mouse"}),
        ("act.drag_start", 100.0, {"x": 1, "y": 2}),
        ("pointermove", 130.0, {"x": 150, "y": 101, "pointer": "mouse"}),
        ("pointerup", 160.0, {"x": 200, "y": 102, "button": 0, "pointer": "mouse"}),
        ("act.drag_end", 160.0, {"x": 50, "y": 2}),
        ("pointerdown", 300.0, {"x": 640, "y": 900, "button": 0, "pointer": "touch"}),
        ("act.hold_start", 300.0, {}),
        ("pointerup", 4300.0, {"x": 641, "y": 900, "button": 0, "pointer": "touch"}),
        ("act.hold_end", 4300.0, {}),
        ("keydown", 5000.0, {"key": "1", "code": "Digit1"}),
        ("act.type", 5001.0, {"text": "1"}),
        ("keydown", 5100.0, {"key": "Shift", "code": "ShiftLeft"}),
        ("keydown", 5150.0, {"key": "2", "code": "Digit2"}),
        ("act.type", 5151.0, {"text": "12"}),
        ("keydown", 5300.0, {"key": "Enter", "code": "Enter"}),
        ("act.submit", 5300.0, {}),
        ("act.submit", 9000.0, {}),  # (a second submit, long after: the page's own at a time limit)
    ]
    steps, outside = attempt_steps(events)
    assert outside == 1
    assert [s.name for s in steps] == ["drag", "hold", "type_text", "press_key"]
    drag, hold, typing, enter = steps
    assert drag.points[0] == (100.0, 100.0) and drag.points[-1] == (200.0, 102.0)
    assert [a["k"] for a in drag.acts] == ["act.drag_start", "act.drag_end"]
    assert hold.duration_ms == 4000 and [a["k"] for a in hold.acts] == ["act.hold_start", "act.hold_end"]
    assert typing.keys == ["1", "2"] and [a["text"] for a in typing.acts] == ["1", "12"]
    assert enter.keys == ["Enter"] and enter.acts == [{"k": "act.submit"}]


@pytest.mark.django_db
def test_excluded_annotators_and_attempts_without_input_are_left_out_unless_asked(dice):
    from .conftest import People

    (puzzle,) = dice(1)
    study = Study.objects.create(name="Left out", split="test", puzzles_per_annotator=1, overlap=3)
    people = People(study)
    kept = people.answer("ann", puzzle, True)
    people.answer_without_input("bob", puzzle, "3")
    people.answer("cy", puzzle, False)
    Enrollment.objects.filter(study=study, participant=people("cy")).update(excluded=True)

    chosen = study_attempts(study)
    assert list(chosen.attempts) == [kept] and chosen.left_out == {"excluded_annotators": 1, "no_input": 1}
    everyone = study_attempts(study, with_excluded=True, with_no_input=True)
    assert everyone.attempts.count() == 3 and everyone.left_out == {"excluded_annotators": 0, "no_input": 0}
