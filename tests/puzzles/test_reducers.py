"""The per-kind reducers: the page's semantic actions to the answer the verifier judges."""

import pytest

from puzzles.bank import generate_puzzle
from puzzles.registry import get_type, registry
from puzzles.types.base import Action, Unreadable


def act(kind: str, t: float = 0.0, received: float | None = None, **data) -> Action:
    return Action(kind, t, t if received is None else received, data)


def page_actions(puzzle_type, truth, public) -> list[Action]:
    """The semantic actions the page emits while a person enters the solution."""
    solution = puzzle_type.solution(truth)
    widget = puzzle_type.widget
    if widget in ("point", "drag"):
        kind = "act.click" if widget == "point" else "act.drag_end"
        return [act(kind, x=solution[0], y=solution[1])]
    if widget == "points":
        return [act("act.click", x=x, y=y) for x, y in solution]
    if widget == "cells":
        return [act("act.toggle", cell=c) for c in solution]
    if widget == "swap":  # pick the two cells, then "Swap and Submit"
        return [act("act.toggle", cell=solution[0]), act("act.toggle", cell=solution[1])]
    if widget == "option":
        return [act("act.cycle", delta=1)] * solution
    if widget == "rotate":
        return [act("act.cycle", delta=-1)] * ((360 - solution) // 45 % 8)  # the other way round
    if widget == "text":
        return [act("act.type", text="1"), act("act.type", text=solution)]
    if widget == "hold":
        return [act("act.hold_start", 1000), act("act.hold_end", 1000 + solution * 1000 + 50)]
    raise AssertionError(widget)


@pytest.mark.parametrize("name", registry().names())
def test_the_actions_of_the_solution_reduce_to_a_correct_answer(name):
    puzzle_type = get_type(name)
    for index in range(3):
        generated = generate_puzzle(name, "test", index, 3)
        answer = puzzle_type.reduce(page_actions(puzzle_type, generated.truth, generated.public), generated.public)
        verdict = puzzle_type.verify(generated.truth, answer, generated.masks)
        assert verdict.correct, (name, index, answer, verdict.reason)


def test_cells_toggled_twice_are_unselected():
    cells = get_type("Image_Recognition")
    actions = [act("act.toggle", cell=c) for c in (1, 4, 1, 7, 4, 4)]
    assert cells.reduce(actions, {"grid_size": [3, 3]}) == [4, 7]


def test_a_single_choice_is_the_cell_picked_last():
    animal = get_type("Select_Animal")
    public = {"grid_size": [2, 3]}
    assert animal.reduce([act("act.toggle", cell=c) for c in (1, 4, 4, 2)], public) == [2]
    assert animal.reduce([], public) == []


def test_bingo_swaps_the_two_cells_picked_as_the_page_keeps_them():
    bingo = get_type("Bingo")
    public = {"grid_size": [3, 3]}
    picks = lambda *cells: [act("act.toggle", cell=c) for c in cells]  # noqa: E731
    assert bingo.reduce(picks(5, 0), public) == [0, 5]
    assert bingo.reduce(picks(1, 2, 3), public) == [2, 3]  # a third pick drops the first
    assert bingo.reduce(picks(1, 2, 2, 7), public) == [1, 7]  # a picked cell clicked again is dropped
    with pytest.raises(Unreadable):
        bingo.reduce(picks(1, 2, 2), public)


def test_click_order_counts_the_clicks_since_the_last_reset():
    order = get_type("Click_Order")
    actions = [act("act.click", x=1, y=1), act("act.click", x=2, y=2), act("act.reset"), act("act.click", x=3, y=3)]
    assert order.reduce(actions, {}) == [[3, 3]]
    assert order.reduce([act("act.click", x=1, y=1), act("act.reset")], {}) == []


def test_swaps_recorded_on_the_earlier_page_add_up_to_their_net_arrangement():
    swap = get_type("Bingo")
    public = {"grid_size": [3, 3]}
    assert swap.reduce([act("act.swap", a=0, b=5)], public) == [0, 5]
    swaps = lambda *pairs: [act("act.swap", a=a, b=b) for a, b in pairs]  # noqa: E731
    assert swap.reduce(swaps((0, 5), (5, 0), (2, 3)), public) == [2, 3]
    assert swap.reduce(swaps((0, 1), (1, 2)), public) == [0, 1, 2]  # verify calls it malformed
    with pytest.raises(Unreadable):
        swap.reduce([act("act.swap", a=0, b=5), act("act.swap", a=0, b=5)], public)


def test_cycles_wrap_around_the_options_and_the_angles():
    assert get_type("Object_Match").reduce([act("act.cycle", delta=-1)] * 3, {"option_count": 8}) == 5
    assert get_type("Rotation_Match").reduce([act("act.cycle", delta=1)] * 9, {}) == 45


def test_the_last_click_text_and_drop_count():
    assert get_type("Place_Dot").reduce([act("act.click", x=1, y=2), act("act.click", x=3, y=4)], {}) == [3, 4]
    assert get_type("Dice_Count").reduce([act("act.type", text="1"), act("act.type", text="12")], {}) == "12"
    drops = [act("act.drag_end", x=5, y=6), act("act.drag_end", x=50, y=6)]
    assert get_type("Slide_Puzzle").reduce(drops, {}) == [50, 6]


@pytest.mark.parametrize(
    "name, actions",
    [
        ("Place_Dot", []),
        ("Dice_Count", []),
        ("Slide_Puzzle", [act("act.drag_start", x=1, y=1)]),
        ("Hold_Button", [act("act.hold_start", 0)]),
        ("Hold_Button", [act("act.hold_end", 10)]),
    ],
)
def test_no_answer_without_the_deciding_action(name, actions):
    with pytest.raises(Unreadable):
        get_type(name).reduce(actions, {})


def test_a_hold_counts_what_the_page_measured_when_the_server_agrees():
    hold = get_type("Hold_Button")
    honest = [act("act.hold_start", 1000.0, 5000.0), act("act.hold_end", 4000.0, 8010.0)]
    assert hold.reduce(honest, {}) == 3.0
    # The start reached the server 200 ms late: within slack, the page's measure stands.
    late = [act("act.hold_start", 1000.0, 5200.0), act("act.hold_end", 4000.0, 8010.0)]
    assert hold.reduce(late, {}) == 3.0


def test_a_claimed_hold_the_server_did_not_see_counts_only_what_it_saw():
    hold = get_type("Hold_Button")
    forged = [act("act.hold_start", 1000.0, 5000.0), act("act.hold_end", 61000.0, 5020.0)]
    assert hold.reduce(forged, {}) == pytest.approx(0.27)
    with pytest.raises(Unreadable):
        hold.reduce([act("act.hold_start", 5000.0, 5000.0), act("act.hold_end", 1000.0, 5010.0)], {})
