"""People against an agent run on the same puzzles: the paired difference of Pass@1 with its
bootstrap interval over puzzles, and who solves what the other does not, against numbers worked out
by hand here (the worked example of docs/reports.md "People against an agent")."""

import csv
import io
import json
import math
import re

import numpy as np
import pytest

from annotation.live.attempts import system_participant
from annotation.models import AgentRun, Participant, Rollout
from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.reporting.stats import PairedPuzzles, paired_bootstrap, percentile_interval
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.reporting.test_report_clustered import R, W, answer, enrol

# The worked example, Dice_Count: people's answers (a, b, c) and the agent's one rollout per puzzle.
#          a  b  c   people   agent   difference
#   P1     R  R  R   3/3      R       0
#   P2     R  R  R   3/3      W       +1
#   P3     R  W  W   1/3      W       +1/3
#   P4     W  W  W   0/3      R       -1
# People's Pass@1 (1 + 1 + 1/3 + 0) / 4 = 7/12, the agent's 2/4, difference +1/12 = +8.3 pts.
# People solve (most answers right) P1, P2; the agent P1, P4: people only P2, agent only P4 (1 in 4
# each), both P1, neither P3.
DICE = [(3, 3, 1.0), (3, 3, 0.0), (3, 1, 0.0), (3, 0, 1.0)]
# Object_Match: O1 people R R W (2/3), agent R; O2 people W W W, agent W. People 1/3, agent 1/2,
# difference -1/6; people and agent both solve O1, neither O2.
MATCH = [(3, 2, 1.0), (3, 0, 0.0)]


def bootstrap_sd_by_hand(puzzles: list[tuple[int, int, float]]) -> float:
    """The standard deviation of the two-stage bootstrap's mean difference over n puzzles: each
    drawn term is d_p = h_p - a_p of a puzzle drawn at random, plus the redrawing of its m answers
    (variance h(1 - h)/m), so Var = (Var_p(d) + mean_p(h(1 - h)/m)) / n."""
    n = len(puzzles)
    d = [c / m - a for m, c, a in puzzles]
    mean = sum(d) / n
    between = sum((x - mean) ** 2 for x in d) / n
    within = sum((c / m) * (1 - c / m) / m for m, c, _ in puzzles) / n
    return math.sqrt((between + within) / n)


def test_the_bootstrap_spread_matches_the_hand_formula():
    # Dice_Count: d = (0, 1, 1/3, -1), mean 1/12, Var_p(d) = 19/36 - 1/144 = 75/144; within: only
    # P3, (1/3)(2/3)/3 = 2/27, mean 1/54. SD = sqrt((75/144 + 1/54) / 4) = 0.3672.
    assert bootstrap_sd_by_hand(DICE) == pytest.approx(math.sqrt((75 / 144 + 1 / 54) / 4))
    assert bootstrap_sd_by_hand(DICE) == pytest.approx(0.36720, abs=1e-5)
    resampled = paired_bootstrap([PairedPuzzles.of(DICE)], resamples=100_000, seed=1)[:, 0]
    assert resampled.mean() == pytest.approx(1 / 12, abs=0.005)
    assert resampled.std() == pytest.approx(0.36720, rel=0.01)
    # Drawn puzzle by puzzle and answer by answer, the naive way, the spread is the same.
    rng = np.random.default_rng(2)
    picks = rng.integers(0, 4, size=(100_000, 4))
    m, c, a = (np.array(column)[picks] for column in zip(*DICE))
    naive = (rng.binomial(m, c / m) / m - a).mean(axis=1)
    assert naive.std() == pytest.approx(resampled.std(), rel=0.01)


def test_the_bootstrap_is_seeded():
    both = [PairedPuzzles.of(DICE), PairedPuzzles.of(MATCH)]
    assert np.array_equal(paired_bootstrap(both), paired_bootstrap(both))


@pytest.fixture
def puzzles(verified):
    verified(types=("Dice_Count", "Object_Match"), per_type=4)
    found = list(Puzzle.objects.filter(dataset="generated:5").order_by("type", "index"))
    return found[:4], found[4:]


def agent_run(name: str, outcomes: dict) -> AgentRun:
    agent = system_participant(kind=Participant.Kind.AGENT, label=name)
    run = AgentRun.objects.create(name=name, rollouts_per_puzzle=1, participant=agent)
    for puzzle, correct in outcomes.items():
        Rollout.objects.create(run=run, puzzle=puzzle, index=0, status="done", submitted=True, correct=correct)
    return run


