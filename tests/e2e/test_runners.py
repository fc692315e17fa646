"""The replay command and the agent harness, end to end in real Chromium."""

import base64
import io

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from PIL import Image

from annotation.models import AgentRun, Attempt, Participant, Rollout
from puzzles.models import Puzzle, ReplayCheck
from puzzles.registry import get_type
from tests.agents.fakes import FakeChatServer, reply, scripted, tool_calls

pytestmark = pytest.mark.browser


def command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_replay_command_verifies_and_records_a_failure_with_its_screenshot(puzzles_of):
    ok, broken = puzzles_of("Hold_Button", "Object_Match")
    # The page and the truth disagree: the truth's option lies beyond the option count the
    # server reduces with, so the page's own verdict on the reference replay is wrong.
    broken.truth["correct_option_index"] = 5
    broken.public["option_count"] = 4
    broken.save()
    out = command("replay", "--split", "test", "--workers", "2")
    assert out.strip().endswith("replay: 1/2 verified")
    assert Puzzle.objects.get(pk=ok.pk).status == "verified"
    assert Puzzle.objects.get(pk=broken.pk).status == "failed"
    check = ReplayCheck.objects.get(puzzle=broken)
    assert not check.verified and check.reason.startswith("server verdict: option 1")
    assert Image.open(check.screenshot.open("rb")).size == (1280, 1080)
    assert not str(check.screenshot.path).startswith(str(settings.MEDIA_ROOT))  # never a public file
    staff, person = Client(), Client()
    staff.force_login(get_user_model().objects.create_user("admin", is_staff=True))
    person.force_login(get_user_model().objects.create_user("annie"))
    url = f"/replays/{check.pk}/screenshot.png"
    assert staff.get(url)["Content-Type"] == "image/png"
    assert person.get(url).status_code == 302  # to the admin sign-in
    home = staff.get("/").content.decode()
    assert "replay-verified" in home


def test_the_agent_harness_acts_through_the_page_and_is_scored_like_a_person(puzzles_of, monkeypatch):
    puzzle = puzzles_of("Geometry_Click")[0]
    x, y = get_type(puzzle.type).layout(puzzle.public).main.to_stage(*puzzle.truth["point"])
    script = [
        reply(tool_calls(("screenshot", {}))),
        reply(tool_calls(("teleport", {"x": 1}))),
        reply(tool_calls(("click", {"x": round(x), "y": round(y)}))),
    ]
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-test")
    with FakeChatServer(scripted(*script)) as fake:
        out = command(
            "agent", "run", "--protocol", "openai-tools", "--model", "fake-model", "--base-url", fake.url,
            "--api-key-env", "TEST_MODEL_KEY", "--split", "test", "--limit", "1", "--name", "harness",
        )  # fmt: skip
    assert out.strip().endswith("agent: 1/1 correct")
    attempt = Attempt.objects.get(puzzle=puzzle)
    run = AgentRun.objects.get(name="harness")
    assert attempt.participant.kind == Participant.Kind.AGENT and attempt.participant == run.participant
    assert attempt.correct and attempt.events.filter(kind="pointerdown").exists() and attempt.rollout.run == run
    assert len(fake.requests) == 3
    request = fake.requests[-1]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "fake-model"
    tool_results = [m["content"] for m in request["body"]["messages"] if m["role"] == "tool"]
    assert tool_results == ["Screenshot captured. See the image below.", "unknown action: teleport"]
    image_url = request["body"]["messages"][-1]["content"][1]["image_url"]["url"]
    png = base64.b64decode(image_url.split(",", 1)[1])
    assert Image.open(io.BytesIO(png)).size == (1280, 1080)


def test_an_agent_gets_at_most_its_step_limit(puzzles_of):
    puzzle = puzzles_of("Dice_Count")[0]
    with FakeChatServer(scripted(then=reply(tool_calls(("screenshot", {}))))) as fake:
        out = command(
            "agent", "run", "--protocol", "openai-tools", "--model", "m", "--base-url", fake.url,
            "--split", "test", "--limit", "1", "--max-steps", "15",
        )  # fmt: skip
    assert len(fake.requests) == 15
    assert out.strip().endswith("agent: 0/1 correct")
    assert Attempt.objects.get(puzzle=puzzle).submitted_at is None
    rollout = Rollout.objects.get(puzzle=puzzle)
    assert (rollout.status, rollout.end, rollout.steps) == ("done", "submit_not_clicked", 15)


def test_replay_of_unverified_puzzles_only_skips_what_is_verified(puzzles_of):
    first, second = puzzles_of("Dice_Count", "Geometry_Click")
    Puzzle.objects.filter(pk=first.pk).update(status=Puzzle.Status.VERIFIED)
    out = command("replay", "--split", "test", "--unverified")
    assert out.strip().endswith("replay: 1/1 verified")
    assert ReplayCheck.objects.filter(puzzle=second).count() == 1 and not ReplayCheck.objects.filter(puzzle=first)
    again = command("replay", "--split", "test", "--unverified")
    assert again.strip().endswith("replay: 0/0 verified (every chosen puzzle is already verified)")
