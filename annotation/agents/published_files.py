"""The published client's per-rollout files that only retell a rollout: summary.md, trajectory.jsonl
and the verdict turn that ends its sft_data.json (docs/notes/captchaarena-client-protocol.md §5).

The client writes them while it plays; an export rebuilds them from what is stored. What the
client read off its page at each step (the feedback line, the counters) is rebuilt from the
server's verdict as that page would have shown it; the client's timestamps are rebuilt from the
rollout's start and its model calls' latencies (the time spent acting is not stored), so they are
never later than the real moments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from annotation.models import Rollout, Turn

PROVIDER = "openai"  # the client's provider for every OpenAI-compatible server
PAGE_TITLE = "CAPTCHA Puzzle Benchmark"
FEEDBACK = {True: "Correct!", False: "Incorrect."}
# Slide_Puzzle's page words its verdict in full (script.js, submitSliderPosition).
SLIDE_FEEDBACK = {
    True: "Correct! The slider was placed in the right position.",
    False: "Incorrect. Please try again with a better position.",
}
# The published server's input_type per type (app.py, get_puzzle); "text" for any other.
INPUT_TYPES = {
    "Dice_Count": "number",
    "Geometry_Click": "click",
    "Rotation_Match": "rotation",
    "Slide_Puzzle": "slide",
    "Unusual_Detection": "multiselect",
    "Image_Recognition": "image_grid",
    "Bingo": "bingo_swap",
    "Image_Matching": "image_matching",
    "Patch_Select": "patch_select",
    "Dart_Count": "dart_count",
    "Object_Match": "object_match",
    "Select_Animal": "select_animal",
    "Coordinates": "image_matching",
    "Path_Finder": "image_matching",
    "Place_Dot": "place_dot",
    "Connect_icon": "connect_icon",
    "Click_Order": "click_order",
    "Hold_Button": "hold_button",
    "Misleading_Click": "click",
    "Pick_Area": "click",
}


def feedback_text(puzzle_type: str, correct: bool) -> str:
    """The line the published page shows once an answer is checked."""
    return (SLIDE_FEEDBACK if puzzle_type == "Slide_Puzzle" else FEEDBACK)[correct]


def ended_by_submission(rollout: Rollout) -> bool:
    """The episode stopped because the page showed its answer sent after an action: the client then
    ends its sft_data.json with the verdict turn."""
    return bool(rollout.submitted) and rollout.reason == "submitted"


def verdict_turn_text(result: str, feedback: str) -> str:
    """The last user turn of the client's sft_data.json at submit detection (never sent to the model)."""
    return f"Action executed: {result}. Result: {feedback}"


@dataclass(frozen=True)
class Page:
    """What the client's page_state names: the puzzle, its URL and instruction, its verdict."""

    url: str
    folder: str  # "Bingo_200"
    file_id: str  # "bingo13.png"
    stem: str  # "bingo13"
    puzzle_type: str  # our type name
    prompt: str | None
    correct: bool

    def state(self, *, checked: bool) -> dict[str, Any]:
        """The client's page_state before (checked False) or after the answer was checked."""
        right = int(checked and self.correct)
        return {
            "url": self.url,
            "title": PAGE_TITLE,
            "prompt": self.prompt,
            "feedback": feedback_text(self.puzzle_type, self.correct) if checked else None,
            "feedback_class": f"result-message {'correct' if self.correct else 'incorrect'}"
            if checked
            else "result-message",
            "stats": {
                "total": int(checked),
                "correct": right,
                "accuracy": f"{100.0 * right:.1f}%" if checked else "0%",
            },
            "debug_info": None,
            "puzzle": {
                "puzzle_type": self.folder,
                "puzzle_id": self.file_id,
                "input_type": INPUT_TYPES.get(self.puzzle_type, "text"),
            },
        }


