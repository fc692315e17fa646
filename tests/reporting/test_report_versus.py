"""People against an agent run on the same puzzles: the paired difference of Pass@1 with its
interval at any number of people (the cluster bootstrap over people from 10 people, else the
exact interval of the discordant shares), who solves what the other does not, and the types one
side has and the other not, against numbers worked out by hand here (the worked examples of
docs/reports.md "People against an agent")."""

import csv
import io
import json
import math
import re

import numpy as np
import pytest

from annotation.live.attempts import system_participant
from annotation.models import AgentRun, Enrollment, Participant, Rollout
from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.reporting.stats import (
    BY_BOOTSTRAP,
    PAIRED_FEW_PEOPLE,
    PAIRED_NO_SPREAD,
    ClusterBootstrap,
    PairedCells,
    discordant_interval,
    paired_interval,
)
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.reporting.test_report_clustered import R, W, answer, enrol


def beta_quantile(q: float, a: int, b: int) -> float:
    """The q quantile of Beta(a, b) for whole a, b, by bisection on the binomial sum that is its
    distribution function: I_p(a, b) = P(Binomial(a + b - 1, p) >= a). No SciPy."""
    n = a + b - 1

    def cdf(p: float) -> float:
        return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(a, n + 1))

    low, high = 0.0, 1.0
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < q else (low, mid)
    return (low + high) / 2


# --- the exact interval of a paired difference, by hand ---------------------------------------


def test_one_person_right_where_the_agent_is_wrong_is_not_a_certainty():
    # One puzzle, one person right, the agent wrong: b = 1, c = 0 on n = 1 person. Each share's
    # Clopper-Pearson interval at 97.5%: b's low end solves p = 1.25%, c's high end 1 - p = 1.25%.
    # The difference +100 gets [1.25% - 98.75%, 100%] = [-97.5, +100], not [+100, +100].
    assert discordant_interval(1.0, 0.0, [1.0]) == pytest.approx((0.0125 - 0.9875, 1.0))
    # Two people, one answer each, both so: low = sqrt(1.25%) - (1 - sqrt(1.25%)) = -0.7764.
    assert discordant_interval(1.0, 0.0, [1.0, 1.0]) == pytest.approx((2 * math.sqrt(0.0125) - 1, 1.0))
    assert discordant_interval(1.0, 0.0, [1.0, 1.0])[0] == pytest.approx(-0.77639, abs=1e-5)


def test_people_count_by_their_weight():
    # Weights 1/2, 1/4, 1/4 (one person's answers weigh as much as the two others'): Kish's
    # n = 1 / (1/4 + 1/16 + 1/16) = 8/3 people. b = 1, c = 0: b's low end is 1.25%^(3/8).
    low, high = discordant_interval(1.0, 0.0, [0.5, 0.25, 0.25])
    assert low == pytest.approx(2 * 0.0125 ** (3 / 8) - 1)
    assert low == pytest.approx(-0.61330, abs=1e-5) and high == 1.0


def test_both_discordant_shares_by_binomial_sums():
    # Four people: b = 2 of 4, c = 1 of 4. b's ends are Beta(2, 3) at 1.25% and Beta(3, 2) at 98.75%
    # (= 1 - the first, by symmetry); c's low end is Beta(1, 4) at 1.25% = 1 - 98.75%^(1/4), its
    # high end Beta(2, 3) at 98.75%.
    low_b, high_b = beta_quantile(0.0125, 2, 3), beta_quantile(0.9875, 3, 2)
    low_c, high_c = beta_quantile(0.0125, 1, 4), beta_quantile(0.9875, 2, 3)
    assert high_b == pytest.approx(1 - low_b, abs=1e-9)
    assert low_c == pytest.approx(1 - 0.9875**0.25, abs=1e-9)
    got = discordant_interval(0.5, 0.25, [1, 1, 1, 1])
    assert got == pytest.approx((low_b - high_c, high_b - low_c), abs=1e-9)
    assert got == pytest.approx((-0.80065, 0.94974), abs=1e-5)


