"""Intervals that hold at any number of people: the cluster bootstrap where 10 people or more
answered a cell, else Clopper-Pearson over the effective number of people; never of zero width,
and every cell says its method. Attempts are stored directly (their scoring has tests of its own)."""

import csv
import io
import json
import math

import pytest

from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.reporting.stats import (
    BY_BOOTSTRAP,
    FEW_PEOPLE,
    NO_SPREAD,
    clopper_pearson,
    effective_people,
    few_people_interval,
    people_interval,
)
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.reporting.test_report_clustered import answer, enrol


@pytest.fixture
def dice(verified):
    verified(types=("Dice_Count",), per_type=2)
    return list(Puzzle.objects.filter(dataset="generated:5").order_by("index"))


def study_of(people: int, right: list[list[bool]], puzzles: list[Puzzle]):
    """A study where person i answered puzzle j right when right[i][j]."""
    study = study_create(name=f"{people} people", split="test", puzzles_per_annotator=2, overlap=people)
    minute = 0
    for i in range(people):
        who = enrol(study, f"p{i}")
        for puzzle, correct in zip(puzzles, right[i]):
            answer(who, puzzle, study, correct, at=minute)
            minute += 1
    return study


@pytest.mark.django_db
def test_three_people_all_correct_get_a_wide_interval_with_its_method(dice):
    report = study_report(study=study_of(3, [[True, True]] * 3, dice))
    (row,) = report["types"]
    # 3 people, 2 answers each: n = 3 effective people, 3 of 3 right. Clopper-Pearson's lower end p
    # solves p^3 = 2.5%: p = 0.2924. Not [100, 100]: three people say little about everyone.
    assert row["pass1"] == 1.0
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.025 ** (1 / 3), 1.0))
    assert (row["ci_method"], row["ci_people"]) == (FEW_PEOPLE, pytest.approx(3.0))
    overall = report["overall"]
    assert (overall["ci_low"], overall["mean_ci_low"]) == pytest.approx((0.025 ** (1 / 3), 0.025 ** (1 / 3)))
    assert overall["ci_method"] == overall["mean_ci_method"] == FEW_PEOPLE
    # Every format states the interval and its method.
    md = render(report, "md")
    assert "| Dice_Count | 100.0% [29.2, 100.0] | exact, n = 3: few participants |" in md
    assert "Mean Pass@1 over types: 100.0% [29.2, 100.0] (each type weighs the same; exact, n = 3" in md
    assert "With 3 annotators, fewer than the 10 a cluster bootstrap needs (few participants)" in md
    html = render(report, "html")
    assert "exact, n = 3: few participants" in html and "29.2, 100.0" in html
    (csv_row,) = csv.DictReader(io.StringIO(render(report, "csv")))
    assert (csv_row["ci_low"], csv_row["ci_high"], csv_row["ci_method"], csv_row["ci_people"]) == (
        "0.2924",
        "1",
        FEW_PEOPLE,
        "3",
    )
    data = json.loads(render(report, "json"))
    assert data["types"][0]["ci_method"] == FEW_PEOPLE and data["intervals"]["min_people_for_bootstrap"] == 10


@pytest.mark.django_db
def test_twelve_people_who_differ_get_the_cluster_bootstrap(dice):
    # 12 people: 8 right on both puzzles, 4 right on one.
    right = [[True, True]] * 8 + [[True, False]] * 4
    (row,) = study_report(study=study_of(12, right, dice))["types"]
    assert row["pass1"] == pytest.approx(20 / 24)
    assert row["ci_method"] == BY_BOOTSTRAP
    # The bootstrap's percentile interval lies between the lowest and highest person (1/2 and 1).
    assert 0.5 <= row["ci_low"] < row["pass1"] < row["ci_high"] <= 1.0


@pytest.mark.django_db
def test_twelve_people_all_correct_get_an_exact_interval_not_a_zero_width_one(dice):
    (row,) = study_report(study=study_of(12, [[True, True]] * 12, dice))["types"]
    # Every resample of the bootstrap gives 100%: it would print [100, 100]. Clopper-Pearson over
    # 12 people instead: p^12 = 2.5%.
    assert row["ci_method"] == NO_SPREAD
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((0.025 ** (1 / 12), 1.0))


def binomial(n: int, p: float, ks: range) -> float:
    """P(X in ks) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in ks)


def test_clopper_pearson_matches_the_binomial_sums():
    # The upper end p of x of n solves P(X <= x | n, p) = 2.5%; the lower one P(X >= x | n, p) = 2.5%.
    for n in (1, 2, 5, 13):
        for x in range(n + 1):
            low, high = clopper_pearson(x, n)
            if x > 0:
                assert binomial(n, low, range(x, n + 1)) == pytest.approx(0.025, abs=1e-9)
            if x < n:
                assert binomial(n, high, range(0, x + 1)) == pytest.approx(0.025, abs=1e-9)
    assert clopper_pearson(5, 10) == pytest.approx((0.187086, 0.812914), abs=1e-6)  # the textbook values
    assert clopper_pearson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        clopper_pearson(4, 3)


def test_effective_people_weighs_people_by_their_answers():
    assert effective_people([4, 4, 4]) == 3.0
    assert effective_people([10, 1, 1, 0]) == pytest.approx(144 / 102)  # one person dominates
    assert effective_people([]) == 0.0
    assert few_people_interval(1.0, [2, 2, 2]) == pytest.approx((0.025 ** (1 / 3), 1.0))


def test_people_interval_takes_the_bootstrap_only_with_ten_people_and_a_width():
    ten, nine = [3] * 10, [3] * 9
    assert people_interval(0.8, ten, (0.7, 0.9)) == (0.7, 0.9, BY_BOOTSTRAP)
    assert people_interval(0.8, nine, (0.7, 0.9))[2] == FEW_PEOPLE
    low, high, method = people_interval(1.0, ten, (1.0, 1.0))
    assert method == NO_SPREAD and low < high == 1.0
    assert people_interval(None, ten, (None, None)) == (None, None, "")
