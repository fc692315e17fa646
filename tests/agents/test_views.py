"""The staff's trajectory pages: a rollout replayed turn by turn, screenshots for staff only."""

import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from PIL import Image

from annotation.agents.trajectories import save_screenshot
from annotation.models import AgentRun, Rollout, Turn
from puzzles.models import Puzzle

pytestmark = pytest.mark.django_db


def png(colour) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1280, 1080), colour).save(out, format="PNG")
    return out.getvalue()


def call(name, arguments, applied, result, screenshot, *, error=False) -> dict:
    return {
        "name": name,
        "arguments": arguments,
        "applied": applied,
        "result": result,
        "screenshot": screenshot,
        "error": error,
    }


@pytest.fixture
def rollout():
    puzzle = Puzzle.objects.create(type="Bingo", split="test", dataset="d", source_id="1", public={}, truth={})
    run = AgentRun.objects.create(name="<b>run</b>", model="m", protocol="openai-tools", puzzles=[puzzle.pk])
    rollout = Rollout.objects.create(
        run=run, puzzle=puzzle, index=0, status="done", submitted=True, correct=False, steps=3, reason="submitted"
    )
    clicked = {"x": 402, "y": 377}
    calls = [
        call("click", {"x": [402, 377]}, clicked, "clicked (402, 377) button=left", 1),
        call("click", {"x": "720px"}, None, "error: x must be a number", None, error=True),
    ]
    Turn.objects.create(
        rollout=rollout, number=0, seen=0, calls=calls, tokens_in=900, tokens_out=40, latency_ms=812.4,
        reply={"content": "I will click <script>alert(1)</script>", "finish_reason": "stop"},
    )  # fmt: skip
    drag = {"start_x": 455, "start_y": 802, "end_x": 611, "end_y": 802}
    Turn.objects.create(
        rollout=rollout, number=1, seen=1, reply={"content": "drag, then hold"},
        calls=[
            call("drag", drag, drag, "dragged (455,802) -> (611,802)", 2),
            call("hold", {"x": 640, "y": 500}, {"x": 640, "y": 500}, "held mouse left at (640, 500) for 10000ms", 3),
        ],
    )  # fmt: skip
    for step in range(4):
        save_screenshot(rollout.pk, step, png((step * 50, 0, 0)))
    return rollout


def staff() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("admin", is_staff=True))
    return client


def test_a_rollout_replays_turn_by_turn_with_its_actions_marked(rollout):
    page = staff().get(f"/agents/rollouts/{rollout.pk}/").content.decode()
    assert page.count('class="step"') == 3  # two turns and the last screenshot
    assert f'href="/agents/rollouts/{rollout.pk}/screenshots/0.png"' in page
    assert '<circle class="marker" cx="402.0" cy="377.0" r="16"/>' in page
    assert '<circle class="marker error"' not in page  # "720px" is nowhere to mark
    assert '<line class="marker drag" x1="455.0" y1="802.0" x2="611.0" y2="802.0"/>' in page
    assert "hold 10000 ms" in page and "error: x must be a number" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert re.search(r'<script type="module" src="/static/[0-9a-f]{12}/arena/trajectory\.js">', page)
    assert "900 tokens in, 40 out" in page and "812 ms" in page


def test_the_run_pages_list_runs_and_rollouts(rollout):
    client = staff()
    runs = client.get("/agents/").content.decode()
    assert f'href="/agents/runs/{rollout.run_id}/"' in runs and "&lt;b&gt;run&lt;/b&gt;" in runs
    run = client.get(f"/agents/runs/{rollout.run_id}/").content.decode()
    assert f'href="/agents/rollouts/{rollout.pk}/"' in run and "wrong" in run and "1 done" in run


def test_screenshots_are_for_staff_only(rollout):
    url = f"/agents/rollouts/{rollout.pk}/screenshots/2.png"
    response = staff().get(url)
    assert response["Content-Type"] == "image/png" and b"".join(response.streaming_content) == png((100, 0, 0))
    assert staff_missing(rollout).status_code == 404
    person = Client()
    person.force_login(get_user_model().objects.create_user("annie"))
    assert person.get(url).status_code == 302 and Client().get(url).status_code == 302
    assert person.get(f"/agents/rollouts/{rollout.pk}/").status_code == 302


def staff_missing(rollout):
    client = Client()
    client.force_login(get_user_model().objects.create_user("admin2", is_staff=True))
    return client.get(f"/agents/rollouts/{rollout.pk}/screenshots/9.png")


def test_a_run_shows_and_exports_its_token_totals(rollout, tmp_path):
    from annotation.agents.exports import run_export

    run = rollout.run
    Rollout.objects.filter(pk=rollout.pk).update(tokens_in=940, tokens_out=55)
    Rollout.objects.create(
        run=run, puzzle=rollout.puzzle, index=1, status="failed", reason="model server", tokens_in=60, tokens_out=5
    )
    page = staff().get(f"/agents/runs/{run.pk}/").content.decode()
    assert "<dt>Tokens</dt><dd>1000 in, 60 out" in page
    run_export(run, tmp_path / "out")
    record = json.loads((tmp_path / "out" / "arena_run.json").read_text())
    assert (record["tokens_in"], record["tokens_out"]) == (1000, 60)