def test_an_answer_weighs_one_over_the_type_puzzles_and_the_puzzle_answers():
    # Type 0: puzzle 10 answered by persons 0 and 1 (right, wrong), the agent's Pass@1 on it 1/2;
    # puzzle 11 by person 0 (right), agent 0. n = 2 puzzles: person 0's answer on 10 weighs
    # 1 / (2 x 2) = 1/4, person 1's 1/4, person 0's on 11 1/2. Type 1: puzzle 20 by person 1, weight 1.
    cells = PairedCells.of([0, 1, 0, 1], [0, 0, 0, 1], [10, 10, 11, 20], [R, W, R, R], [0.5, 0.5, 0.0, 1.0], (2, 2))
    assert cells.weight.tolist() == [[0.75, 0.0], [0.25, 1.0]]
    # The difference: 1/4 (1 - 1/2) + 1/4 (0 - 1/2) + 1/2 (1 - 0) = 1/2 = mean_p (h_p - a_p)
    # = ((1/2 - 1/2) + (1 - 0)) / 2.
    assert cells.difference[:, 0].sum() == pytest.approx(0.5)
    # Discordant: people right and the agent not, 1/4 (1/2) + 1/2 (1) = 5/8; the reverse 1/4 (1/2) = 1/8.
    assert (cells.people_ahead[:, 0].sum(), cells.agent_ahead[:, 0].sum()) == pytest.approx((5 / 8, 1 / 8))
    # Over both types, each the same: person 0 weighs 0.75 / 2, person 1 (0.25 + 1) / 2.
    both = cells.over_types([0, 1])
    assert both.weight[:, 0].tolist() == pytest.approx([0.375, 0.625])
    assert both.difference.sum() == pytest.approx((0.5 + 0.0) / 2)


def test_twelve_people_with_no_spread_get_the_exact_interval():
    # Twelve people, each right on a puzzle the agent got wrong: every resample says +100.
    cells = PairedCells.of(range(12), [0] * 12, range(12), [R] * 12, [0.0] * 12, (12, 1))
    boot = ClusterBootstrap(np.ones((12, 1)))
    bootstrapped = boot.weighted_means(cells.difference, cells.weight)
    assert bootstrapped.columns[0] == pytest.approx((1.0, 1.0))
    low, high, method = paired_interval(cells, 0, bootstrapped.columns[0])
    assert method == PAIRED_NO_SPREAD
    assert (low, high) == pytest.approx((2 * 0.0125 ** (1 / 12) - 1, 1.0))


def test_weighted_means_of_right_answers_are_the_pass1_intervals():
    trials = np.array([[2, 1], [1, 0], [3, 2], [0, 2]], dtype=float)
    right = np.array([[1, 1], [1, 0], [2, 0], [0, 1]], dtype=float)
    boot = ClusterBootstrap(trials)
    assert boot.weighted_means(right, trials) == boot.intervals(right)
    with pytest.raises(ValueError):
        boot.weighted_means(right, -trials)


# --- in a report -------------------------------------------------------------------------------


def agent_run(name: str, outcomes: dict) -> AgentRun:
    agent = system_participant(kind=Participant.Kind.AGENT, label=name)
    run = AgentRun.objects.create(name=name, rollouts_per_puzzle=1, participant=agent)
    for puzzle, correct in outcomes.items():
        Rollout.objects.create(run=run, puzzle=puzzle, index=0, status="done", submitted=True, correct=correct)
    return run


@pytest.fixture
def puzzles(verified):
    verified(types=("Dice_Count", "Object_Match"), per_type=4)
    found = list(Puzzle.objects.filter(dataset="generated:5").order_by("type", "index"))
    return found[:4], found[4:]


