"""A study report with a hosted benchmark's families beside one of our types: per-family Pass@1 with
intervals by the same rule as our types, the benchmark's mean over its families, times, each
person's row, the families set aside with their reasons, and where the puzzles came from; in every
format. Rows are made directly (the hosted scoring and the studies' wiring have tests of their own)."""

import csv
import io
import json
import typing

import pytest

from annotation.models import Slot, Study
from annotation.reporting.render import FORMATS, render
from annotation.reporting.report_types import (
    HostedBenchmark,
    HostedFamily,
    HostedOverall,
    HostedParticipant,
    SetAsideFamily,
)
from annotation.reporting.reports import study_report
from puzzles.models import Puzzle
from tests.hosted.rows import answer, enrol, hosted_benchmark, hosted_puzzle

pytestmark = pytest.mark.django_db
R, W = True, False
FEW = "Clopper-Pearson over people (few participants)"


@pytest.fixture
def hosted_study(verified):
    """Three people on two Red_Dot and two Dice_Roll_Path puzzles of nb, and one Dice_Count of ours
    (tests/hosted/rows.py makes the rows)."""
    (dice,) = verified(types=("Dice_Count",), per_type=1)
    hosted_benchmark()
    r1, r2 = hosted_puzzle("Red_Dot", "seed=17"), hosted_puzzle("Red_Dot", "seed=42")
    p1, p2 = hosted_puzzle("Dice_Roll_Path", "index=0"), hosted_puzzle("Dice_Roll_Path", "index=3")
    hosted_puzzle("Red_Dot", "seed=99", status=Puzzle.Status.FAILED)  # drawn, set aside by the draw's check
    study = Study.objects.create(name="Hosted pilot", split="test", puzzles_per_annotator=5, overlap=3)
    for rank, puzzle in enumerate([dice, r1, r2, p1, p2]):
        Slot.objects.create(study=study, puzzle=puzzle, copy=0, rank=rank)
    (a, ea), (b, eb), (c, ec) = (enrol(study, name) for name in "abc")
    #            Red_Dot 17   Red_Dot 42   Dice_Roll_Path 0   Dice_Roll_Path 3   Dice_Count (ours)
    #   a        R 4 s        R 4 s        R 10 s             R 10 s             R 3 s
    #   b        R 6 s        R 6 s        R 10 s             R 10 s
    #   c        W 8 s        W 8 s        R 10 s             R 10 s
    plan = [
        (a, r1, R, 4), (a, r2, R, 4), (a, p1, R, 10), (a, p2, R, 10), (a, dice, R, 3),
        (b, r1, R, 6), (b, r2, R, 6), (b, p1, R, 10), (b, p2, R, 10),
        (c, r1, W, 8), (c, r2, W, 8), (c, p1, R, 10), (c, p2, R, 10),
    ]  # fmt: skip
    for minute, (who, puzzle, correct, after_s) in enumerate(plan):
        answer(who, puzzle, study, correct, after_s=after_s, at=minute)
    return study, (ea, eb, ec)


def test_a_hosted_benchmark_has_rows_per_family_with_intervals_set_aside_families_and_provenance(hosted_study):
    study, (ea, eb, ec) = hosted_study
    report = study_report(study=study)

    # The per-type machinery carries the families as types named nb:<Family>, beside ours.
    assert [row["type"] for row in report["types"]] == ["Dice_Count", "nb:Dice_Roll_Path", "nb:Red_Dot"]
    (nb,) = report["hosted"]
    assert (nb["name"], nb["dataset"], nb["dialect"], nb["published_set"]) == ("nb", "hosted:nb", "nextgen", False)
    drp, red = nb["families"]
    assert (drp["family"], drp["address"], drp["addresses"]) == ("Dice_Roll_Path", "index", ["index=0", "index=3"])
    assert (red["family"], red["address"], red["addresses"]) == ("Red_Dot", "seed", ["seed=17", "seed=42"])
    assert (red["puzzles"], red["set_aside_puzzles"], drp["set_aside_puzzles"]) == (2, 1, 0)

    # Red_Dot: 4 of 6 right, three people with 2 answers each: n = 6^2 / 12 = 3 effective people,
    # 2 successes. Fewer than 10 people: Clopper-Pearson over people. Low solves
    # P(X >= 2 | 3, p) = 3p^2 - 2p^3 = 2.5%: p = 0.094299; high solves 1 - p^3 = 2.5%: p = 0.975^(1/3).
    assert (red["answers"], red["people"], red["correct"], red["pass1"]) == (6, 3, 4, pytest.approx(2 / 3))
    assert (red["ci_low"], red["ci_high"]) == pytest.approx((0.094299, 0.975 ** (1 / 3)), abs=1e-6)
    assert (red["ci_method"], red["ci_people"]) == (FEW, pytest.approx(3.0))
    # Dice_Roll_Path: 6 of 6, n = 3, x = 3: low p^3 = 2.5%, p = 0.025^(1/3) = 0.2924; high 1.
    assert drp["pass1"] == 1.0
    assert (drp["ci_low"], drp["ci_high"]) == pytest.approx((0.025 ** (1 / 3), 1.0))
    # Times: Red_Dot 4, 4, 6, 6, 8, 8 s: median 6 s; Dice_Roll_Path all 10 s.
    assert (red["wall_median_ms"], red["active_median_ms"], drp["wall_median_ms"]) == (6000, 6000, 10000)
    # The same figures as the type rows, by the same rule.
    rows = {row["type"]: row for row in report["types"]}
    assert (red["ci_low"], red["ci_high"]) == (rows["nb:Red_Dot"]["ci_low"], rows["nb:Red_Dot"]["ci_high"])

    # Over its families, its own people only (ours, Dice_Count, is not in it): the mean
    # (2/3 + 1) / 2 = 5/6 and pooled 10/12 = 5/6, each person 4 answers: n = 3, x = 2.5 (Korn and
    # Graubard's effective counts), by the beta quantiles: [0.176736, 0.999849].
    overall = nb["overall"]
    assert overall["mean_pass1_over_families"] == pytest.approx(5 / 6) and overall["pass1_pooled"] == pytest.approx(
        5 / 6
    )
    assert (overall["mean_ci_low"], overall["mean_ci_high"]) == pytest.approx((0.176736, 0.999849), abs=1e-6)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx((0.176736, 0.999849), abs=1e-6)
    assert (overall["mean_ci_method"], overall["ci_method"]) == (FEW, FEW)
    assert (overall["answers"], overall["people"], overall["ci_people"]) == (12, 3, pytest.approx(3.0))

    # Each person's row, by enrolment: a and b 4 of 4, c 2 of 4 (Dice_Count left out).
    assert [(p["enrollment"], p["families"], p["answers"], p["correct"], p["pass1"]) for p in nb["participants"]] == [
        (ea.pk, 2, 4, 4, 1.0),
        (eb.pk, 2, 4, 4, 1.0),
        (ec.pk, 2, 4, 2, 0.5),
    ]
    assert nb["participants"][0]["wall_median_ms"] == 7000  # 4, 4, 10, 10 s

    # The JSON's keys are the ones report_types declares, in its order.
    assert list(nb) == list(typing.get_type_hints(HostedBenchmark))
    assert list(nb["overall"]) == list(typing.get_type_hints(HostedOverall))
    assert all(list(f) == list(typing.get_type_hints(HostedFamily)) for f in nb["families"])
    assert all(list(p) == list(typing.get_type_hints(HostedParticipant)) for p in nb["participants"])
    assert all(list(s) == list(typing.get_type_hints(SetAsideFamily)) for s in nb["set_aside"])

    # Set aside, with the reasons as the probe and the page check gave them.
    assert nb["set_aside"] == [
        {"family": "Mirror", "by": "probe", "reason": "get_puzzle answered 404: no data for Mirror"},
        {"family": "Static_Jigsaw", "by": "page check", "reason": "the page cannot submit a correct answer"},
    ]


