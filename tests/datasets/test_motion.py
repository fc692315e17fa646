"""Motion features and the human-likeness score: a hand's path against a scripted pointer's,
measured when the attempt is scored and shown beside agents on the motion page, in the command
and in the study report."""

import csv
import io
import math
import time

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from annotation.datasets.motion import motion_table
from annotation.live.attempts import participant_for_user, system_participant
from annotation.live.motion import features, first_action_press, pointer_path
from annotation.models import AgentRun, Attempt, Enrollment, Participant, Rollout
from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_create
from tests.live_stream import deliver, served_at


def hand(start=(200.0, 900.0), end=(700.0, 400.0), t0=1000.0) -> list[tuple[str, float, dict]]:
    """A reach along a bow, sampled every 8 ms with a little tremor, a rest, then a click."""
    rng = np.random.default_rng(5)
    events = [("load", t0, {})]
    steps = 60
    for i in range(steps + 1):
        s = i / steps
        ease = 3 * s * s - 2 * s * s * s  # slow, fast, slow
        x = start[0] + (end[0] - start[0]) * ease + 80 * math.sin(math.pi * ease) + rng.normal(0, 0.4)
        y = start[1] + (end[1] - start[1]) * ease + rng.normal(0, 0.4)
        events.append(("pointermove", t0 + 100 + 8 * i, {"x": x, "y": y, "pointer": "mouse"}))
    press = t0 + 100 + 8 * steps + 180  # resting a moment before pressing
    events += [
        ("pointerdown", press, {"x": end[0], "y": end[1], "button": 0, "pointer": "mouse"}),
        ("pointerup", press + 90, {"x": end[0], "y": end[1], "button": 0, "pointer": "mouse"}),
        ("act.click", press + 90, {"x": 10, "y": 10}),
    ]
    return events


def script(points=((700.0, 400.0), (300.0, 500.0)), t0=1000.0) -> list[tuple[str, float, dict]]:
    """A pointer that jumps to each point and presses at once (as a click call does)."""
    events = [("load", t0, {})]
    t = t0
    for x, y in points:
        t += 2500
        events += [
            ("pointermove", t, {"x": x, "y": y, "pointer": "mouse"}),
            ("pointerdown", t + 0.5, {"x": x, "y": y, "button": 0, "pointer": "mouse"}),
            ("pointerup", t + 1.0, {"x": x, "y": y, "button": 0, "pointer": "mouse"}),
            ("act.click", t + 1.0, {"x": 1, "y": 1}),
        ]
    return events


def test_a_hand_scores_as_human_and_a_scripted_pointer_does_not():
    human = features(pointer_path(hand()), first_action_press(hand()))
    assert human["straightness"] < 0.99 and human["density"] >= 2
    assert human["pause_ms"] == pytest.approx(180, abs=1) and 300 <= human["peak_speed"] <= 15000
    assert human["human_likeness"] == 1.0
    scripted = features(pointer_path(script()), first_action_press(script()))
    assert scripted["straightness"] == pytest.approx(1.0) and scripted["pause_ms"] == pytest.approx(0.5)
    assert scripted["human_likeness"] <= 0.25
    assert features(pointer_path([]), None)["human_likeness"] is None  # keys only: nothing to judge


def test_the_path_keeps_time_order_buttons_and_pointer_types():
    events = [
        ("pointermove", 20.0, {"x": 1, "y": 1, "pointer": "pen"}),
        ("pointerdown", 10.0, {"x": 0, "y": 0, "button": 2, "pointer": "touch"}),
        ("pointermove", 15.0, {"x": 0.5, "y": 0.5, "pointer": "touch"}),
        ("pointerup", 30.0, {"x": 2, "y": 2, "button": 2, "pointer": "touch"}),
        ("beat", 31.0, {}),
    ]
    path = pointer_path(events)
    assert list(path.t) == [10.0, 15.0, 20.0, 30.0]
    assert list(path.buttons) == [2, 2, 2, 0] and list(path.kind) == [1, 0, 0, 2]
    assert list(path.pointer) == [2, 2, 1, 2]


def as_page_logs(events: list[tuple[str, float, dict]], *, answer: str) -> list[dict]:
    """The events as the page sends them, moved to end now, with the answer typed and submitted
    after the click (Dice_Count's text box): what the intake stores and scoring measures."""
    shift = time.time() * 1000 - events[-1][1] - 400
    logged = [{"k": "load", "t": events[0][1] + shift, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}]
    logged.append({"k": "focusin", "t": logged[0]["t"], "target": "text"})  # the box is focused on load
    logged += [{"k": kind, "t": t + shift, **data} for kind, t, data in events[1:] if kind != "act.click"]
    t = logged[-1]["t"]
    logged += [
        {"k": "keydown", "t": t + 100, "key": answer[-1], "code": f"Digit{answer[-1]}"},
        {"k": "input", "t": t + 101, "input_type": "insertText"},
        {"k": "act.type", "t": t + 101, "text": answer},
        {"k": "keyup", "t": t + 140, "key": answer[-1], "code": f"Digit{answer[-1]}"},
        {"k": "keydown", "t": t + 300, "key": "Enter", "code": "Enter"},
        {"k": "act.submit", "t": t + 301},
    ]
    return logged


