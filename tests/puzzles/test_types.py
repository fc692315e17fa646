"""Contract tests that every registered puzzle type must pass."""

import numpy as np
import pytest

from puzzles.bank import generate_puzzle
from puzzles.layout import STAGE_H, STAGE_W
from puzzles.registry import registry
from puzzles.types.base import Mode

TYPES = registry().names()
SEEDS = range(6)

MALFORMED = [
    None,
    "",
    "abc",
    True,
    {},
    [],
    [None],
    [1],
    [1, 2, 3],
    [float("nan"), 5],
    [5, float("inf")],
    [-5, 10],
    [10**9, 10**9],
    ["1", "2"],
    {"x": "a", "y": 2},
    [[1, 2], ["a"]],
    -1,
    10**12,
    2.5,
    float("nan"),
    [0, 0, 0, 0],
    "1e400",
    [1.5, 2.5],
]


def _generate(name, seed):
    return generate_puzzle(name, "test", seed, 7)


@pytest.fixture(params=TYPES)
def puzzle_type(request):
    return registry().get(request.param)


def test_all_twenty_types_are_registered():
    assert len(TYPES) == 20


def test_type_declares_its_contract(puzzle_type):
    assert isinstance(puzzle_type.mode, Mode)
    assert puzzle_type.widget in {"point", "points", "cells", "swap", "option", "rotate", "drag", "hold", "text"}
    assert puzzle_type.instruction.strip()


@pytest.mark.parametrize("seed", [0, 3])
def test_generation_is_deterministic(puzzle_type, seed):
    first, second = _generate(puzzle_type.name, seed), _generate(puzzle_type.name, seed)
    assert first.truth == second.truth
    assert first.public == second.public
    assert first.images.keys() == second.images.keys()
    for key in first.images:
        assert np.array_equal(np.asarray(first.images[key]), np.asarray(second.images[key])), key
    for key in first.masks:
        assert np.array_equal(first.masks[key], second.masks[key])


def test_different_indices_give_different_puzzles(puzzle_type):
    puzzles = [_generate(puzzle_type.name, seed) for seed in SEEDS]
    images = {np.asarray(p.images[p.public["image"]]).tobytes() for p in puzzles}
    assert len(images) == len(SEEDS)
    assert len({repr(p.truth) for p in puzzles}) > 1


def test_public_data_references_only_its_images_and_no_truth(puzzle_type):
    for seed in SEEDS:
        puzzle = _generate(puzzle_type.name, seed)
        assert puzzle.public["image"] in puzzle.images
        assert puzzle.public["instruction"].strip()
        assert list(puzzle.images[puzzle.public["image"]].size) == puzzle.public["image_size"]
        for secret in (
            "mask",
            "point",
            "correct_patches",
            "correct_option_index",
            "correct_angle",
            "sum",
            "target_position",
            "hold_time",
            "answer",
            "solution_line",
            "tolerance",
        ):
            assert secret not in puzzle.public, secret


def test_truth_verifies_correct_with_full_reward(puzzle_type):
    for seed in SEEDS:
        puzzle = _generate(puzzle_type.name, seed)
        verdict = puzzle_type.verify(puzzle.truth, puzzle_type.solution(puzzle.truth), puzzle.masks)
        assert verdict.correct and verdict.reward == 1.0, verdict


def test_perturbed_answers_verify_wrong_but_pay_more_than_nothing(puzzle_type):
    for seed in SEEDS:
        puzzle = _generate(puzzle_type.name, seed)
        wrong_answers = puzzle_type.perturbations(puzzle.truth, puzzle.masks, np.random.default_rng(seed))
        assert wrong_answers, "a type must offer wrong answers to check"
        for answer in wrong_answers:
            verdict = puzzle_type.verify(puzzle.truth, answer, puzzle.masks)
            assert not verdict.correct, (answer, verdict)
            assert 0.0 < verdict.reward < 1.0, (answer, verdict)


@pytest.mark.parametrize("answer", MALFORMED, ids=repr)
def test_malformed_answers_never_raise(puzzle_type, answer):
    puzzle = _generate(puzzle_type.name, 1)
    verdict = puzzle_type.verify(puzzle.truth, answer, puzzle.masks)
    if verdict.correct:
        # A few shapes are legitimately readable for some types (e.g. [] for an empty selection).
        assert verdict.reward == 1.0
    elif verdict.reason.startswith("malformed"):
        assert verdict.reward == 0.0
    else:
        assert 0.1 <= verdict.reward <= 0.9, verdict


