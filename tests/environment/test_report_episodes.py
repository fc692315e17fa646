"""The issue's done-when "a run fed by the environment appears in the report beside people, per
checkpoint", end to end: episodes played through openenv-core's client against `env serve`, then
the study report over the same puzzles."""

import asyncio

import pytest
from openenv.core import GenericEnvClient

from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.reporting.test_report_clustered import R, W, answer, enrol

from .test_done_when import truth_actions

pytestmark = pytest.mark.browser


def test_episodes_played_through_the_client_appear_in_the_study_report_per_checkpoint(env_server, bank, key):
    found = {puzzle.type: puzzle for puzzle in bank("Dice_Count", "Bingo")}
    dice, bingo = found["Dice_Count"], found["Bingo"]
    Puzzle.objects.filter(pk__in=(dice.pk, bingo.pk)).update(status=Puzzle.Status.VERIFIED)
    study = study_create(name="Baseline", split="test", puzzles_per_annotator=2, overlap=1)
    person = enrol(study, "ann")
    answer(person, dice, study, R, at=0)
    answer(person, bingo, study, W, at=1)
    base = f"{env_server()}/{key('lab')}"

    async def play(puzzle: Puzzle, checkpoint: str, actions: list[dict]) -> float | None:
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(puzzle=puzzle.uid, checkpoint=checkpoint)
            for action in actions:
                result = await env.step(action)
            return result.reward

    async def train():
        return [
            await play(dice, "step-1", truth_actions(dice)),
            await play(bingo, "step-1", [{"action": "done"}]),
            await play(bingo, "step-2", truth_actions(bingo)),
        ]

    assert asyncio.run(train()) == [1.0, 0.0, 1.0]
    report = study_report(study=study)
    (client,) = report["training"]["clients"]
    first, second = client["checkpoints"]
    assert (client["client"], first["checkpoint"], second["checkpoint"]) == ("lab", "step-1", "step-2")
    # step-1: Bingo 0 of 1, Dice_Count 1 of 1 (mean 50%) against people's Bingo 0%, Dice_Count 100%.
    assert [(t["type"], t["success"], t["people_pass1"]) for t in first["types"]] == [
        ("Bingo", 0.0, 0.0),
        ("Dice_Count", 1.0, 1.0),
    ]
    assert (first["mean_success_over_types"], first["people_mean_pass1"]) == (0.5, 0.5)
    # step-2: Bingo 1 of 1 against people's 0% there.
    assert (second["mean_success_over_types"], second["people_mean_pass1"]) == (1.0, 0.0)
    assert report["contamination"]["trained"] == 2  # the episodes played the study's own puzzles
    assert report["contamination"]["runs"] == ["env lab: step-1", "env lab: step-2"]
    html = render(report, "html")
    assert html.count('<circle class="checkpoint"') == 2
    assert "| Dice_Count | 100.0% | 100.0% (1) | – |" in render(report, "md")
