"""Motion features and the human-likeness score: a hand's path against a scripted pointer's."""

import io
import math

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from annotation.datasets.motion import features, first_action_press, motion_table, pointer_path
from annotation.live.attempts import participant_for_user, system_participant
from annotation.models import AgentRun, Attempt, Event, Participant, Rollout, Study


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


@pytest.mark.django_db
def test_people_beside_an_agent_run_per_type(dice):
    (puzzle,) = dice(1)
    study = Study.objects.create(name="Motion", split="test", puzzles_per_annotator=1)
    person = participant_for_user(user=get_user_model().objects.create_user("moe"))
    agent = system_participant(kind=Participant.Kind.AGENT, label="m")
    run = AgentRun.objects.create(name="run M", rollouts_per_puzzle=1, participant=agent)
    rows = []
    for who, events in ((person, hand()), (agent, script())):
        attempt = Attempt.objects.create(
            participant=who,
            puzzle=puzzle,
            study=study if who is person else None,
            submitted_at=timezone.now(),
            correct=True,
            input_ok=True,
        )
        rows += [
            Event(attempt=attempt, seq=1, index=i, kind=k, t=t, received=t, data=d)
            for i, (k, t, d) in enumerate(events)
        ]
        if who is agent:
            Rollout.objects.create(run=run, puzzle=puzzle, index=0, attempt=attempt, status="done", correct=True)
    Event.objects.bulk_create(rows)
    table = motion_table(dataset="generated:41", split="test")
    people, machine = table["rows"]
    assert (people["type"], people["group"], people["attempts"], people["human_likeness"]) == (
        "Dice_Count",
        "people",
        1,
        1.0,
    )
    assert machine["group"] == "agent: run M" and machine["human_likeness"] <= 0.25
    said = io.StringIO()
    call_command("labels", "motion", "--dataset", "generated:41", "--split", "test", stdout=said)
    lines = said.getvalue().splitlines()
    assert lines[0].startswith("type\tgroup\tattempts") and lines[1].startswith("Dice_Count\tpeople\t1\t1")
    assert "human-likeness: a quarter each" in said.getvalue()
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    page = staff.get("/datasets/motion/?dataset=generated:41&split=test").content.decode()
    assert "agent: run M" in page and "people" in page and "a quarter each" in page
    moe = Client()
    moe.force_login(person.user)
    assert moe.get("/datasets/motion/").status_code == 302  # staff only
