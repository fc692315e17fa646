"""Chance rates worked by hand on small answer spaces (bench/chance.py checks every type by guessing)."""

import math

import numpy as np
import pytest

from puzzles.registry import get_type


def test_options_angles_and_numbers():
    assert get_type("Coordinates").chance_rate({"correct_option_index": 2, "option_count": 5}, {}) == 1 / 5
    assert get_type("Rotation_Match").chance_rate({"correct_angle": 90}, {}) == 1 / 8
    dice = get_type("Dice_Count")
    assert dice.chance_rate({"sum": 20}, {}) == 1 / 34  # 3..36
    assert dice.chance_rate({"sum": 40}, {}) == 0.0  # outside what a guess types


def test_cells_and_swaps():
    cells = {"correct_patches": [0, 4], "grid_size": [3, 3], "image_size": [300, 300]}
    assert get_type("Image_Recognition").chance_rate(cells, {}) == 1 / 512
    assert get_type("Select_Animal").chance_rate({**cells, "correct_patches": [4]}, {}) == 1 / 9
    assert get_type("Select_Animal").chance_rate(cells, {}) == 0.0  # one pick never makes two cells
    swaps = {"answer": [[0, 1], [1, 0], [2, 5]], "grid_size": [3, 3], "image_size": [300, 300]}
    assert get_type("Bingo").chance_rate(swaps, {}) == 2 / math.comb(9, 2)  # [1, 0] is [0, 1]


def test_a_mask_counts_its_pixels_as_clicks_round():
    mask = np.zeros((100, 200), dtype=bool)
    mask[50:, 100:] = True  # a quarter, away from the first row and column
    truth = {
        "mask": "target",
        "image_size": [200, 100],
        "point": [150, 75],
        "center": [150, 75],
        "bbox": [100, 50, 199, 99],
    }
    assert get_type("Geometry_Click").chance_rate(truth, {"target": mask}) == pytest.approx(0.25)
    mask[0, :] = True  # the first row is half a pixel high (y rounds to 0 below 0.5), its first pixel a quarter
    first_row = (199 * 0.5 + 0.25) / 20000
    assert get_type("Geometry_Click").chance_rate(truth, {"target": mask}) == pytest.approx(0.25 + first_row)
    avoid = {**truth, "radius": 70.0}
    assert get_type("Misleading_Click").chance_rate(avoid, {"target": mask}) == pytest.approx(0.75 - first_row)


def test_a_tolerance_disc_clipped_by_the_image():
    truth = {"target_position": [100, 100], "tolerance": 10, "image_size": [400, 200]}
    assert get_type("Place_Dot").chance_rate(truth, {}) == pytest.approx(math.pi * 100 / 80000, rel=1e-3)
    corner = {**truth, "target_position": [0, 0]}  # a quarter of the disc lies on the image
    assert get_type("Place_Dot").chance_rate(corner, {}) == pytest.approx(math.pi * 100 / 4 / 80000, rel=1e-3)


def test_a_drag_along_its_track():
    slide = get_type("Slide_Puzzle")
    truth = {
        "target_position": [300, 50],
        "tolerance": 10,
        "image_size": [500, 300],
        "start_position": [0, 50],
        "piece_size": [60, 60],
    }
    track = slide._track([500, 300], [60, 60], [0, 50])
    assert track == pytest.approx(440)  # the piece's corner goes from 0 to 500 - 60
    assert slide.chance_rate(truth, {}) == pytest.approx(20 / track)
    assert slide.chance_rate({**truth, "target_position": [300, 56]}, {}) == pytest.approx(16 / track)  # chord
    assert slide.chance_rate({**truth, "target_position": [300, 70]}, {}) == 0.0  # off its row


def test_a_hold_has_nothing_to_guess():
    hold = get_type("Hold_Button")
    assert hold.chance_rate({"hold_time": 3}, {}) is None
    assert hold.random_answer({"instruction": "", "image": "", "image_size": [1, 1]}, np.random.default_rng(0)) is None


@pytest.mark.django_db
def test_a_puzzle_s_rate_is_kept_once_worked_out_and_cleared_by_a_truth_correction(verified):
    from django.contrib.auth import get_user_model

    from annotation.review.labels import puzzle_correct_truth
    from puzzles.chance import NOTHING_TO_GUESS, chance_rates
    from puzzles.models import Puzzle

    dice, hold = verified(types=("Dice_Count", "Hold_Button"), per_type=1)
    assert chance_rates([dice.pk, hold.pk]) == {dice.pk: 1 / 34, hold.pk: None}
    kept = dict(Puzzle.objects.values_list("pk", "chance_rate"))
    assert kept == {dice.pk: 1 / 34, hold.pk: NOTHING_TO_GUESS}
    Puzzle.objects.filter(pk=dice.pk).update(chance_rate=0.5)  # read as kept, not worked out again
    assert chance_rates([dice.pk]) == {dice.pk: 0.5}
    boss = get_user_model().objects.create_user("boss", is_staff=True)
    puzzle_correct_truth(puzzle=dice, truth={**dice.truth, "sum": 40}, by=boss)  # beyond what a guess types
    assert Puzzle.objects.get(pk=dice.pk).chance_rate is None
    assert chance_rates([dice.pk]) == {dice.pk: 0.0}
