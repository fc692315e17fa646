"""openai-tools end to end: JSON tool calls read leniently, every bad call answered, never a crash."""

import base64
import io
from urllib.parse import unquote

import pytest
from PIL import Image

from annotation.models import AgentRun, Rollout
from puzzles.registry import get_type
from tests.agents.conftest import command
from tests.agents.fakes import PAGE_IN_PROMPT, FakeChatServer, reply, text_reply, tool_calls

pytestmark = pytest.mark.browser


def by_puzzle(scripts: dict[str, list]):
    """A model that plays a script per puzzle type, told apart by the page URL in the prompt."""
    served: dict[str, int] = {}

    def respond(body):
        kind = PAGE_IN_PROMPT.search(body["messages"][0]["content"]).group(1).rsplit("_", 1)[0]
        step = served.get(kind, 0)
        served[kind] = step + 1
        script = scripts[kind]
        return script[step] if step < len(script) else text_reply("done here")

    return respond


def stage(puzzle, point):
    return get_type(puzzle.type).layout(puzzle.public).main.to_stage(*point)


def test_lists_strings_and_a_hold_without_duration_all_work(puzzles_of, client_checkout):
    dice, geometry, hold = puzzles_of("Dice_Count", "Geometry_Click", "Hold_Button")
    layout = get_type("Dice_Count").layout(dice.public)
    ix, iy = (round(v) for v in layout.control("text").center())
    sx, sy = layout.control("submit").center()
    gx, gy = (round(v) for v in stage(geometry, geometry.truth["point"]))
    hx, hy = get_type("Hold_Button").layout(hold.public).control("hold").center()
    scripts = {
        "Dice_Count": [
            reply(
                tool_calls(
                    ("click", "{not json"), ("click", {"x": "720px", "y": 3}), ("click", {"x": [ix, iy], "y": iy})
                )
            ),
            reply(tool_calls(("type_text", {"text": get_type("Dice_Count").solution(dice.truth)}))),
            reply(tool_calls(("click", {"x": f"{sx + 0.7}", "y": f" {sy} "}))),
        ],
        "Geometry_Click": [reply(tool_calls(("click", {"x": [gx, gy]})))],
        "Hold_Button": [reply(tool_calls(("hold", {"x": f"{hx}", "y": str(hy)})))],
    }
    with FakeChatServer(by_puzzle(scripts)) as fake:
        out = command(
            "agent", "run", "--protocol", "openai-tools", "--model", "m", "--base-url", fake.url,
            "--captchaarena-client", str(client_checkout), "--split", "test", "--workers", "3", "--name", "tools",
        )  # fmt: skip
    assert out.strip().endswith("agent: 3/3 correct"), out
    run = AgentRun.objects.get(name="tools")
    assert all(r.status == "done" and r.correct for r in run.rollouts.all())
    body = next(b for b in fake.bodies if "Dice_Count" in b["messages"][0]["content"] and len(b["messages"]) > 3)
    assert {t["function"]["name"] for t in body["tools"]} == {"screenshot", "click", "drag", "hold", "type_text"}
    assert body["tool_choice"] == "auto" and body["max_tokens"] == 12000
    answers = [m["content"] for m in body["messages"] if m["role"] == "tool"][:3]
    assert answers == [
        "error: the arguments of click are not JSON",
        "error: x must be a number, not '720px'",
        f"clicked ({ix}, {iy}) button=left",
    ]
    follow_up = body["messages"][6]
    assert follow_up["role"] == "user" and follow_up["content"][0]["text"] == (
        f"Action executed: clicked ({ix}, {iy}) button=left. Here is the updated screenshot:"
    )
    png = base64.b64decode(follow_up["content"][1]["image_url"]["url"].split(",", 1)[1])
    assert Image.open(io.BytesIO(png)).size == (1280, 1080)
    held = Rollout.objects.get(run=run, puzzle=hold).turns.get(number=0).calls[0]
    assert (
        held["applied"]["x"] == int(hx) and held["result"] == f"held mouse left at ({int(hx)}, {int(hy)}) for 10000ms"
    )
    assert unquote(PAGE_IN_PROMPT.search(body["messages"][0]["content"]).group(2)).startswith(dice.source_id)
