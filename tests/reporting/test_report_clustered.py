"""A study report on small hand-made data: intervals clustered by annotator, agreement (percent,
AC1, kappa, alpha), time-outs as their own outcome and people's Pass@k, against values worked out
by hand here. Attempts are stored directly (their scoring has tests of its own)."""

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model

from annotation.live.attempts import participant_for_user
from annotation.models import Attempt, Enrollment
from annotation.reporting.render import render, to_summary_csv
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_create
from puzzles.models import Puzzle

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
R, W = True, False  # right, not right


def enrol(study, name: str):
    user = get_user_model().objects.create_user(username=name)
    participant = participant_for_user(user=user)
    Enrollment.objects.create(study=study, participant=participant, consented_at=T0)
    return participant


def answer(participant, puzzle, study, correct, *, after_s: float | None = 10.0, at: int = 0):
    """An attempt served at T0 + at minutes and submitted after_s seconds later (None: never)."""
    served = T0 + timedelta(minutes=at)
    attempt = Attempt.objects.create(
        participant=participant,
        puzzle=puzzle,
        study=study,
        purpose=Attempt.Purpose.SCORED,
        served_at=served,
        submitted_at=None if after_s is None else served + timedelta(seconds=after_s),
        correct=None if after_s is None else correct,
        input_ok=None if after_s is None else True,
        wall_ms=None if after_s is None else after_s * 1000,
        active_ms=None if after_s is None else after_s * 1000,
        action_count=None if after_s is None else 2,
    )
    Attempt.objects.filter(pk=attempt.pk).update(created_at=served)  # the order of first attempts
    return attempt


@pytest.fixture
def puzzles(verified):
    """Two Dice_Count puzzles (D1, D2) and two Object_Match puzzles (O1, O2)."""
    verified(types=("Dice_Count", "Object_Match"), per_type=2)
    found = list(Puzzle.objects.filter(dataset="generated:5").order_by("type", "index"))
    assert [p.type for p in found] == ["Dice_Count"] * 2 + ["Object_Match"] * 2
    return found