@pytest.mark.django_db
def test_people_against_an_agent_by_hand(puzzles):
    (p1, p2, p3, p4), (o1, o2, o3, _) = puzzles
    study = study_create(name="Versus", split="test", puzzles_per_annotator=6, overlap=3)
    people = [enrol(study, name) for name in "abc"]
    answers = {p1: "RRR", p2: "RRR", p3: "RWW", p4: "WWW", o1: "RRW", o2: "WWW"}
    minute = 0
    for puzzle, marks in answers.items():
        for who, mark in zip(people, marks):
            answer(who, puzzle, study, R if mark == "R" else W, at=minute)
            minute += 1
    # O3 is in the study's pool but nobody answered it: the agent's rollout on it is not paired.
    agent_run("model-x", {p1: R, p2: W, p3: W, p4: R, o1: R, o2: W, o3: R})
    report = study_report(study=study)

    (versus,) = report["versus"]
    dice, match = versus["rows"]
    assert (dice["type"], dice["puzzles"], dice["answers"]) == ("Dice_Count", 4, 12)
    assert (dice["people_pass1"], dice["agent_pass1"], dice["difference"]) == pytest.approx((7 / 12, 1 / 2, 1 / 12))
    assert (dice["people_only"], dice["agent_only"], dice["both"], dice["neither"]) == (1, 1, 1, 1)
    assert (dice["people_only_share"], dice["agent_only_share"]) == (0.25, 0.25)
    assert (match["people_pass1"], match["agent_pass1"], match["difference"]) == pytest.approx((1 / 3, 1 / 2, -1 / 6))
    assert (match["people_only"], match["agent_only"], match["both"], match["neither"]) == (0, 0, 1, 1)
    # Over types: each type weighs the same. People (7/12 + 1/3) / 2 = 11/24, agent 1/2, difference
    # (1/12 - 1/6) / 2 = -1/24; 6 puzzles, 1 people only, 1 agent only (1/6 each).
    overall = versus["overall"]
    assert (overall["people_pass1"], overall["agent_pass1"]) == pytest.approx((11 / 24, 1 / 2))
    assert overall["difference"] == pytest.approx(-1 / 24)
    assert (overall["puzzles"], overall["people_only"], overall["agent_only"]) == (6, 1, 1)
    assert overall["people_only_share"] == pytest.approx(1 / 6)
    # The interval: the percentile interval of the seeded resamples, around the difference and
    # about as wide as 2 x 1.96 hand-computed standard deviations.
    resampled = paired_bootstrap([PairedPuzzles.of(DICE), PairedPuzzles.of(MATCH)])
    assert (dice["ci_low"], dice["ci_high"]) == percentile_interval(resampled[:, 0])
    assert (overall["ci_low"], overall["ci_high"]) == percentile_interval(resampled.mean(axis=1))
    assert dice["ci_low"] < dice["difference"] < dice["ci_high"]
    assert dice["ci_high"] - dice["ci_low"] == pytest.approx(2 * 1.96 * bootstrap_sd_by_hand(DICE), rel=0.1)
    assert (versus["resamples"], versus["seed"]) == (1000, 22)
    # The scatter's points: Dice_Count's four puzzles are four points of one puzzle each.
    dice_points = [(p["people"], p["agent"], p["puzzles"]) for p in versus["points"] if p["type"] == "Dice_Count"]
    assert dice_points == [(0.0, 1.0, 1), (round(1 / 3, 6), 0.0, 1), (1.0, 0.0, 1), (1.0, 1.0, 1)]

    # The headline table in every format.
    md = render(report, "md")
    assert "### People vs model-x" in md
    # The intervals as docs/reports.md gives them.
    assert "| Dice_Count | 4 | 58.3% | 50.0% | +8.3 [−66.7, +75.0] | 1 (25.0%) | 1 (25.0%) |" in md
    assert "| Object_Match | 2 | 33.3% | 50.0% | −16.7 [−50.0, +0.0] | 0 (0.0%) | 0 (0.0%) |" in md
    assert "| All types (mean) | 6 | 45.8% | 50.0% | −4.2 [−45.8, +37.5] | 1 (16.7%) | 1 (16.7%) |" in md
    html = render(report, "html")
    assert "People vs model-x" in html and "+8.3" in html
    assert len(re.findall(r'<svg class="panel"', html)) == 2  # the scatter: a panel per type
    assert html.count('class="bubble"') == 4 + 2
    dice_csv, match_csv = csv.DictReader(io.StringIO(render(report, "csv")))
    assert (dice_csv["vs:model-x:puzzles"], dice_csv["vs:model-x:difference"]) == ("4", "0.0833")
    assert (dice_csv["vs:model-x:people_only"], match_csv["vs:model-x:difference"]) == ("1", "-0.1667")
    summary = {(r["section"], r["measure"]): r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    difference = summary[("vs:model-x", "difference")]
    assert (difference["value"], difference["n"]) == ("-0.0417", "6") and "seed 22" in difference["method"]
    assert json.loads(render(report, "json"))["versus"][0]["rows"][0]["people_only"] == 1


@pytest.mark.django_db
def test_no_agent_no_comparison(puzzles):
    (p1, *_), _ = puzzles
    study = study_create(name="Alone", split="test", puzzles_per_annotator=6, overlap=1)
    answer(enrol(study, "a"), p1, study, R)
    report = study_report(study=study)
    assert report["versus"] == []
    assert "No agents on these puzzles." in render(report, "html")
