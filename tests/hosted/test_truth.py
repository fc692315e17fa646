"""Truth never reaches a page: the routes refused and the fields stripped (annotation/hosted/truth.py).

The first test tours the stand-in as a page and a probe would (every family, right and wrong
answers, every step, the truth routes and files) and searches every body a page would receive
for every truth value the stand-in holds; the others run real-shaped bodies of the three
servers (written from reading their app.py) through the same functions.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.exceptions import ValidationError

from annotation.hosted.dialects import CAPTCHAARENA, NEXTGEN, OPENCAPTCHAWORLD
from annotation.hosted.probe import target_click, truth_in
from annotation.hosted.truth import refused, strip_truth
from puzzles.hosted_names import hosted_type, split_hosted_type
from puzzles.models import Puzzle
from tests.hosted import standin as data


def tour(standin) -> list[tuple[str, str, bytes]]:
    """Every kind of response the stand-in gives: (method, path with query, raw body)."""
    bodies: list[tuple[str, str, bytes]] = []

    def call(method: str, path: str, body: Any = None) -> Any:
        _, raw = standin.call(method, path, body)
        bodies.append((method, path, raw))
        return json.loads(raw) if raw.startswith((b"{", b"[")) else raw

    def check(family: str, puzzle_id: str, answer: Any) -> Any:
        return call("POST", "/api/check_answer", {"puzzle_type": family, "puzzle_id": puzzle_id, "answer": answer})

    for path in ("/", "/static/js/standin.js", "/api/puzzle_types"):
        call("GET", path)
    for _ in data.FAMILIES:
        call("GET", "/api/get_puzzle?mode=sequential")  # the page with no address
    for index, (key, puzzle) in enumerate(data.STORED["Dice_Roll_Path"].items()):
        call("GET", f"/api/get_puzzle?type=Dice_Roll_Path&puzzle_index={index}")
        check("Dice_Roll_Path", key, -1)
        check("Dice_Roll_Path", key, puzzle["answer_top"])
        call("GET", "/api/last_result")
        call("POST", "/api/get_ground_truth", {"puzzle_type": "Dice_Roll_Path", "puzzle_id": key})
    for index, key in enumerate(data.STORED["Spooky_Size"]):
        for answer in ({"position": {"x": -1, "y": -1}}, {"position": {"x": 1, "y": 1}}):
            call("GET", f"/api/get_puzzle?type=Spooky_Size&puzzle_index={index}")
            reply = check("Spooky_Size", key, answer)
        check("Spooky_Size", key, truth_in(reply))  # expired
        call("GET", "/api/last_result")
    for answer in ([], data.page_style_jigsaw_answer(9), data.jigsaw(9)["correct_positions"]):
        call("GET", "/api/get_puzzle?type=Static_Jigsaw&seed=9")
        check("Static_Jigsaw", "jigsaw_seed_9", answer)
    puzzle = call("GET", "/api/get_puzzle?type=Red_Dot&seed=5")
    target = puzzle["dot"]
    for step in range(data.RED_DOT_HITS):
        target = check("Red_Dot", puzzle["puzzle_id"], target_click(step, target)).get("next_dot")
    call("GET", "/api/last_result")
    for path in ("/captcha_data/Dice_Roll_Path/ground_truth.json", "/captcha_data/Spooky_Size/ground_truth.json"):
        call("GET", path)
    call("GET", "/captcha_data/Dice_Roll_Path/dice_roll_0000.png")
    call("GET", "/api/get_puzzle?type=Spooky_Size&puzzle_index=0&show_viz=true")
    call("GET", "/api/get_puzzle?debug_type=Dice_Roll_Path")
    call("POST", "/api/clear_last_result")
    return bodies


def as_page_gets(method: str, path: str, raw: bytes) -> str | None:
    """What a page would receive through the proxy's rules: None when the route is refused."""
    parts = urlsplit(path)
    if refused(NEXTGEN, parts.path, parse_qs(parts.query)):
        return None
    try:
        return json.dumps(strip_truth(NEXTGEN, json.loads(raw)))
    except ValueError:
        return raw.decode("latin-1")  # a page, a script, an image: as served