def test_three_annotators_on_four_puzzles_by_hand(puzzles):
    study = study_create(name="By hand", split="test", puzzles_per_annotator=4, overlap=3, time_limit_s=60)
    d1, d2, o1, o2 = puzzles
    a, b, c, d = (enrol(study, name) for name in "abcd")
    # Right (R) or not (W), and when the submit came (the time limit is 60 s; a submit 55 s or later
    # that is not right is a time-out, earlier it is wrong):
    #        D1     D2         O1         O2
    #   a    R      R          R          R at 58 s (right stays right, however late)
    #   b    R      R          R          W at 54 s (wrong: before the window)
    #   c    R      W at 20 s  W at 30 s  W at 59 s (timed out: the page submitted at the limit)
    #   d    D1 started, never submitted (counts as started; d answered nothing: no cluster)
    for minute, (who, puzzle, correct, after_s) in enumerate(
        [
            (a, d1, R, 10),
            (a, d2, R, 10),
            (a, o1, R, 10),
            (a, o2, R, 58),
            (b, d1, R, 10),
            (b, d2, R, 10),
            (b, o1, R, 10),
            (b, o2, W, 54),
            (c, d1, R, 10),
            (c, d2, W, 20),
            (c, o1, W, 30),
            (c, o2, W, 59),
            (d, d1, W, None),
        ]
    ):
        answer(who, puzzle, study, correct, after_s=after_s, at=minute)
    report = study_report(study=study)
    dice, match = report["types"]

    # Counts. Dice_Count: 5 of 6 right, c's D2 wrong; d's D1 started, not submitted.
    # Object_Match: 3 of 6 right; wrong: c's O1 and b's O2; timed out: c's O2.
    assert (dice["correct"], dice["wrong"], dice["timed_out"], dice["not_submitted"]) == (5, 1, 0, 1)
    assert (match["correct"], match["wrong"], match["timed_out"], match["not_submitted"]) == (3, 2, 1, 0)
    assert dice["pass1"] == pytest.approx(5 / 6) and match["pass1"] == pytest.approx(1 / 2)
    overall = report["overall"]
    assert (overall["correct"], overall["wrong"], overall["timed_out"], overall["not_submitted"]) == (8, 3, 1, 1)
    assert overall["started"] == 13 and overall["attempts"] == 12
    assert overall["mean_pass1_over_types"] == pytest.approx((5 / 6 + 1 / 2) / 2)  # 2/3
    assert overall["pass1_pooled"] == pytest.approx(8 / 12)

    # Intervals: 3 annotators answered (d answered nothing), fewer than the bootstrap's 10, so each
    # is Clopper-Pearson's exact interval taking each person as one observation. Everyone answered
    # 2 of each type: n = (2+2+2)^2 / (4+4+4) = 3 effective people, successes = Pass@1 x 3.
    assert report["intervals"] == {
        "method": "cluster bootstrap over annotators",
        "level": 0.95,
        "interval": "percentile",
        "annotators": 3,
        "exact": True,
        "resamples": 10,
        "seed": None,
        "min_people_for_bootstrap": 10,
        "few_people_method": "Clopper-Pearson over people (few participants)",
    }
    few = "Clopper-Pearson over people (few participants)"
    assert (dice["ci_method"], match["ci_method"], dice["ci_people"]) == (few, few, pytest.approx(3.0))
    # Mean over types and pooled: 2/3 of n = 3 (4 answers each), 2 successes of 3. The upper end p
    # solves P(X <= 2 | 3, p) = 1 - p^3 = 2.5%: p = 0.975^(1/3) = 0.99160; the lower one solves
    # P(X >= 2 | 3, p) = 3p^2 - 2p^3 = 2.5%: p = 0.094299.
    assert (overall["mean_ci_low"], overall["mean_ci_high"]) == pytest.approx((0.094299, 0.975 ** (1 / 3)), abs=1e-6)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx((0.094299, 0.975 ** (1 / 3)), abs=1e-6)
    assert overall["ci_method"] == overall["mean_ci_method"] == few
    # Dice_Count 5/6: 2.5 successes of 3 (Korn and Graubard's effective counts), by the beta quantiles.
    assert (dice["ci_low"], dice["ci_high"]) == pytest.approx((0.176736, 0.999849), abs=1e-6)
    # Wilson's interval, which takes the 6 answers as independent, is kept apart: 5/6 -> [0.4365, 0.9699].
    assert (dice["wilson_low"], dice["wilson_high"]) == pytest.approx((0.4365, 0.9699), abs=1e-4)

    # Agreement on the 4 puzzles (1 right, 0 not; a time-out is not right):
    #   D1 1,1,1   D2 1,1,0   O1 1,1,0   O2 1,0,0
    # Percent agreement: agreeing pairs of 3 are 3/3, 1/3, 1/3, 1/3: (1 + 1) / 4 = 1/2.
    # AC1: pi_right = (1 + 2/3 + 2/3 + 1/3) / 4 = 2/3; pe = 2 * 2/3 * 1/3 = 4/9; (1/2 - 4/9) / (5/9) = 1/10.
    # Fleiss: pe = (2/3)^2 + (1/3)^2 = 5/9; (1/2 - 5/9) / (4/9) = -1/8.
    # Krippendorff: 12 values (8 right), agree = 3 + 1 + 1 + 1 = 6, by chance = 8*7 + 4*3 = 68:
    #   (11 * 6 - 68) / (132 - 68) = -2/64.
    agreement = report["agreement"]
    assert agreement["percent_agreement"] == pytest.approx(0.5)
    assert agreement["gwet_ac1"] == pytest.approx(0.1)
    assert agreement["fleiss_kappa"] == pytest.approx(-1 / 8)
    assert agreement["krippendorff_alpha"] == pytest.approx(-2 / 64)
    assert agreement["agreement_n"] == agreement["fleiss_n"] == agreement["alpha_n"] == 4

    # The same numbers in the formats.
    md = render(report, "md")
    assert "| Dice_Count | 83.3% [17.7, 100.0] | exact, n = 3: few participants | 5 | 1 | 0 | 6 / 2 / 3 |" in md
    assert "| Object_Match | 50.0% [3.9, 96.1] | exact, n = 3: few participants | 3 | 2 | 1 | 6 / 2 / 3 |" in md
    assert "Mean Pass@1 over types: 66.7% [9.4, 99.2]" in md
    assert "13 answers started: 8 correct, 3 wrong, 1 timed out, 1 not submitted" in md
    assert "Percent agreement = 50.0% (n = 4 puzzles)" in md and "Gwet's AC1 = 0.10" in md
    assert "With 3 annotators, fewer than the 10 a cluster bootstrap needs (few participants)" in md
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert [(r["type"], r["pass1"], r["ci_low"], r["ci_high"], r["ci_method"], r["timed_out"]) for r in rows] == [
        ("Dice_Count", "0.8333", "0.1767", "0.9998", few, "0"),
        ("Object_Match", "0.5", "0.0387", "0.9613", few, "1"),
    ]
    summary = {r["measure"]: r for r in csv.DictReader(io.StringIO(to_summary_csv(report)))}
    mean = summary["mean_pass1_over_types"]
    assert (mean["value"], mean["ci_low"]) == ("0.6667", "0.0943")
    assert few in mean["method"]
    assert summary["gwet_ac1"]["value"] == "0.1" and summary["timed_out"]["value"] == "1"
    assert json.loads(render(report, "json"))["overall"]["timed_out"] == 1
    rules = " ".join(report["rules"].split())
    assert "timed out when the study has a time limit" in rules and "cluster bootstrap over annotators" in rules


