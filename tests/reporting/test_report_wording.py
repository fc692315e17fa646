"""Figures and counts read as written English: no "−0.0", no "1 puzzles"."""

from annotation.reporting.wording import _left_out, fmt_points


def test_a_difference_that_rounds_to_zero_is_never_negative():
    assert fmt_points(-0.0001) == "+0.0"
    assert fmt_points(0.0) == "+0.0"
    assert fmt_points(0.083) == "+8.3"
    assert fmt_points(-0.6667) == "−66.7"
    assert fmt_points(None) == "–"


def test_what_a_run_left_out_is_counted_in_the_singular_and_plural():
    one = {"failed_by_type": {"Bingo": 1}, "short_puzzles": 1}
    assert _left_out(one) == "1 failed rollout left out (Bingo 1); 1 puzzle with fewer than k rollouts left out"  # type: ignore[arg-type]
    three = {"failed_by_type": {"Bingo": 2, "Dice_Count": 1}, "short_puzzles": 0}
    assert _left_out(three) == "3 failed rollouts left out (Bingo 2, Dice_Count 1)"  # type: ignore[arg-type]