def answered(participant, puzzle, events, study=None) -> Attempt:
    """An attempt made with these events through the real intake, scored by it."""
    attempt = Attempt.objects.create(participant=participant, puzzle=puzzle, study=study)
    logged = as_page_logs(events, answer=str(puzzle.truth["sum"]))
    served_at(attempt, logged[0]["t"] - 100)
    deliver(attempt, logged)
    attempt.refresh_from_db()
    assert attempt.submitted_at is not None
    return attempt


@pytest.fixture
def people_and_agent(dice):
    """Two people whose hands curve and settle, and an agent run whose pointer jumps and presses,
    on the same Dice_Count puzzle of a study."""
    (puzzle,) = dice(1)
    study = study_create(name="Motion", split="test", puzzles_per_annotator=1)
    people = []
    for name, start in (("moe", (200.0, 900.0)), ("flo", (1000.0, 950.0))):
        person = participant_for_user(user=get_user_model().objects.create_user(name))
        Enrollment.objects.create(study=study, participant=person)
        people.append(answered(person, puzzle, hand(start=start), study))
    agent = system_participant(kind=Participant.Kind.AGENT, label="m")
    run = AgentRun.objects.create(name="run M", rollouts_per_puzzle=1, participant=agent)
    rollout = answered(agent, puzzle, script())
    Rollout.objects.create(run=run, puzzle=puzzle, index=0, attempt=rollout, status="done", correct=True)
    return study, people, rollout


@pytest.mark.django_db
def test_scoring_keeps_each_attempts_motion(people_and_agent):
    _, (moe, flo), rollout = people_and_agent
    assert moe.motion["human_likeness"] == flo.motion["human_likeness"] == 1.0
    # The first action is the typed answer: from the last move, 180 ms resting, 90 ms pressed, then
    # 100 ms to the key.
    assert moe.motion["pause_ms"] == pytest.approx(180 + 90 + 100, abs=1)
    assert moe.motion["samples"] == 63 and 0.5 < moe.motion["straightness"] < 0.99
    assert rollout.motion["human_likeness"] <= 0.25 and rollout.motion["straightness"] == 1.0
    assert rollout.motion["samples"] == 6  # a move, a press and a release at each of two points


@pytest.mark.django_db
def test_people_beside_an_agent_run_on_the_page_and_in_the_command(people_and_agent):
    _, (moe, _), _ = people_and_agent
    table = motion_table(dataset="generated:41", split="test")
    people, machine = table["rows"]
    assert (people["type"], people["group"], people["attempts"], people["with_path"], people["human_likeness"]) == (
        "Dice_Count",
        "people",
        2,
        2,
        1.0,
    )
    assert machine["group"] == "agent: run M" and machine["attempts"] == 1 and machine["human_likeness"] <= 0.25
    assert [row["group"] for row in table["overall"]] == ["people", "agent: run M"]

    # Attempts scored before motion was kept are measured by the command, as scoring would have.
    kept = moe.motion
    Attempt.objects.filter(pk=moe.pk).update(motion=None)
    assert motion_table(dataset="generated:41", split="test")["rows"][0]["measured"] == 1
    said = io.StringIO()
    call_command("labels", "motion", "--dataset", "generated:41", "--split", "test", "--measure", stdout=said)
    assert Attempt.objects.get(pk=moe.pk).motion == kept
    lines = said.getvalue().splitlines()
    assert lines[0] == "1 attempts scored before motion was kept, measured"
    assert lines[1].startswith("type\tgroup\tattempts\tmeasured") and lines[2].startswith("Dice_Count\tpeople\t2\t2\t2")
    assert "human-likeness: a quarter each" in said.getvalue()

    staff = Client()
    staff.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    page = staff.get("/datasets/motion/?dataset=generated:41&split=test").content.decode()
    assert "run M" in page and "People" in page and "a quarter each" in page
    visitor = Client()
    visitor.force_login(moe.participant.user)
    assert visitor.get("/datasets/motion/").url.startswith("/accounts/login/")  # staff only


@pytest.mark.django_db
def test_the_study_report_shows_motion_people_beside_the_agent(people_and_agent):
    study, _, _ = people_and_agent
    report = study_report(study=study)
    rows = {row["group"]: row for row in report["motion"]["rows"]}
    assert rows["people"]["attempts"] == 2 and rows["people"]["human_likeness"] == 1.0
    assert rows["people"]["pause_ms"] == pytest.approx(370, abs=1)
    assert rows["agent: run M"]["straightness"] == 1.0 and rows["agent: run M"]["human_likeness"] <= 0.25
    assert "a quarter each" in report["motion"]["rule"]

    markdown = render(report, "md")
    section = markdown.split("## Pointer motion: people beside agents", 1)[1]
    assert "| Dice_Count | People | 2 of 2 |" in section and "| Dice_Count | run M | 1 of 1 | " in section
    assert "| All types | People | 2 of 2 |" in section and "Human-likeness: a quarter each" in section
    page = render(report, "html")
    assert "Pointer motion: people beside agents" in page and "run M" in page
    summary = {(r["section"], r["measure"]): r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    assert summary[("motion:People", "human_likeness")]["value"] == "1"
    assert summary[("motion:People", "human_likeness")]["n"] == "2"
    assert float(summary[("motion:run M", "human_likeness")]["value"]) <= 0.25
