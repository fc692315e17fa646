"""The replay command and the agent harness, end to end in real Chromium."""

import base64
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from PIL import Image

from annotation.agents.harness import MAX_TURNS
from annotation.models import Attempt, Participant
from puzzles.models import Puzzle, ReplayCheck
from puzzles.registry import get_type

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


class FakeChatServer:
    """A chat-completions server that answers with scripted assistant messages, and keeps requests."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append((self.path, self.headers.get("Authorization"), body))
                message = owner.script.pop(0) if owner.script else {"role": "assistant", "content": "no idea"}
                payload = json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def close(self):
        self.server.shutdown()


def tool_call(name: str, **arguments) -> dict:
    call = {"id": f"c{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_openai_provider_solves_through_the_page_and_is_scored_like_a_person(puzzles_of, monkeypatch):
    puzzle = puzzles_of("Geometry_Click")[0]
    x, y = get_type(puzzle.type).layout(puzzle.public).image.to_stage(*puzzle.truth["point"])
    fake = FakeChatServer(
        [tool_call("screenshot"), tool_call("teleport", x=1), tool_call("click", x=round(x), y=round(y))]
    )
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-test")
    try:
        out = command(
            "agent",
            "run",
            "--provider",
            "openai",
            "--model",
            "fake-model",
            "--base-url",
            fake.url,
            "--api-key-env",
            "TEST_MODEL_KEY",
            "--split",
            "test",
            "--limit",
            "1",
        )
    finally:
        fake.close()
    assert out.strip().endswith("agent: 1/1 correct")
    attempt = Attempt.objects.get(puzzle=puzzle)
    assert attempt.participant.kind == Participant.Kind.AGENT and attempt.participant.label == "openai:fake-model"
    assert attempt.correct and attempt.events.filter(kind="pointerdown").exists()
    assert len(fake.requests) == 3
    path, auth, body = fake.requests[-1]
    assert path == "/v1/chat/completions" and auth == "Bearer sk-test" and body["model"] == "fake-model"
    assert {t["function"]["name"] for t in body["tools"]} == {"screenshot", "click", "drag", "hold", "type_text"}
    tool_results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert tool_results == ["ok", "error: unknown tool 'teleport'"]
    image_url = body["messages"][-1]["content"][1]["image_url"]["url"]
    png = base64.b64decode(image_url.split(",", 1)[1])
    assert Image.open(io.BytesIO(png)).size == (1280, 1080)


def test_an_agent_gets_at_most_fifteen_turns(puzzles_of):
    puzzle = puzzles_of("Dice_Count")[0]
    fake = FakeChatServer([tool_call("screenshot")] * 40)
    try:
        out = command(
            "agent",
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            fake.url,
            "--split",
            "test",
            "--limit",
            "1",
        )
    finally:
        fake.close()
    assert len(fake.requests) == MAX_TURNS
    assert out.strip().endswith("agent: 0/1 correct")
    assert Attempt.objects.get(puzzle=puzzle).submitted_at is None


def test_the_replay_provider_runs_rollouts_as_agent_attempts(puzzles_of):
    puzzles_of("Slide_Puzzle", "Rotation_Match")
    out = command("agent", "run", "--provider", "replay", "--split", "test", "--limit", "1", "--rollouts", "2")
    assert out.strip().endswith("agent: 4/4 correct")
    assert Attempt.objects.filter(participant__kind="agent", correct=True).count() == 4


def test_replay_of_unverified_puzzles_only_skips_what_is_verified(puzzles_of):
    first, second = puzzles_of("Dice_Count", "Geometry_Click")
    Puzzle.objects.filter(pk=first.pk).update(status=Puzzle.Status.VERIFIED)
    out = command("replay", "--split", "test", "--unverified")
    assert out.strip().endswith("replay: 1/1 verified")
    assert ReplayCheck.objects.filter(puzzle=second).count() == 1 and not ReplayCheck.objects.filter(puzzle=first)
    again = command("replay", "--split", "test", "--unverified")
    assert again.strip().endswith("replay: 0/0 verified (every chosen puzzle is already verified)")