@pytest.mark.django_db
def test_people_against_an_agent_by_hand(puzzles):
    # The worked example, Dice_Count: people's answers (a, b, c) and the agent's one rollout per puzzle.
    #          a  b  c   people   agent   difference
    #   P1     R  R  R   3/3      R       0
    #   P2     R  R  R   3/3      W       +1
    #   P3     R  W  W   1/3      W       +1/3
    #   P4     W  W  W   0/3      R       -1
    # People's Pass@1 (1 + 1 + 1/3 + 0) / 4 = 7/12, the agent's 2/4, difference +1/12 = +8.3 pts.
    # People solve (most answers right) P1, P2; the agent P1, P4: people only P2, agent only P4 (1 in 4
    # each), both P1, neither P3. Object_Match: O1 people R R W (2/3), agent R; O2 people W W W, agent
    # W. People 1/3, agent 1/2, difference -1/6; people and agent both solve O1, neither O2.
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
    assert (dice["type"], dice["puzzles"], dice["answers"], dice["people"]) == ("Dice_Count", 4, 12, 3)
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
    # Three people: the exact interval, each person one observation (n = 3). Dice_Count's answers
    # weigh 1/12 each: people right and the agent wrong on P2 (3 answers) and P3 (1), b = 4/12;
    # the reverse on P4 (3), c = 3/12; b - c = 1/12, the difference. Object_Match: b = 0, c = 1/6
    # (O1's wrong answer, 1/6). Over types: b = 1/6, c = (1/4 + 1/6) / 2 = 5/24.
    assert (dice["people_right_agent_wrong"], dice["agent_right_people_wrong"]) == pytest.approx((1 / 3, 1 / 4))
    assert (match["people_right_agent_wrong"], match["agent_right_people_wrong"]) == pytest.approx((0, 1 / 6))
    for row, b, c in [(dice, 1 / 3, 1 / 4), (match, 0, 1 / 6), (overall, 1 / 6, 5 / 24)]:
        assert (row["ci_method"], row["ci_people"]) == (PAIRED_FEW_PEOPLE, pytest.approx(3.0))
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(discordant_interval(b, c, [1, 1, 1]))
        assert row["ci_low"] < row["difference"] < row["ci_high"]
    # The report's cluster bootstrap, named (3 people: every distinct resample), though unused here.
    assert (versus["resamples"], versus["seed"]) == (10, None)
    assert versus["unpaired"] == []
    # The scatter's points: Dice_Count's four puzzles are four points of one puzzle each.
    dice_points = [(p["people"], p["agent"], p["puzzles"]) for p in versus["points"] if p["type"] == "Dice_Count"]
    assert dice_points == [(0.0, 1.0, 1), (round(1 / 3, 6), 0.0, 1), (1.0, 0.0, 1), (1.0, 1.0, 1)]

    # The headline table in every format.
    md = render(report, "md")
    assert "### People vs model-x" in md
    few = "exact, n = 3: few participants"
    assert f"| Dice_Count | 4 | 58.3% | 50.0% | +8.3 [−90.0, +93.3] | {few} | 1 (25.0%) | 1 (25.0%) |" in md
    assert f"| Object_Match | 2 | 33.3% | 50.0% | −16.7 [−86.7, +76.8] | {few} | 0 (0.0%) | 0 (0.0%) |" in md
    assert f"| All types (mean) | 6 | 45.8% | 50.0% | −4.2 [−88.6, +86.7] | {few} | 1 (16.7%) | 1 (16.7%) |" in md
    assert "Over 2 types and 6 puzzles both answered, 18 answers by 3 people" in md
    html = render(report, "html")
    assert "People vs model-x" in html and "+8.3" in html and few in html
    assert len(re.findall(r'<svg class="panel"', html)) == 2  # the scatter: a panel per type
    assert html.count('class="bubble"') == 4 + 2
    dice_csv, match_csv = csv.DictReader(io.StringIO(render(report, "csv")))
    assert (dice_csv["vs:model-x:puzzles"], dice_csv["vs:model-x:difference"]) == ("4", "0.0833")
    assert (dice_csv["vs:model-x:ci_method"], dice_csv["vs:model-x:ci_people"]) == (PAIRED_FEW_PEOPLE, "3")
    assert (dice_csv["vs:model-x:people_only"], match_csv["vs:model-x:difference"]) == ("1", "-0.1667")
    summary = {(r["section"], r["measure"]): r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    difference = summary[("vs:model-x", "difference")]
    assert (difference["value"], difference["n"]) == ("-0.0417", "6")
    assert difference["method"].startswith(f"people minus agent; {PAIRED_FEW_PEOPLE}, 3 effective of 3 people")
    assert json.loads(render(report, "json"))["versus"][0]["rows"][0]["people_only"] == 1


@pytest.fixture
def three_types(verified):
    verified(types=("Dice_Count", "Object_Match", "Bingo"), per_type=2)
    found = list(Puzzle.objects.filter(dataset="generated:5").order_by("type", "index"))
    assert [p.type for p in found] == ["Bingo"] * 2 + ["Dice_Count"] * 2 + ["Object_Match"] * 2
    return found


@pytest.mark.django_db
def test_an_overlap_one_study_gets_exact_paired_intervals_over_the_types_both_have(three_types):
    # Each puzzle seen by one person; the agent run on every answered puzzle. Bingo's only person,
    # e, is excluded: Bingo leaves people's table and the comparison, and both say why.
    #                  person  answer  agent   difference
    #   Dice_Count D1  a       R       W       +1
    #   Dice_Count D2  b       R       W       +1
    #   Object_M.  O1  c       R       R        0
    #   Object_M.  O2  d       W       R       -1
    #   Bingo      B1  e (excluded: failed gold), R; agent R
    b1, _, d1, d2, o1, o2 = three_types
    study = study_create(name="Overlap one", split="test", puzzles_per_annotator=2, overlap=1)
    for minute, (name, puzzle, correct) in enumerate(
        [("a", d1, R), ("b", d2, R), ("c", o1, R), ("d", o2, W), ("e", b1, R)]
    ):
        answer(enrol(study, name), puzzle, study, correct, at=minute)
    Enrollment.objects.filter(participant__user__username="e").update(excluded=True, excluded_reason="failed gold")
    agent_run("model-x", {d1: W, d2: W, o1: R, o2: R, b1: R})
    report = study_report(study=study)

    (versus,) = report["versus"]
    dice, match = versus["rows"]
    overall = versus["overall"]
    # Dice_Count: two people, one answer each (n = 2), b = 1, c = 0: [sqrt(1.25%) - (1 - sqrt(1.25%)), 1].
    assert dice["difference"] == 1.0
    assert (dice["ci_low"], dice["ci_high"]) == pytest.approx((2 * math.sqrt(0.0125) - 1, 1.0))
    # Object_Match: n = 2, b = 0, c = 1/2 (1 of 2): b's high end 1 - sqrt(1.25%), c's ends
    # Beta(1, 2) at 1.25% = 1 - sqrt(98.75%) and Beta(2, 1) at 98.75% = sqrt(98.75%).
    assert match["difference"] == -0.5
    low_c, high_c = 1 - math.sqrt(0.9875), math.sqrt(0.9875)
    assert (match["ci_low"], match["ci_high"]) == pytest.approx((0 - high_c, (1 - math.sqrt(0.0125)) - low_c))
    # Over the two types: four people weighing 1/4 each (n = 4); b = (1 + 0) / 2 = 2 of 4, c = (0 + 1/2) / 2
    # = 1 of 4; difference (+1 - 1/2) / 2 = +1/4. The ends by binomial sums, as in the test above.
    assert overall["difference"] == pytest.approx(0.25)
    assert (overall["people_right_agent_wrong"], overall["agent_right_people_wrong"]) == pytest.approx((0.5, 0.25))
    low_b, high_b = beta_quantile(0.0125, 2, 3), beta_quantile(0.9875, 3, 2)
    low_c, high_c = beta_quantile(0.0125, 1, 4), beta_quantile(0.9875, 2, 3)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx((low_b - high_c, high_b - low_c), abs=1e-9)
    for row, people in [(dice, 2), (match, 2), (overall, 4)]:
        assert (row["ci_method"], row["people"], row["ci_people"]) == (PAIRED_FEW_PEOPLE, people, pytest.approx(people))
    # Both sides over the same two types: people (1 + 1/2) / 2, the agent (0 + 1) / 2. Bingo, which
    # only the agent has now, is out of both, and said so.
    assert (overall["people_pass1"], overall["agent_pass1"], overall["puzzles"]) == (0.75, 0.5, 4)
    assert versus["unpaired"] == [{"type": "Bingo", "people_puzzles": 0, "run_puzzles": 1, "run_failed": 0}]
    assert report["dropped_types"] == [
        {
            "type": "Bingo",
            "puzzles": 2,
            "excluded_people": 1,
            "excluded_reasons": ["failed gold"],
            "no_input": 0,
            "not_submitted": 0,
        }
    ]
    (agent,) = report["agents"]
    assert agent["mean_pass1_over_types"] == pytest.approx(2 / 3)  # its own: Bingo 1, Dice 0, Object 1
    assert (agent["shared_types"], agent["mean_pass1_shared"], agent["people_mean_pass1_shared"]) == (
        ["Dice_Count", "Object_Match"],
        0.5,
        0.75,
    )

    why = "no included person answered it: the only person who answered it was excluded (failed gold)"
    few = "exact, n = 2: few participants"
    md = render(report, "md")
    assert f"| Dice_Count | 2 | 100.0% | 0.0% | +100.0 [−77.6, +100.0] | {few} | 2 (100.0%) | 0 (0.0%) |" in md
    assert f"| Object_Match | 2 | 50.0% | 100.0% | −50.0 [−99.4, +88.2] | {few} | 0 (0.0%) | 1 (50.0%) |" in md
    assert "| All types (mean) | 4 | 75.0% | 50.0% | +25.0 [−80.1, +95.0] | exact, n = 4: few participants |" in md
    assert f"Types without people's Pass@1, left out of every mean over types: Bingo (2 puzzles): {why}." in md
    assert f"Not compared, one side having none of it: Bingo (people: {why})." in md
    # The agents' table: the run's mean beside people's over the two types both have, not over its three.
    assert "| Mean over the 2 types both have | 75.0% | 50.0% |" in md
    assert "model-x: its mean over its own 3 types is 66.7%; people have no Pass@1 on Bingo." in md
    html = render(report, "html")
    assert '<p class="note dropped">Types without people&#x27;s Pass@1' in html and why in html
    assert f'<p class="note unpaired">Not compared, one side having none of it: Bingo (people: {why}).' in html
    rows = {row["type"]: row for row in csv.DictReader(io.StringIO(render(report, "csv")))}
    assert (rows["Bingo"]["no_pass1_reason"], rows["Bingo"]["pass1"], rows["Bingo"]["agent:model-x:pass1"]) == (
        why,
        "",
        "1",
    )
    assert rows["Dice_Count"]["no_pass1_reason"] == "" and rows["Dice_Count"]["vs:model-x:ci_low"] == "-0.7764"
    summary = {(r["section"], r["measure"]): r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    assert summary[("dropped_types", "Bingo")]["method"] == f"n: puzzles; {why}"
    assert summary[("vs:model-x", "not_compared:Bingo")]["method"] == f"people: {why}"
    assert summary[("agent:model-x", "mean_pass1_shared_types")]["value"] == "0.5"
    assert json.loads(render(report, "json"))["dropped_types"][0]["excluded_reasons"] == ["failed gold"]


@pytest.mark.django_db
def test_ten_people_or_more_get_the_cluster_bootstrap_of_pass1(puzzles):
    # Twelve people answer D1 and D2, the agent right on D1 and wrong on D2 (a = 1/2 on average).
    # Every person answered both, so a resample of people moves people's Pass@1 and nothing else:
    # the difference's resamples are Pass@1's less 1/2, and so is its interval.
    (d1, d2, *_), _ = puzzles
    study = study_create(name="Twelve", split="test", puzzles_per_annotator=2, overlap=12)
    for i in range(12):
        who = enrol(study, f"p{i}")
        answer(who, d1, study, i < 9, at=2 * i)
        answer(who, d2, study, i % 3 != 0, at=2 * i + 1)
    agent_run("model-x", {d1: R, d2: W})
    report = study_report(study=study)
    (people,) = report["types"]
    (row,) = report["versus"][0]["rows"]
    assert people["ci_method"] == row["ci_method"] == BY_BOOTSTRAP
    assert row["difference"] == pytest.approx(people["pass1"] - 0.5)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((people["ci_low"] - 0.5, people["ci_high"] - 0.5))
    assert (report["versus"][0]["resamples"], report["versus"][0]["seed"]) == (2000, 14)
    assert "| Dice_Count | 2 | " in render(report, "md") and "bootstrap, 12 people" in render(report, "md")


@pytest.mark.django_db
def test_no_agent_no_comparison(puzzles):
    (p1, *_), _ = puzzles
    study = study_create(name="Alone", split="test", puzzles_per_annotator=6, overlap=1)
    answer(enrol(study, "a"), p1, study, R)
    report = study_report(study=study)
    assert report["versus"] == []
    assert "No agents on these puzzles." in render(report, "html")