def test_without_a_time_limit_a_late_wrong_answer_is_wrong(puzzles):
    study = study_create(name="No limit", split="test", puzzles_per_annotator=4, overlap=1)
    a = enrol(study, "a")
    answer(a, puzzles[0], study, W, after_s=600)
    (row,) = study_report(study=study)["types"]
    assert (row["wrong"], row["timed_out"]) == (1, 0)
    # One annotator, 0 of 1: Clopper-Pearson over 1 person, (0, 1 - 2.5%), never zero width.
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.0, 0.975))
    assert row["ci_method"] == "Clopper-Pearson over people (few participants)"
    assert row["wilson_high"] == pytest.approx(0.7935, abs=1e-4)  # 0 of 1


def test_people_pass_k_with_two_attempts_by_hand(puzzles):
    study = study_create(
        name="Two tries", split="test", puzzles_per_annotator=4, overlap=2, attempts_per_puzzle=2, show_verdict=True
    )
    d1, _, o1, _ = puzzles
    b1, b2 = enrol(study, "b1"), enrol(study, "b2")
    #          D1                   O1
    #   b1     W, then R            R
    #   b2     R                    W, then W
    for minute, (who, puzzle, correct) in enumerate(
        [(b1, d1, W), (b1, d1, R), (b1, o1, R), (b2, d1, R), (b2, o1, W), (b2, o1, W)]
    ):
        answer(who, puzzle, study, correct, at=minute)
    report = study_report(study=study)
    dice, match = report["types"]
    # Pass@1 (first attempts): Dice_Count 1/2, Object_Match 1/2. Pass@2: Dice_Count 2/2, Object_Match 1/2.
    assert (dice["pass1"], match["pass1"]) == (0.5, 0.5)
    assert (dice["pass_k"], dice["correct_within_k"], match["pass_k"], match["correct_within_k"]) == (1.0, 2, 0.5, 1)
    overall = report["overall"]
    assert overall["mean_pass_k_over_types"] == pytest.approx(0.75) and overall["pass_k_pooled"] == pytest.approx(0.75)
    # Two annotators, each one answer per type: Clopper-Pearson over n = 2 people.
    # Pass@2 Dice_Count 2 of 2: lower p^2 = 2.5%, p = 0.1581. Object_Match 1 of 2: lower
    # 1 - (1 - p)^2 = 2.5%, p = 1 - 0.975^(1/2) = 0.012579, upper its mirror.
    # Mean over types and pooled 3/4, 2 answers each (n = 2): 1.5 of 2, by the beta quantiles.
    assert (dice["pass_k_ci_low"], dice["pass_k_ci_high"]) == pytest.approx((0.025**0.5, 1.0))
    assert (match["pass_k_ci_low"], match["pass_k_ci_high"]) == pytest.approx((1 - 0.975**0.5, 0.975**0.5))
    three_quarters_of_two = pytest.approx((0.060830, 0.999783), abs=1e-6)
    assert (overall["mean_pass_k_ci_low"], overall["mean_pass_k_ci_high"]) == three_quarters_of_two
    assert (overall["pass_k_ci_low"], overall["pass_k_ci_high"]) == three_quarters_of_two
    assert dice["pass_k_ci_method"] == overall["pass_k_ci_method"] == "Clopper-Pearson over people (few participants)"
    # Every format carries it.
    md = render(report, "md")
    assert "| Type | Pass@1 [95% CI] | Pass@2 [95% CI] |" in md
    assert "| Dice_Count | 50.0% [1.3, 98.7] | 100.0% [15.8, 100.0] | exact, n = 2: few participants |" in md
    assert "Mean Pass@2 over types: 75.0% [6.1, 100.0]" in md
    html = render(report, "html")
    assert "Pass@2 [95% CI]" in html and "mean Pass@2 over types" in html
    (dice_csv, match_csv) = csv.DictReader(io.StringIO(render(report, "csv")))
    assert (dice_csv["k"], dice_csv["pass_k"], match_csv["pass_k"]) == ("2", "1", "0.5")
    summary = {r["measure"]: r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    assert (summary["mean_pass2_over_types"]["value"], summary["pass2_pooled"]["ci_low"]) == ("0.75", "0.0608")
    assert json.loads(render(report, "json"))["types"][0]["pass_k"] == 1.0
