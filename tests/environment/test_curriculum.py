"""The curriculum at reset: the pool filtered by replay verification, by people's pass rate and
by Qwen-CUA's mining rule over a run (solved at least once, not every time, in the last K); and
the contamination mark: which puzzles of an evaluation a trainer played."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from annotation.datasets.labels import puzzle_labels
from annotation.environment.episodes import episode_begin
from annotation.environment.protocol import BadRequest, reset_params
from annotation.live.attempts import participant_for_user
from annotation.models import AgentRun, Attempt, EnvToken, Flag, Rollout
from puzzles.models import Puzzle


def drawn(**reset) -> set[str]:
    """The puzzle types that 12 seeded resets with these filters draw."""
    token = EnvToken.objects.get()
    return {episode_begin(token=token, params=reset_params({**reset, "seed": seed})).type for seed in range(12)}


@pytest.fixture
def three(bank, key):
    puzzles = {p.type: p for p in bank("Geometry_Click", "Dice_Count", "Bingo")}
    key()
    return puzzles


def people_answered(puzzle: Puzzle, *verdicts: bool) -> None:
    for number, correct in enumerate(verdicts):
        user = get_user_model().objects.create_user(f"{puzzle.type}-{number}")
        participant = participant_for_user(user=user)
        Attempt.objects.create(participant=participant, puzzle=puzzle, submitted_at=timezone.now(), correct=correct)


def test_people_s_pass_rate_bounds_the_pool(three):
    people_answered(three["Geometry_Click"], True, True)
    people_answered(three["Dice_Count"], True, False)
    assert drawn(human_pass_max=0.6) == {"Dice_Count"}  # Bingo: nobody answered it, no rate
    assert drawn(human_pass_min=0.9) == {"Geometry_Click"}
    assert drawn() == {"Geometry_Click", "Dice_Count", "Bingo"}


def environment_run(client: str, checkpoint: str) -> AgentRun:
    settings = {"client": client, "checkpoint": checkpoint}
    return AgentRun.objects.create(name=f"env {client}: {checkpoint}", source="environment", settings=settings)


def test_the_mining_rule_keeps_puzzles_solved_sometimes(three):
    run = environment_run("trainer", "step-100")
    histories = {"Geometry_Click": [True, True, True], "Dice_Count": [False, True], "Bingo": [False, False]}
    for kind, verdicts in histories.items():
        for index, correct in enumerate(verdicts):
            Rollout.objects.create(
                run=run, puzzle=three[kind], index=index, status="done", correct=correct, finished_at=timezone.now()
            )
    Rollout.objects.create(run=run, puzzle=three["Bingo"], index=2, status="failed", correct=True)  # no evidence
    assert drawn(mined_from="env trainer: step-100") == {"Dice_Count"}
    with pytest.raises(BadRequest, match="no puzzle matches"):
        drawn(mined_from="env trainer: step-100", mined_last=1)  # the last rollout of each: all or nothing


def test_a_token_mines_only_its_own_runs_and_cannot_probe_others_names(three):
    theirs, evaluation = environment_run("lab-b", "step-100"), AgentRun.objects.create(name="eval")
    for run in (theirs, evaluation):
        for index, correct in enumerate((True, False)):
            Rollout.objects.create(
                run=run, puzzle=three["Bingo"], index=index, status="done", correct=correct, finished_at=timezone.now()
            )
    refusals = []
    for name in ("nobody", theirs.name, evaluation.name):
        with pytest.raises(BadRequest) as refused:
            drawn(mined_from=name)
        refusals.append(str(refused.value))
    assert refusals == [f"this token has no run named {name!r} to mine" for name in ("nobody", theirs.name, "eval")]


def test_verified_only_and_bad_filters(three):
    Puzzle.objects.filter(pk=three["Bingo"].pk).update(status=Puzzle.Status.VERIFIED)
    assert drawn(verified_only=True) == {"Bingo"}
    for bad, says in (
        ({"human_pass_min": 2}, "human_pass_min must be a rate from 0 to 1, not 2"),
        ({"verified_only": "yes"}, "verified_only must be true or false, not 'yes'"),
        ({"mined_last": 0}, "mined_last must be at least 1"),
    ):
        with pytest.raises(BadRequest, match=says):
            reset_params(bad)


def test_env_trained_names_an_evaluation_s_puzzles_that_a_trainer_played(three, capsys):
    token = EnvToken.objects.get()
    episode_begin(token=token, params=reset_params({"puzzle": three["Bingo"].uid, "checkpoint": "step-5"}))
    evaluation = AgentRun.objects.create(name="eval")
    for kind in ("Bingo", "Dice_Count"):  # k=2: two rollouts of each puzzle, counted once
        for index in range(2):
            Rollout.objects.create(run=evaluation, puzzle=three[kind], index=index)
    call_command("env", "trained", "eval")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{three['Bingo'].uid}  trained on since ") and out[0].endswith("by env trainer: step-5")
    assert out[-1] == "trained: 1 of 2 puzzles of 'eval' were trained on"


def test_valid_only_draws_verified_puzzles_people_do_not_find_suspect(three):
    Puzzle.objects.filter(pk__in=[p.pk for p in three.values()]).update(status=Puzzle.Status.VERIFIED)
    for number in range(2):  # two people's open flags: "flags", a suspect puzzle
        user = get_user_model().objects.create_user(f"flagger-{number}")
        Flag.objects.create(puzzle=three["Dice_Count"], participant=participant_for_user(user=user), reason="other")
    Puzzle.objects.filter(pk=three["Bingo"].pk).update(status=Puzzle.Status.DRAFT)
    assert drawn(valid_only=True) == {"Geometry_Click"}
    assert drawn(verified_only=True) == {"Geometry_Click", "Dice_Count"}
    labels = puzzle_labels(dataset=three["Dice_Count"].dataset, split=three["Dice_Count"].split)
    assert {row["type"] for row in labels.rows if row["valid"]} == {"Geometry_Click"}  # the labels agree


def test_people_solvable_keeps_what_enough_people_solved(three):
    """ARC-AGI-2's rule at reset (annotation/live/solvable.py): study attempts of people count."""
    from annotation.models import Study

    study = Study.objects.create(name="People", split=three["Bingo"].split, puzzles_per_annotator=1)
    for kind, verdicts in {"Geometry_Click": (True, True), "Dice_Count": (True, False)}.items():
        for number, correct in enumerate(verdicts):
            person = participant_for_user(user=get_user_model().objects.create_user(f"solver-{kind}-{number}"))
            Attempt.objects.create(
                participant=person, puzzle=three[kind], study=study, submitted_at=timezone.now(), correct=correct
            )
    assert drawn(people_solvable="2:2") == {"Geometry_Click"}
    assert drawn(people_solvable="1:1") == {"Geometry_Click", "Dice_Count"}
    with pytest.raises(BadRequest, match="write PEOPLE:ATTEMPTS"):
        reset_params({"people_solvable": "two"})
