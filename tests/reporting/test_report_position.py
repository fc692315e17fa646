"""Pass@1 and time by position: the first and the second half of each person's run, per type and
pooled, in every format, against numbers worked out by hand here."""

import csv
import io
import json

import pytest

from annotation.models import Attempt
from annotation.reporting.render import render
from annotation.reporting.reports import study_report
from annotation.studies.setup import study_create
from puzzles.models import Puzzle
from tests.reporting.test_report_clustered import R, W, answer, enrol

pytestmark = pytest.mark.django_db


@pytest.fixture
def puzzles(verified):
    """Two Dice_Count puzzles (D1, D2) and two Object_Match puzzles (O1, O2)."""
    verified(types=("Dice_Count", "Object_Match"), per_type=2)
    return list(Puzzle.objects.filter(dataset="generated:5").order_by("type", "index"))


def placed(who, puzzle, study, correct, *, place: int | None, after_s: float, at: int):
    attempt = answer(who, puzzle, study, correct, after_s=after_s, at=at)
    Attempt.objects.filter(pk=attempt.pk).update(position=place)


def test_halves_of_each_run_by_hand(puzzles):
    study = study_create(name="Order", split="test", puzzles_per_annotator=4, overlap=2)
    d1, d2, o1, o2 = puzzles
    a, b, c = (enrol(study, name) for name in "abc")
    # Runs of 4 places (no gold): places 1-2 are the first half, 3-4 the second.
    #        place 1        place 2        place 3        place 4
    #   a    D1 R  10 s     O1 W  20 s     D2 R  30 s     O2 R  40 s
    #   b    O2 W  12 s     D2 W  22 s     O1 R  32 s     D1 R  42 s
    #   c    D1 R, stored without a place: in neither half
    for minute, (who, puzzle, correct, place, after_s) in enumerate(
        [
            (a, d1, R, 1, 10),
            (a, o1, W, 2, 20),
            (a, d2, R, 3, 30),
            (a, o2, R, 4, 40),
            (b, o2, W, 1, 12),
            (b, d2, W, 2, 22),
            (b, o1, R, 3, 32),
            (b, d1, R, 4, 42),
            (c, d1, R, None, 5),
        ]
    ):
        placed(who, puzzle, study, correct, place=place, after_s=after_s, at=minute)
    report = study_report(study=study)
    section = report["by_position"]
    assert (section["run_length"], section["unplaced"]) == (4, 1)
    dice, match = section["rows"]
    # Dice_Count: first half a's D1 right, b's D2 wrong: 1/2; second a's D2, b's D1, both right: 2/2.
    assert (dice["type"], dice["first"]["pass1"], dice["second"]["pass1"], dice["change"]) == (
        "Dice_Count",
        0.5,
        1.0,
        0.5,
    )
    assert (dice["first"]["active_median_ms"], dice["second"]["active_median_ms"]) == (16000, 36000)
    # Object_Match: first a's O1 and b's O2, both wrong: 0/2; second both right: 2/2.
    assert (match["first"]["pass1"], match["second"]["pass1"], match["change"]) == (0.0, 1.0, 1.0)
    # Pooled: first 1 of 4 (times 10, 12, 20, 22: median 16 s), second 4 of 4 (30, 32, 40, 42: 36 s).
    overall = section["overall"]
    assert (overall["first"]["correct"], overall["first"]["answers"], overall["first"]["people"]) == (1, 4, 2)
    assert (overall["second"]["pass1"], overall["change"]) == (1.0, 0.75)
    assert (overall["first"]["wall_median_ms"], overall["second"]["wall_median_ms"]) == (16000, 36000)

    md = render(report, "md")
    assert "## Pass@1 and time by position" in md
    assert "| Dice_Count | 50.0% (1 of 2) | 100.0% (2 of 2) | +50.0 pts | 16.0 | 36.0 |" in md
    assert "| All types | 25.0% (1 of 4) | 100.0% (4 of 4) | +75.0 pts | 16.0 | 36.0 |" in md
    assert "places 1 to 2" in md and "1 answer stored without a place" in md
    html = render(report, "html")
    assert "Pass@1 and time by position" in html and "+75.0 pts" in html
    assert "<td><span>25.0%</span> <span>(1 of 4)</span></td>" in html  # may wrap before the counts
    dice_csv, match_csv = csv.DictReader(io.StringIO(render(report, "csv")))
    assert (dice_csv["first_half_pass1"], dice_csv["second_half_pass1"], dice_csv["position_change"]) == (
        "0.5",
        "1",
        "0.5",
    )
    assert (match_csv["first_half_answers"], match_csv["second_half_active_median_ms"]) == ("2", "36000")
    summary = {r["measure"]: r for r in csv.DictReader(io.StringIO(render(report, "summary.csv")))}
    assert (summary["pass1_first_half"]["value"], summary["pass1_first_half"]["n"]) == ("0.25", "4")
    assert (summary["pass1_change"]["value"], summary["unplaced"]["value"]) == ("0.75", "1")
    assert json.loads(render(report, "json"))["by_position"]["overall"]["second"]["correct"] == 4


def test_a_study_with_gold_counts_gold_places_in_the_run(puzzles):
    study = study_create(name="Gold", split="test", puzzles_per_annotator=3, overlap=1)
    study.gold.add(puzzles[3])
    a = enrol(study, "a")
    # A run of 3 puzzles and 1 gold: 4 places, so place 2 is in the first half and place 3 is not.
    placed(a, puzzles[0], study, R, place=2, after_s=10, at=0)
    placed(a, puzzles[1], study, W, place=3, after_s=10, at=1)
    section = study_report(study=study)["by_position"]
    assert section["run_length"] == 4
    assert (section["overall"]["first"]["pass1"], section["overall"]["second"]["pass1"]) == (1.0, 0.0)