def trajectory_events(
    rollout: Rollout, turns: list[Turn], readings: list, *, page: Page, model: str, max_steps: int
) -> list[dict[str, Any]]:
    """trajectory.jsonl's events: run_start, one tool_call per executed call, run_end."""
    run_id = f"{page.folder}_{page.stem}"
    clock = _Clock(rollout.started_at)
    submitted_at = _submitting_call(rollout, readings)
    events = [
        _event(
            "run_start",
            clock.now(),
            page_state=page.state(checked=False),
            note="puzzle_start",
            metadata={"puzzle_idx": 0, "model": model, "max_steps": max_steps, "url": page.url},
        )
    ]
    for number, (turn, (reply, calls)) in enumerate(zip(turns, readings, strict=True)):
        clock.advance(turn.latency_ms)
        for index, call in enumerate(calls):
            if call.get("error"):
                continue
            arguments = call.get("applied") or call.get("arguments") or {}
            events.append(
                _event(
                    "tool_call",
                    clock.now(),
                    step=turn.number,
                    action=call["name"],
                    params=arguments,
                    result=call.get("result", ""),
                    page_state=page.state(checked=(number, index) == submitted_at),
                    note=reply["content"] or "",
                    metadata={"summary": arguments.get("summary", "")} if call["name"] == "done" else {},
                )
            )
    reward = 1.0 if rollout.submitted and rollout.correct else 0.0
    status = rollout.end or "submit_not_clicked"
    events.append(
        _event(
            "run_end",
            rollout.finished_at.isoformat() if rollout.finished_at else clock.now(),
            result=status,
            page_state=page.state(checked=bool(rollout.submitted)),
            metadata={
                "status": status,
                "submitted": bool(rollout.submitted),
                "correct": bool(rollout.correct),
                "reward": reward,
            },
        )
    )
    return [{"run_id": run_id, "event_index": i, **event} for i, event in enumerate(events)]


def trajectory_jsonl(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events)


def _submitting_call(rollout: Rollout, readings: list) -> tuple[int, int] | None:
    """(turn, call) of the action after which the page showed the answer sent, when that ended it."""
    if not ended_by_submission(rollout):
        return None
    executed = [(n, i) for n, (_, calls) in enumerate(readings) for i, c in enumerate(calls) if not c.get("error")]
    return executed[-1] if executed else None


def _event(event_type: str, timestamp: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "timestamp": timestamp,
        "event_type": event_type,
        "provider": PROVIDER,
        "step": fields.get("step"),
        "action": fields.get("action"),
        "params": fields.get("params") or {},
        "result": fields.get("result"),
        "page_state": fields.get("page_state") or {},
        "note": fields.get("note"),
        "screenshot_path": None,  # the client's loop never passes a screenshot to its recorder
        "metadata": fields.get("metadata") or {},
    }


class _Clock:
    """The rollout's start plus its model calls' latencies so far."""

    def __init__(self, started: datetime | None):
        self.at = started

    def advance(self, latency_ms: float | None) -> None:
        if self.at is not None and latency_ms:
            self.at += timedelta(milliseconds=latency_ms)

    def now(self) -> str | None:
        return self.at.isoformat() if self.at else None


def summary_md(
    *, folder: str, stem: str, prompt: str | None, submitted: bool, correct: bool, steps: list[dict], status: str
) -> str:
    """summary.md as the client writes it: a header, then one section per metafile step."""
    verdict = "CORRECT" if submitted and correct else ("INCORRECT" if submitted else "NOT SUBMITTED")
    lines = [
        f"# {folder} / {stem}",
        f"**Prompt:** {prompt}",
        f"**Result:** {verdict}",
        f"**Status:** {status}  |  **Steps:** {len(steps)}",
        "",
    ]
    for i, step in enumerate(steps):
        lines.append(f"## Step {i + 1}")
        before = steps[i - 1]["screenshot_path"] if i > 0 else "screenshots/screenshot_step_0.png"
        after = step["screenshot_path"]
        if before and after:
            lines.append(f"**Screenshot:** `{before}` -> `{after}`")
        elif after:
            lines.append(f"**Screenshot:** `{after}`")
        if step["reasoning"]:
            lines.append(f"**Thinking:** {step['reasoning']}")
        lines.append(f"**Action:** `{step['action']}`")
        if step["result"]:
            lines.append(f"**Result:** {step['result']}")
        lines.append("")
    return "\n".join(lines)