def test_reference_actions_stay_on_the_stage(puzzle_type):
    for seed in SEEDS:
        puzzle = _generate(puzzle_type.name, seed)
        actions = puzzle_type.compile_actions(puzzle.truth, puzzle_type.layout(puzzle.public))
        assert actions
        for action in actions:
            args = action["arguments"]
            for x_key, y_key in (("x", "y"), ("start_x", "start_y"), ("end_x", "end_y")):
                if x_key in args:
                    assert 0 <= args[x_key] < STAGE_W and 0 <= args[y_key] < STAGE_H, action
        submits = [
            a
            for a in actions
            if a["action"] == "click"
            and puzzle_type.layout(puzzle.public).controls.get("submit")
            and puzzle_type.layout(puzzle.public).control("submit").contains(a["arguments"]["x"], a["arguments"]["y"])
        ]
        assert len(submits) == (0 if puzzle_type.auto_submit else 1)


def _reward(name, truth, answer, masks=None):
    return registry().get(name).verify(truth, answer, masks or {}).reward


def test_closer_answers_earn_more():
    """Rewards are monotone in closeness, per answer kind: nearer > farther > nothing submitted (0)."""
    point = {"target_position": [100, 100], "tolerance": 15, "image_size": [640, 480]}
    assert 1.0 > _reward("Place_Dot", point, [120, 100]) > _reward("Place_Dot", point, [400, 300]) > 0.0
    cells = {"correct_patches": [0, 1, 2], "grid_size": [3, 3], "image_size": [300, 300]}
    assert (
        1.0
        > _reward("Patch_Select", cells, [0, 1])
        > _reward("Patch_Select", cells, [0])
        > _reward("Patch_Select", cells, [5])
        > 0.0
    )
    option = {"correct_option_index": 4, "option_count": 8}
    assert (
        1.0
        > _reward("Object_Match", option, 3)
        > _reward("Object_Match", option, 1)
        > _reward("Object_Match", option, 0)
        > 0.0
    )
    angle = {"correct_angle": 90}
    assert 1.0 > _reward("Rotation_Match", angle, 45) > _reward("Rotation_Match", angle, 270) > 0.0
    dice = {"sum": 20}
    assert 1.0 > _reward("Dice_Count", dice, "19") > _reward("Dice_Count", dice, "5") > 0.0
    held = {"hold_time": 3.0}
    assert 1.0 > _reward("Hold_Button", held, 2.5) > _reward("Hold_Button", held, 0.5) > 0.0
    order = {"answer": [[50, 50], [200, 50], [350, 50]], "tolerance": 20, "image_size": [400, 100]}
    assert 1.0 > _reward("Click_Order", order, [[50, 50], [200, 50]]) > _reward("Click_Order", order, [[50, 50]]) > 0.0


def test_a_path_finder_road_that_leaves_under_four_free_tiles_still_makes_a_puzzle():
    # Seed 6179 draws the 5x3 grid and a road over 13 of its 15 tiles: asking for 4 landmarks
    # among 2 tiles made numpy's draw fail, about one Path_Finder puzzle in 8,000 (checked here
    # through the generator's own first draws, so a changed generator cannot pass unnoticed).
    from puzzles.types.path_finder import GRIDS, TERRAINS, PathFinder, _road

    rng = np.random.default_rng(6179)
    cols, rows = GRIDS[int(rng.integers(len(GRIDS)))]
    rng.integers(len(TERRAINS))
    assert cols * rows - len(set(_road(rng, cols, rows))) < 4

    path_finder = PathFinder()
    puzzle = path_finder.generate(np.random.default_rng(6179))
    verdict = path_finder.verify(puzzle.truth, path_finder.solution(puzzle.truth), puzzle.masks)
    assert verdict.correct and len(puzzle.public["options"]) >= 4


def test_four_darts_in_a_small_bullseye_still_make_a_dart_count_puzzle(monkeypatch):
    # Seed 354943 draws a 5-ring board with an option of four darts in the bullseye that 200 tries
    # at the throw's lean could not place: the generator raised 'could not place the darts', about
    # one Dart_Count puzzle in 1,600,000 (5 of the first 8,000,000 seeds). Checked here through the
    # generator's own placements: one of them must have needed a body leaning off the throw.
    from puzzles.types import dart_count

    place, leaned_off = dart_count._place_darts, []

    def placing(rng, rings_hit, edges, band, labels, throw):
        darts = place(rng, rings_hit, edges, band, labels, throw)
        if any(abs(angle - throw) > 30 for _, _, angle in darts):
            leaned_off.append((list(rings_hit), len(edges)))
        return darts

    monkeypatch.setattr(dart_count, "_place_darts", placing)
    dart_type = dart_count.DartCount()
    puzzle = dart_type.generate(np.random.default_rng(354943))
    assert leaned_off == [([0, 0, 0, 0], 5)]
    verdict = dart_type.verify(puzzle.truth, dart_type.solution(puzzle.truth), puzzle.masks)
    assert verdict.correct and len(puzzle.public["options"]) == puzzle.truth["option_count"]
