"""The chance rate and an agent run's effort over people's beside people against the run
(annotation/reporting/effort.py), worked by hand and read back from the rendered report."""

import csv
import io

import pytest
from django.contrib.auth import get_user_model

from annotation.live.attempts import participant_for_user
from annotation.models import AgentRun, Attempt, Participant, Rollout
from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_create
from tests.reporting.test_report_clustered import R, W, answer, enrol

pytestmark = pytest.mark.django_db


def rollout(run, puzzle, index, agent, *, correct: bool, actions: int, seconds: float) -> None:
    attempt = Attempt.objects.create(
        participant=agent, puzzle=puzzle, action_count=actions, active_ms=seconds * 1000, correct=correct
    )
    Rollout.objects.create(
        run=run, puzzle=puzzle, index=index, status="done", submitted=True, correct=correct, attempt=attempt
    )


def test_chance_and_effort_per_type_beside_people_against_a_run(verified):
    """Two Dice_Count and two Object_Match puzzles. People (a, b) answer each with 2 actions in 10 s
    (answer()); the run answers D1 in 6 actions and 30 s (3x, 3x), D2 in 4 and 10 s (2x, 1x), O1 in
    2 and 40 s (1x, 4x), O2 in 8 and 20 s (4x, 2x). Dice_Count: actions 2.5x, time 2x; Object_Match:
    2.5x and 3x; over types, the medians over the four puzzles: 2.5x and 2.5x. Chance: Dice_Count
    1/34 (a sum of 3 to 36), Object_Match the mean of 1/options over its two puzzles."""
    d1, d2, o1, o2 = verified(types=("Dice_Count", "Object_Match"), per_type=2)
    study = study_create(name="Effort", split="test", puzzles_per_annotator=4, overlap=2)
    a, b = enrol(study, "a"), enrol(study, "b")
    for minute, puzzle in enumerate((d1, d2, o1, o2)):
        answer(a, puzzle, study, R, at=minute)
        answer(b, puzzle, study, W, at=minute)
    run = AgentRun.objects.create(name="agent", model="m", rollouts_per_puzzle=1)
    agent = participant_for_user(user=get_user_model().objects.create_user("agent-user"))
    Participant.objects.filter(pk=agent.pk).update(kind=Participant.Kind.AGENT)
    for puzzle, actions, seconds in ((d1, 6, 30), (d2, 4, 10), (o1, 2, 40), (o2, 8, 20)):
        rollout(run, puzzle, 0, agent, correct=True, actions=actions, seconds=seconds)

    (versus,) = study_report(study=study)["versus"]
    dice, objects = versus["rows"]
    options = [o1.truth["option_count"], o2.truth["option_count"]]
    assert (dice["chance_rate"], objects["chance_rate"]) == (1 / 34, pytest.approx(sum(1 / n for n in options) / 2))
    assert (dice["actions_ratio"], dice["time_ratio"], dice["effort_puzzles"]) == (2.5, 2.0, 2)
    assert (objects["actions_ratio"], objects["time_ratio"]) == (2.5, 3.0)
    overall = versus["overall"]
    assert (overall["actions_ratio"], overall["time_ratio"], overall["effort_puzzles"]) == (2.5, 2.5, 4)
    assert overall["chance_rate"] == pytest.approx((dice["chance_rate"] + objects["chance_rate"]) / 2)

    report = study_report(study=study)
    markdown = render(report, "md")
    assert "| Chance | Actions × people's | Time × people's |" in markdown
    assert "| 2.94% | 2.50× | 2.00× |" in markdown  # Dice_Count's row
    assert "Actions × people&#x27;s" in render(report, "html")  # the same table, escaped
    rows = {row["type"]: row for row in csv.DictReader(io.StringIO(render(report, "csv")))}
    assert rows["Dice_Count"]["vs:agent:actions_ratio"] == "2.5" and rows["Object_Match"]["vs:agent:time_ratio"] == "3"
