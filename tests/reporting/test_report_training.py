"""Training environment runs in the study report: each checkpoint's success per type beside
people's Pass@1 (table in every format, the progress chart in HTML), and contamination: which of
the report's puzzles training episodes played, and the report without them. Worked by hand:

People (study on the test split of generated:5), two people a and b:
    Dice_Count    D1: a R, b R    D2: a R, b W     Pass@1 3/4 = 75%
    Object_Match  O1: a W, b W    O2: a R, b W     Pass@1 1/4 = 25%     mean over types 50%
Trainer "lab" on the train split of the same dataset, checkpoints in the order they began:
    step-900   Dice_Count 1 of 2, Object_Match 0 of 2                   -> 50%, 0%; mean 25%; pooled 1/4
    step-1000  Dice_Count 2 of 2, Object_Match 1 of 2, Bingo 1 of 1     -> 100%, 50%, 100%; mean 5/6; pooled 4/5
               plus one episode closed before its end on D1 (failed: left out of success, but D1 was
               played, so trained on) and one still running (pending: nowhere)
People's line for both: their mean over the types both have, Dice_Count and Object_Match, 50%.
An evaluation run "eval" answered D1 (right) and O1 (wrong): 1 of its 2 puzzles was trained on.
Without trained-on puzzles (D1 left out): people's Dice_Count is D2 alone, 1/2; eval keeps O1.
"""

import csv
import io
import json

import pytest
from django.core.management import call_command

from annotation.environment.episodes import episode_begin
from annotation.environment.protocol import reset_params
from annotation.environment.tokens import token_create
from annotation.models import AgentRun, Rollout
from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from puzzles.services import bank_generate
from tests.reporting.test_report_clustered import R, W, answer, enrol
from tests.reporting.test_report_versus import agent_run

pytestmark = pytest.mark.django_db


def episode(token, puzzle: Puzzle, checkpoint: str, status: str, correct: bool | None = None) -> None:
    """An environment episode begun as `env serve` begins one, then ended as the harness ends one."""
    begun = episode_begin(token=token, params=reset_params({"puzzle": puzzle.uid, "checkpoint": checkpoint}))
    submitted = None if status == "pending" else status == "done"
    Rollout.objects.filter(pk=begun.rollout_id).update(status=status, submitted=submitted, correct=correct)


@pytest.fixture
def trained_study(verified):
    verified(types=("Dice_Count", "Object_Match"), per_type=2)
    d1, d2, o1, o2 = Puzzle.objects.filter(dataset="generated:5", split="test").order_by("type", "index")
    bank_generate(split="train", per_type=1, types=["Dice_Count", "Object_Match", "Bingo"], bank_seed=5, workers=1)
    train = {p.type: p for p in Puzzle.objects.filter(dataset="generated:5", split="train")}
    study = study_create(name="Trained", split="test", puzzles_per_annotator=4, overlap=2)
    a, b = enrol(study, "a"), enrol(study, "b")
    marks = {d1: (R, R), d2: (R, W), o1: (W, W), o2: (R, W)}
    for minute, (puzzle, (mark_a, mark_b)) in enumerate(marks.items()):
        answer(a, puzzle, study, mark_a, at=2 * minute)
        answer(b, puzzle, study, mark_b, at=2 * minute + 1)
    token, _ = token_create(name="lab", datasets=["generated:5"], splits=["train", "test"])  # test: it reaches d1
    for puzzle, outcomes in ((train["Dice_Count"], (R, W)), (train["Object_Match"], (W, W))):
        for correct in outcomes:
            episode(token, puzzle, "step-900", "done", correct)
    plays = [("Dice_Count", R), ("Dice_Count", R), ("Object_Match", R), ("Object_Match", W), ("Bingo", R)]
    for kind, correct in plays:
        episode(token, train[kind], "step-1000", "done", correct)
    episode(token, d1, "step-1000", "failed")  # closed before its end, on a puzzle of the study
    episode(token, train["Bingo"], "step-1000", "pending")
    agent_run("eval", {d1: R, o1: W})
    return study