def test_no_body_a_page_receives_carries_a_truth_value(standin):
    bodies = tour(standin)
    raw_text = b"".join(raw for _, _, raw in bodies).decode("latin-1")
    truths = data.truth_values()
    # The tour reaches every truth value (so the search below could fail)...
    assert [value for value in truths if value not in raw_text] == []
    # ...and every body a page may receive is free of all of them.
    assert [name for name in data.TRUTH_FIELDS if name not in raw_text] == []
    leaks = [
        (path, value)
        for method, path, raw in bodies
        if (received := as_page_gets(method, path, raw)) is not None
        for value in truths + list(data.TRUTH_FIELDS) * raw.startswith((b"{", b"["))
        if value in received
    ]
    assert leaks == []


def test_the_tour_meets_every_truth_route_and_file_and_refuses_them(standin):
    refused_paths = {path for method, path, raw in tour(standin) if as_page_gets(method, path, raw) is None}
    assert refused_paths == {
        "/api/last_result",
        "/api/get_ground_truth",
        "/api/clear_last_result",
        "/captcha_data/Dice_Roll_Path/ground_truth.json",
        "/captcha_data/Spooky_Size/ground_truth.json",
        "/api/get_puzzle?type=Spooky_Size&puzzle_index=0&show_viz=true",
        "/api/get_puzzle?debug_type=Dice_Roll_Path",
    }


def test_what_a_page_must_read_is_kept(standin):
    _, puzzle = standin.json("GET", "/api/get_puzzle?type=Red_Dot&seed=2")
    step = {"puzzle_type": "Red_Dot", "puzzle_id": puzzle["puzzle_id"], "answer": target_click(0, puzzle["dot"])}
    _, reply = standin.json("POST", "/api/check_answer", step)
    kept = strip_truth(NEXTGEN, reply)
    assert kept == {
        k: reply[k] for k in ("correct", "status", "hits_completed", "required_hits", "next_dot", "timeout_ms")
    }
    page_puzzle = strip_truth(NEXTGEN, puzzle)
    assert page_puzzle["dot"] == puzzle["dot"] and page_puzzle["puzzle_id"] == puzzle["puzzle_id"]
    assert "debug_info" not in page_puzzle


# Real-shaped bodies, from the three servers' app.py (values made up, fields and nesting theirs).
NEXTGEN_JIGSAW_WRONG = {
    "correct": False,
    "user_answer": [{"piece_index": 0, "grid_row": 1, "grid_col": 0}],
    "correct_answer": "Correct positions: Piece 0 at (0, 0); Piece 1 at (0, 1)",
    "elapsed_time": 3.2,
    "action_sequence": [],
    "details": {"user_placements": [], "correct_positions": [{"piece_index": 0, "grid_row": 0, "grid_col": 0}]},
}
NEXTGEN_MAP_PARITY = {
    "puzzle_type": "Map_Parity",
    "puzzle_id": "map_parity_7",
    "svg_content": "<svg/>",
    "options": ["odd", "even"],
    "debug_info": "Type: Map_Parity, Shortest path: 9 steps (odd)",
    "type_stats": {"total_puzzles": 0, "current_solved": 4, "current_correct": 3, "current_time": 0},
}
ARENA_PUZZLES = [
    {"puzzle_id": "bingo_3.png", "grid_size": [3, 3], "solution_line": {"type": "row", "index": 1}, "answer": [[1, 4]]},
    {"puzzle_id": "im_2.png", "option_images": ["/captcha_data/Image_Matching/o1.png"], "correct_option_index": 2},
    {"puzzle_id": "ps_1.png", "grid_size": [5, 5], "target_object": "moon", "correct_patches": [3, 9]},
    {"puzzle_id": "mc_4.png", "avoid_area": {"x": 10, "y": 20, "width": 30, "height": 40}, "mask_mode": True},
    {"puzzle_id": "sp_5.png", "component_image": "/captcha_data/Slide_Puzzle/c.png", "slider_track_y": 87},
]
TRUTH_FIELDS = ("answer", "correct_option_index", "correct_patches", "avoid_area", "slider_track_y", "solution_line")


@pytest.mark.parametrize("dialect", [CAPTCHAARENA, OPENCAPTCHAWORLD])
@pytest.mark.parametrize("puzzle", ARENA_PUZZLES)
def test_the_arena_apps_get_puzzle_loses_its_truth_fields(dialect, puzzle):
    body = {"puzzle_type": "T", "prompt": "p", "input_type": "x", "debug_info": "Type: T, Puzzle: p", **puzzle}
    stripped = strip_truth(dialect, body)
    assert not set(stripped) & {*TRUTH_FIELDS, "debug_info"}
    assert set(body) - set(stripped) <= {*TRUTH_FIELDS, "debug_info"}  # nothing else is taken
    assert stripped["puzzle_id"] == puzzle["puzzle_id"]


