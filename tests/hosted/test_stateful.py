"""The stand-in keeps the peer's stateful rules, and the probe honours them (docs/hosted.md)."""

from __future__ import annotations

import pytest

from annotation.hosted.client import PeerClient
from annotation.hosted.dialects import NEXTGEN, Address
from annotation.hosted.probe import ProbeFailure, check_with_truth, target_click
from tests.hosted import standin as data
from tests.hosted.conftest import GENEROUS_TIMEOUT_MS, start_standin


def spooky_click(index: int) -> dict:
    target = list(data.STORED["Spooky_Size"].values())[index]["target_position"]
    radius = target["diameter"] / 2
    return {"position": {"x": target["x"] + radius, "y": target["y"] + radius}}


def test_a_single_use_state_answers_expired_on_a_second_check(standin):
    check = {"puzzle_type": "Spooky_Size", "puzzle_id": "spooky_size_0000", "answer": spooky_click(0)}
    assert standin.json("POST", "/api/check_answer", check) == (400, {"error": "Puzzle state expired"})
    standin.json("GET", "/api/get_puzzle?type=Spooky_Size&puzzle_index=0")
    status, verdict = standin.json("POST", "/api/check_answer", check)
    assert (status, verdict["correct"]) == (200, True)
    assert standin.json("POST", "/api/check_answer", check) == (400, {"error": "Puzzle state expired"})


def test_a_stored_family_accepts_any_number_of_checks(standin):
    check = {"puzzle_type": "Dice_Roll_Path", "puzzle_id": "dice_roll_0001", "answer": 5923}
    verdicts = [standin.json("POST", "/api/check_answer", check)[1]["correct"] for _ in range(3)]
    assert verdicts == [True, True, True]


def test_the_multi_step_family_continues_then_completes(standin):
    _, puzzle = standin.json("GET", "/api/get_puzzle?type=Red_Dot&seed=5")
    dots = data.red_dots(5)
    assert (puzzle["dot"]["x"], puzzle["dot"]["y"]) == (dots[0]["x"], dots[0]["y"])
    steps = []
    target = puzzle["dot"]
    for step in range(data.RED_DOT_HITS):
        check = {"puzzle_type": "Red_Dot", "puzzle_id": puzzle["puzzle_id"], "answer": target_click(step, target)}
        _, reply = standin.json("POST", "/api/check_answer", check)
        steps.append(reply["status"])
        target = reply.get("next_dot")
    assert steps == ["continue", "continue", "completed"]
    assert reply["correct"] is True
    assert standin.json("POST", "/api/check_answer", check) == (400, {"error": "Puzzle state expired"})


def test_a_late_hit_fails_and_ends_the_puzzle(standin):
    _, puzzle = standin.json("GET", "/api/get_puzzle?type=Red_Dot&seed=5")
    standin.advance(GENEROUS_TIMEOUT_MS + 1000)  # the server's clock, not the test's: no waiting
    check = {"puzzle_type": "Red_Dot", "puzzle_id": puzzle["puzzle_id"], "answer": target_click(0, puzzle["dot"])}
    _, reply = standin.json("POST", "/api/check_answer", check)
    assert (reply["status"], reply["correct"], reply["message"]) == ("failed", False, "Missed the red dot in time.")
    assert standin.json("POST", "/api/check_answer", check)[0] == 400


def test_hits_out_of_order_fail(standin):
    _, puzzle = standin.json("GET", "/api/get_puzzle?type=Red_Dot&seed=5")
    check = {"puzzle_type": "Red_Dot", "puzzle_id": puzzle["puzzle_id"], "answer": target_click(1, puzzle["dot"])}
    _, reply = standin.json("POST", "/api/check_answer", check)
    assert (reply["status"], reply["message"]) == ("failed", "Unexpected click order. Puzzle reset.")


def test_the_jigsaw_accepts_the_truth_and_never_a_page_style_answer(standin):
    truth = data.jigsaw(9)["correct_positions"]
    for answer, expected in ((data.page_style_jigsaw_answer(9), False), (truth, True)):
        standin.json("GET", "/api/get_puzzle?type=Static_Jigsaw&seed=9")
        check = {"puzzle_type": "Static_Jigsaw", "puzzle_id": "jigsaw_seed_9", "answer": answer}
        assert standin.json("POST", "/api/check_answer", check)[1]["correct"] is expected
    assert standin.json("POST", "/api/check_answer", check) == (400, {"error": "Invalid puzzle ID"})


@pytest.mark.parametrize(
    ("family", "address"),
    [("Dice_Roll_Path", {"index": 2}), ("Spooky_Size", {"index": 1}), ("Static_Jigsaw", {"seed": 4})],
)
def test_the_probe_checks_the_peers_own_truth_without_hitting_a_spent_state(standin, family, address):
    checked = check_with_truth(PeerClient(standin.url, NEXTGEN), Address(family, **address))
    _, calls = standin.json("GET", "/_standin/log")
    assert not [call for call in calls if "expired" in (call["error"] or "")]
    if family in NEXTGEN.stateful:  # each check on a fresh state: one get before every check
        routes = [call["route"] for call in calls]
        assert all(routes[i - 1] == "get" for i, route in enumerate(routes) if route == "check")
    expected = {
        "Dice_Roll_Path": 6131,
        "Spooky_Size": spooky_click(1),
        "Static_Jigsaw": data.jigsaw(4)["correct_positions"],
    }[family]
    assert checked.answers == [expected]


def test_the_probe_plays_every_step_of_the_multi_step_family(standin):
    checked = check_with_truth(PeerClient(standin.url, NEXTGEN), Address("Red_Dot", seed=11))
    centres = [(d["x"] + 20, d["y"] + 20) for d in data.red_dots(11)]
    assert [(a["position"]["x"], a["position"]["y"]) for a in checked.answers] == centres
    assert [a["hit_index"] for a in checked.answers] == [0, 1, 2]


def test_a_server_too_slow_for_its_own_clock_fails_the_probe_with_its_words():
    slow = start_standin(timeout_ms=-GENEROUS_TIMEOUT_MS)  # every hit is late, by construction
    try:
        with pytest.raises(ProbeFailure, match="Missed the red dot in time"):
            check_with_truth(PeerClient(slow.url, NEXTGEN), Address("Red_Dot", seed=1))
    finally:
        slow.process.terminate()
        slow.process.wait(timeout=30)
