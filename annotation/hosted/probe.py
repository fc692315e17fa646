"""Check a puzzle through the peer's API with the peer's own truth, server-side.

The truth is learned from the peer itself: a format-valid answer that is never right makes its
check_answer say what was (`correct_answer`, `details`); a multi-step family's next target is in
the puzzle and in each `continue`. A stateful family is fetched afresh before every check (its
state is single use). A puzzle passes when the peer accepts that truth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from annotation.hosted.client import PeerClient, PeerRefused
from annotation.hosted.dialects import Address

# Answers of every shape the protocol's checks take, none of which can be right: an empty
# selection, an impossible number, a pair, a click far outside any canvas, an empty text.
NEVER_RIGHT: tuple[Any, ...] = ([], -1, "-1,-1", {"position": {"x": -9999, "y": -9999}}, "")
FORMATTED = re.compile(r"Correct answer: (\S+) \(.*\)")  # Next-Gen's Map_Parity: "Correct answer: odd (path length: 7)"
MAX_STEPS = 50


class ProbeFailure(Exception):
    """Why the peer's own truth could not be checked or was not accepted."""


@dataclass
class Checked:
    """A puzzle the peer accepted its own truth for."""

    address: Address
    puzzle_id: str
    puzzle: dict[str, Any]  # the peer's get_puzzle answer, truth included (server-side only)
    answers: list[Any] = field(default_factory=list)  # what was accepted, one per step


def check_with_truth(client: PeerClient, address: Address, puzzle: dict[str, Any] | None = None) -> Checked:
    """Fetch (unless given the puzzle: a peer without addresses), learn the truth, fetch afresh if
    stateful, check; ProbeFailure with the reason when the peer does not accept its own truth."""
    try:
        if address.family in client.dialect.multi_step:
            return _play_steps(client, address)
        return _check_once(client, address, puzzle or client.fetch(address))
    except PeerRefused as refusal:
        raise ProbeFailure(str(refusal)) from refusal


def _check_once(client: PeerClient, address: Address, puzzle: dict[str, Any]) -> Checked:
    truth = _learn_truth(client, address, puzzle)
    if address.family in client.dialect.stateful:
        puzzle = _fetch_same(client, address, puzzle["puzzle_id"])
    reply = client.check(address.family, puzzle["puzzle_id"], truth)
    if reply.error() or not _accepted(reply.body):
        raise ProbeFailure(f"the peer did not accept its own truth: {reply.error() or _said(reply.body)}")
    return Checked(address, puzzle["puzzle_id"], puzzle, [truth])


def _learn_truth(client: PeerClient, address: Address, puzzle: dict[str, Any]) -> Any:
    problems = []
    for wrong in NEVER_RIGHT:
        if address.family in client.dialect.stateful:
            puzzle = _fetch_same(client, address, puzzle["puzzle_id"])
        reply = client.check(address.family, puzzle["puzzle_id"], wrong)
        truth = None if reply.error() else truth_in(reply.body)
        if truth is not None:
            return truth
        problems.append(reply.error() or "no correct_answer")
    raise ProbeFailure(f"its check_answer named no truth ({'; '.join(sorted(set(problems)))})")


def truth_in(body: Any) -> Any:
    """The answer a check_answer body says was right, in the form check_answer takes; None if none."""
    if not isinstance(body, dict):
        return None
    details = body.get("details")
    details = details if isinstance(details, dict) else {}
    if isinstance(details.get("correct_positions"), list):
        return details["correct_positions"]
    if "target_x" in details and "target_y" in details:
        return {"position": {"x": details["target_x"], "y": details["target_y"]}}
    said = body.get("correct_answer")
    if isinstance(said, str) and (formatted := FORMATTED.fullmatch(said)):
        return formatted.group(1)
    return said


def _play_steps(client: PeerClient, address: Address) -> Checked:
    """A multi-step family: click each target's centre as soon as the peer shows it."""
    puzzle = client.fetch(address)
    target, answers = puzzle.get("dot"), []
    for step in range(MAX_STEPS):
        if not isinstance(target, dict):
            raise ProbeFailure(f"step {step}: the peer showed no target")
        answer = target_click(step, target)
        answers.append(answer)
        reply = client.check(address.family, puzzle["puzzle_id"], answer)
        status = reply.body.get("status") if isinstance(reply.body, dict) else None
        if status == "continue":
            target = reply.body.get("next_dot")
            continue
        if status == "completed" and _accepted(reply.body):
            return Checked(address, puzzle["puzzle_id"], puzzle, answers)
        raise ProbeFailure(f"step {step}: the peer did not accept its own target: {reply.error() or _said(reply.body)}")
    raise ProbeFailure(f"no end after {MAX_STEPS} steps")


def target_click(step: int, target: dict[str, Any]) -> dict[str, Any]:
    """A click on the centre of a drawn target ({x, y} its top-left corner, `diameter` its size)."""
    radius = float(target.get("diameter", 0)) / 2
    position = {"x": float(target["x"]) + radius, "y": float(target["y"]) + radius}
    return {"hit_index": step, "clicked": True, "position": position}


def _fetch_same(client: PeerClient, address: Address, puzzle_id: str) -> dict[str, Any]:
    again = client.fetch(address)
    if again["puzzle_id"] != puzzle_id:
        raise ProbeFailure(f"fetched afresh, the same address gave another puzzle ({again['puzzle_id']!r})")
    return again


def _accepted(body: Any) -> bool:
    return isinstance(body, dict) and body.get("correct") is True


def _said(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("message") or body.get("error") or f"correct={body.get('correct')!r}")
    return str(body)[:200]