def test_every_format_says_where_the_puzzles_came_from_and_what_was_set_aside(hosted_study):
    study, (ea, _, _) = hosted_study
    report = study_report(study=study)
    for fmt in FORMATS:
        assert render(report, fmt)  # every format renders a hosted report

    md = render(report, "md")
    assert "## Hosted benchmark: nb" in md
    assert "These are not the benchmark paper's published set" in md
    assert "Red_Dot: made by the peer's own generator from each seed" in md
    assert "Dice_Roll_Path: the peer's stored puzzles, by index" in md
    assert (
        "| Red_Dot | 66.7% [9.4, 99.2] | exact, n = 3: few participants | 6 | 3 | 6.0 | 6.0 | 2 (seed=17, seed=42) |"
        in md
    )
    assert "| Mean over 2 families | 83.3% [17.7, 100.0] | exact, n = 3: few participants | 12 | 3 |" in md
    assert "Mirror (probe: get_puzzle answered 404: no data for Mirror)" in md
    assert "Static_Jigsaw (page check: the page cannot submit a correct answer)" in md
    assert "Drawn addresses set aside (not served): Red_Dot 1." in md
    assert f"| {ea.pk} | 2 | 4 | 4 | 100.0% | 7.0 | 7.0 |" in md

    html = render(report, "html")
    assert "Hosted benchmark: nb" in html and "Static_Jigsaw (page check: the page cannot submit" in html
    assert "These are not the benchmark paper&#x27;s published set" in html

    rows = {r["type"]: r for r in csv.DictReader(io.StringIO(render(report, "csv")))}
    assert rows["nb:Red_Dot"]["pass1"] == "0.6667" and rows["nb:Red_Dot"]["hosted_addresses"] == "seed=17 seed=42"
    assert rows["nb:Mirror"]["no_pass1_reason"] == "set aside by the probe: get_puzzle answered 404: no data for Mirror"
    assert rows["nb:Static_Jigsaw"]["pass1"] == "" and rows["Dice_Count"]["hosted_addresses"] == ""

    summary = {(r["section"], r["measure"]): r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    mean = summary[("hosted:nb", "mean_pass1_over_families")]
    assert (mean["value"], mean["ci_low"], mean["ci_high"], mean["n"]) == ("0.8333", "0.1767", "0.9998", "2")
    assert FEW in mean["method"]
    assert summary[("hosted:nb", "source")]["value"] == "0"  # not the published set
    assert summary[("hosted:nb", "set_aside:Mirror")]["method"].startswith("probe: get_puzzle answered 404")

    assert json.loads(render(report, "json"))["hosted"][0]["families"][1]["family"] == "Red_Dot"


def test_a_report_without_hosted_puzzles_has_no_hosted_section(verified):
    (dice,) = verified(types=("Dice_Count",), per_type=1)
    hosted_benchmark()  # registered, but not in this study
    study = Study.objects.create(name="Ours only", split="test", puzzles_per_annotator=1, overlap=1)
    Slot.objects.create(study=study, puzzle=dice, copy=0, rank=0)
    report = study_report(study=study)
    assert report["hosted"] == []
    assert "Hosted benchmark" not in render(report, "md") and "hosted_addresses" not in render(report, "csv")