def test_check_answers_lose_their_truth_in_every_dialect():
    arena = {"correct": True, "user_answer": [3, 9], "correct_answer": [3, 9]}
    assert strip_truth(CAPTCHAARENA, arena) == {"correct": True}
    assert strip_truth(OPENCAPTCHAWORLD, arena) == {"correct": True}
    assert strip_truth(NEXTGEN, NEXTGEN_JIGSAW_WRONG) == {"correct": False}
    assert strip_truth(NEXTGEN, NEXTGEN_MAP_PARITY) == {
        k: NEXTGEN_MAP_PARITY[k] for k in ("puzzle_type", "puzzle_id", "svg_content", "options")
    }


@pytest.mark.parametrize(
    ("dialect", "path", "query"),
    [
        (NEXTGEN, "/api/last_result", {}),
        (NEXTGEN, "/api/get_ground_truth", {}),
        (NEXTGEN, "/api/agent_metadata", {}),
        (NEXTGEN, "/api/benchmark_results", {}),
        (NEXTGEN, "/api/get_puzzle", {"type": "Spooky_Size", "show_viz": "true"}),
        (CAPTCHAARENA, "/captcha_data/Pick_Area/ground_truth.json", {}),
        (CAPTCHAARENA, "/captcha_data/Pick_Area/ground_truth_cu.json", {}),
        (CAPTCHAARENA, "/captcha_data/Pick_Area/masks/p1_mask.png", {}),
        (CAPTCHAARENA, "/api/save_trajectory", {}),
        (CAPTCHAARENA, "/study", {}),
        (CAPTCHAARENA, "/api/study/state", {}),
        (CAPTCHAARENA, "/api/get_puzzle_by_id", {"type": "Bingo", "id": "b.png", "split": "Train"}),
        (OPENCAPTCHAWORLD, "/captcha_data/Bingo/ground_truth.json", {}),
        (OPENCAPTCHAWORLD, "/api/get_puzzle", {"debug_type": "Bingo"}),
    ],
)
def test_truth_and_debug_routes_files_and_switches_are_refused(dialect, path, query):
    assert refused(dialect, path, query)


@pytest.mark.parametrize(
    ("dialect", "path", "query"),
    [
        (NEXTGEN, "/api/get_puzzle", {"type": "Red_Dot", "seed": "3"}),
        (NEXTGEN, "/api/check_answer", {}),
        (NEXTGEN, "/api/puzzle_image/mirror_0001/2", {}),
        (NEXTGEN, "/static/js/script.js", {}),
        (CAPTCHAARENA, "/captcha_data/Bingo/b.png", {}),
        (OPENCAPTCHAWORLD, "/", {}),
    ],
)
def test_what_a_page_needs_passes(dialect, path, query):
    assert refused(dialect, path, query) is None


@pytest.mark.parametrize(
    ("body", "truth"),
    [
        (NEXTGEN_JIGSAW_WRONG, [{"piece_index": 0, "grid_row": 0, "grid_col": 0}]),
        ({"correct": False, "correct_answer": "Correct answer: odd (path length: 9)"}, "odd"),
        ({"correct": False, "details": {"target_x": 417.5, "target_y": 227.5}}, {"position": {"x": 417.5, "y": 227.5}}),
        ({"correct": False, "correct_answer": [2, 5]}, [2, 5]),
        ({"correct": False, "correct_answer": 4}, 4),
        ({"error": "Invalid answer format"}, None),
    ],
)
def test_the_truth_is_read_from_real_shaped_check_answers(body, truth):
    assert truth_in(body) == truth


def test_hosted_type_names_are_qualified_and_valid_puzzle_types():
    assert hosted_type("nextgen", "3D_Viewpoint") == "nextgen:3D_Viewpoint"
    assert split_hosted_type("nextgen:Red_Dot") == ("nextgen", "Red_Dot")
    assert split_hosted_type("Red_Dot") is None and split_hosted_type("Next Gen:Red_Dot") is None
    with pytest.raises(ValueError, match="family name"):
        hosted_type("nextgen", "Red Dot")
    field = Puzzle._meta.get_field("type")
    field.run_validators("nextgen:Red_Dot")
    field.run_validators("Dice_Count")
    with pytest.raises(ValidationError, match="unknown puzzle type"):
        field.run_validators("nextgen:Red Dot")
