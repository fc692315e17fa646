"""agent export writes every file the published client writes, in its words."""

import json
from datetime import UTC, datetime

import pytest

from annotation.agents.exports import run_export
from annotation.agents.trajectories import save_screenshot
from annotation.models import AgentRun, Rollout, Turn
from puzzles.models import Puzzle
from tests.agents.test_views import call, png

pytestmark = pytest.mark.django_db

STARTED = datetime(2026, 5, 4, 9, 12, 33, tzinfo=UTC)


@pytest.fixture
def rollout():
    puzzle = Puzzle.objects.create(type="Bingo", split="test", dataset="d", source_id="bingo13", public={}, truth={})
    run = AgentRun.objects.create(
        name="r", model="org/qwen-cua", protocol="openai-tools", puzzles=[puzzle.pk], settings={"max_steps": 15}
    )
    rollout = Rollout.objects.create(
        run=run, puzzle=puzzle, index=0, status="done", submitted=True, correct=True, end="done",
        reason="submitted", steps=3, instruction="Swap two cells", system_prompt="sys", started_at=STARTED,
        finished_at=datetime(2026, 5, 4, 9, 13, 0, tzinfo=UTC),
    )  # fmt: skip
    first = {"x": 402, "y": 377}
    Turn.objects.create(
        rollout=rollout, number=0, seen=0, latency_ms=1500, reply={"content": "first cell"},
        calls=[
            call("click", {"x": "720px"}, None, "error: x must be a number", None, error=True),
            call("click", first, first, "clicked (402, 377) button=left", 1),
        ],
    )  # fmt: skip
    Turn.objects.create(
        rollout=rollout, number=1, seen=1, latency_ms=500, reply={"content": "look"},
        calls=[call("screenshot", {}, {}, "screenshot_taken", 2)],
    )  # fmt: skip
    submit = {"x": 640, "y": 900}
    Turn.objects.create(
        rollout=rollout, number=2, seen=2, latency_ms=1000, reply={"content": "submit"},
        calls=[call("click", submit, submit, "clicked (640, 900) button=left", 3)],
    )  # fmt: skip
    for step in range(4):
        save_screenshot(rollout.pk, step, png((step * 50, 0, 0)))
    return rollout


def test_the_export_writes_summary_md_trajectory_jsonl_mode_and_the_verdict_turn(rollout, tmp_path):
    run_export(rollout.run, tmp_path)
    place = tmp_path / "bingo_1" / "Bingo_1_bingo13"

    assert (place / "summary.md").read_text() == "\n".join(
        [
            "# Bingo_1 / bingo13",
            "**Prompt:** Swap two cells",
            "**Result:** CORRECT",
            "**Status:** done  |  **Steps:** 3",
            "",
            "## Step 1",
            "**Screenshot:** `screenshots/screenshot_step_0.png` -> `screenshots/screenshot_step_1.png`",
            "**Thinking:** first cell",
            '**Action:** `click({"x": 402, "y": 377})`',
            "**Result:** clicked (402, 377) button=left",
            "",
            "## Step 2",
            "**Screenshot:** `screenshots/screenshot_step_1.png` -> `screenshots/screenshot_step_2.png`",
            "**Thinking:** look",
            "**Action:** `screenshot`",
            "**Result:** screenshot_taken",
            "",
            "## Step 3",
            "**Screenshot:** `screenshots/screenshot_step_2.png` -> `screenshots/screenshot_step_3.png`",
            "**Thinking:** submit",
            '**Action:** `click({"x": 640, "y": 900})`',
            "**Result:** clicked (640, 900) button=left",
            "",
        ]
    )

    events = [json.loads(line) for line in (place / "trajectory.jsonl").read_text().splitlines()]
    assert [e["event_type"] for e in events] == ["run_start", "tool_call", "tool_call", "tool_call", "run_end"]
    assert list(events[0]) == [
        "run_id", "event_index", "timestamp", "event_type", "provider", "step", "action", "params",
        "result", "page_state", "note", "screenshot_path", "metadata",
    ]  # fmt: skip
    url = "http://127.0.0.1:7860?single_puzzle=true&puzzle_type=Bingo_1&puzzle_id=bingo13.png"
    assert events[0]["run_id"] == "Bingo_1_bingo13" and events[0]["note"] == "puzzle_start"
    assert events[0]["metadata"] == {"puzzle_idx": 0, "model": "org/qwen-cua", "max_steps": 15, "url": url}
    assert events[0]["page_state"]["puzzle"] == {
        "puzzle_type": "Bingo_1",
        "puzzle_id": "bingo13.png",
        "input_type": "bingo_swap",
    }
    first, shot, submit = events[1:4]
    assert (first["step"], first["action"], first["params"]) == (0, "click", {"x": 402, "y": 377})
    assert first["timestamp"] == "2026-05-04T09:12:34.500000+00:00" and first["page_state"]["feedback"] is None
    assert (shot["step"], shot["result"], shot["note"]) == (1, "screenshot_taken", "look")
    assert submit["page_state"]["feedback"] == "Correct!"
    assert submit["page_state"]["feedback_class"] == "result-message correct"
    assert submit["page_state"]["stats"] == {"total": 1, "correct": 1, "accuracy": "100.0%"}
    assert events[4]["result"] == "done" and events[4]["metadata"] == {
        "status": "done",
        "submitted": True,
        "correct": True,
        "reward": 1.0,
    }

    sft = json.loads((place / "sft_data.json").read_text())
    assert sft["conversations"][-1] == {
        "role": "user",
        "content": [
            {"type": "image", "image": "screenshots/screenshot_step_3.png"},
            {"type": "text", "text": "Action executed: clicked (640, 900) button=left. Result: Correct!"},
        ],
    }
    assert sft["conversations"][-3]["content"][1]["text"] == "Here is the updated screenshot."

    root = json.loads((tmp_path / "run_summary.json").read_text())
    by_type = json.loads((tmp_path / "bingo_1" / "run_summary.json").read_text())
    assert list(root)[:3] == ["benchmark", "agent", "mode"] and root["mode"] == "per_puzzle"
    assert list(by_type)[:5] == ["benchmark", "agent", "mode", "puzzle_type", "total_puzzles"]
    assert (by_type["mode"], by_type["puzzle_type"]) == ("per_puzzle", "Bingo_1")


def test_a_rollout_not_ended_by_its_submission_keeps_the_usual_last_turn(rollout, tmp_path):
    Rollout.objects.filter(pk=rollout.pk).update(submitted=False, correct=False, end="submit_not_clicked", reason="")
    run_export(rollout.run, tmp_path)
    place = tmp_path / "bingo_1" / "Bingo_1_bingo13"
    sft = json.loads((place / "sft_data.json").read_text())
    assert sft["conversations"][-1]["content"][1]["text"] == (
        "Action executed: clicked (640, 900) button=left. Here is the updated screenshot."
    )
    assert "**Result:** NOT SUBMITTED" in (place / "summary.md").read_text()
    last = json.loads((place / "trajectory.jsonl").read_text().splitlines()[-2])
    assert last["page_state"]["feedback"] is None and last["page_state"]["stats"]["total"] == 0