def test_training_checkpoints_beside_people_and_the_trained_on_puzzles_by_hand(trained_study):
    report = study_report(study=trained_study)

    training = report["training"]
    assert training["datasets"] == ["generated:5"]
    (client,) = training["clients"]
    assert client["client"] == "lab"
    first, second = client["checkpoints"]  # the order they began, not the labels' ("step-1000" < "step-900")
    assert (first["checkpoint"], first["name"]) == ("step-900", "env lab: step-900")
    assert [(t["type"], t["episodes"], t["solved"], t["success"], t["people_pass1"]) for t in first["types"]] == [
        ("Dice_Count", 2, 1, 0.5, 0.75),
        ("Object_Match", 2, 0, 0.0, 0.25),
    ]
    assert (first["episodes"], first["solved"], first["failed"]) == (4, 1, 0)
    assert (first["success_pooled"], first["mean_success_over_types"], first["people_mean_pass1"]) == (0.25, 0.25, 0.5)
    assert second["checkpoint"] == "step-1000"
    assert [(t["type"], t["episodes"], t["solved"], t["success"], t["people_pass1"]) for t in second["types"]] == [
        ("Bingo", 1, 1, 1.0, None),
        ("Dice_Count", 2, 2, 1.0, 0.75),
        ("Object_Match", 2, 1, 0.5, 0.25),
    ]
    assert (second["episodes"], second["solved"], second["failed"]) == (5, 4, 1)
    assert second["success_pooled"] == 0.8 and second["mean_success_over_types"] == pytest.approx(5 / 6)
    assert second["people_mean_pass1"] == 0.5

    assert report["contamination"] == {
        "pool": 4,
        "trained": 1,
        "by_type": {"Dice_Count": 1},
        "people_answers": 2,
        "runs": ["env lab: step-1000"],
        "excluded": False,
    }
    agents = {agent["name"]: agent for agent in report["agents"]}
    assert agents["eval"]["trained_on"] == 1

    md = render(report, "md")
    assert "## Training runs: checkpoints against people" in md
    assert "| Type | People Pass@1 | step-900 | step-1000 |" in md
    assert "| Bingo | – | – | 100.0% (1) |" in md
    assert "| Dice_Count | 75.0% | 50.0% (2) | 100.0% (2) |" in md
    assert "| Object_Match | 25.0% | 0.0% (2) | 50.0% (2) |" in md
    assert "| Mean over types | – | 25.0% (4) | 83.3% (5) |" in md
    assert "| People, same types | – | 50.0% | 50.0% |" in md
    assert "1 episode closed before the end left out" in md
    assert "**Trained on:** 1 of the 4 puzzles were trained on (played in training environment episodes: " in md
    assert "Dice_Count 1) by env lab: step-1000. They are counted here: people answered them 2 times" in md

    dice, match = csv.DictReader(io.StringIO(render(report, "csv")))
    assert (dice["env:lab:step-900:success"], dice["env:lab:step-1000:success"]) == ("0.5", "1")
    assert (match["env:lab:step-900:success"], match["env:lab:step-1000:success"]) == ("0", "0.5")
    summary = {(r["section"], r["measure"]): r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    assert summary[("env:lab:step-1000", "mean_success_over_types")]["value"] == "0.8333"
    assert summary[("env:lab:step-1000", "success_pooled")]["n"] == "5"
    assert summary[("contamination", "trained_puzzles")]["value"] == "1"
    assert summary[("agent:eval", "trained_puzzles")]["value"] == "1"
    assert json.loads(render(report, "json"))["training"] == training

    # The chart: 0..100% from y 236 up to 16, two slots of 437 from x 56. step-900 at 25% (y 181),
    # step-1000 at 5/6 (y 52.7), joined; people's dashed line at 50% (y 126) across both slots.
    html = render(report, "html")
    assert '<circle class="checkpoint" cx="274.5" cy="181" r="4"' in html
    assert '<circle class="checkpoint" cx="711.5" cy="52.7" r="4"' in html
    assert '<line x1="274.5" y1="181" x2="711.5" y2="52.7" stroke="#f59e0b" stroke-width="2"/>' in html
    assert '<line x1="56" y1="126" x2="493" y2="126" stroke="#2563eb" stroke-width="2" stroke-dasharray="6 4"/>' in html
    assert (
        '<line x1="493" y1="126" x2="930" y2="126" stroke="#2563eb" stroke-width="2" stroke-dasharray="6 4"/>' in html
    )


def test_a_report_without_the_trained_on_puzzles(trained_study, tmp_path, staff):
    report = study_report(study=trained_study, exclude_trained=True)
    dice, match = report["types"]
    assert (dice["type"], dice["attempts"], dice["pass1"]) == ("Dice_Count", 2, 0.5)  # D2 alone
    assert (match["attempts"], match["pass1"]) == (4, 0.25)
    found = report["contamination"]
    assert (found["pool"], found["trained"], found["people_answers"], found["excluded"]) == (4, 1, 0, True)
    (agent,) = report["agents"]  # the trainer's failed episode on D1 is gone with D1
    assert (agent["name"], agent["trained_on"], agent["pass_at"]) == ("eval", 0, {"1": 0.0})
    assert [t["people_pass1"] for t in report["training"]["clients"][0]["checkpoints"][0]["types"]] == [0.5, 0.25]
    assert "They are left out of this report" in render(report, "md")
    downloaded = staff.get(f"/studies/{trained_study.pk}/report.json?exclude_trained=1").json()
    assert downloaded["contamination"]["excluded"] is True and downloaded["types"][0]["attempts"] == 2
    assert staff.get(f"/studies/{trained_study.pk}/report.json").json()["contamination"]["excluded"] is False
    out = tmp_path / "report.json"
    call_command("report", "--study", "Trained", "--exclude-trained", "--format", "json", "--out", str(out))
    assert json.loads(out.read_text())["contamination"]["excluded"] is True


def test_a_report_with_no_training_says_so(verified):
    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="Untrained", split="test", puzzles_per_annotator=1, overlap=1)
    report = study_report(study=study)
    assert report["training"] == {"datasets": ["generated:5"], "clients": []}
    assert report["contamination"]["trained"] == 0
    md = render(report, "md")
    assert "No training environment episodes on puzzles of generated:5." in md
    assert "No puzzle of this report (1 puzzle) was trained on" in md
    assert AgentRun.objects.count() == 0
