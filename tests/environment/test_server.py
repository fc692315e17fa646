"""The environment server's doors: tokens in the path, datasets per token, OpenEnv's HTTP
endpoints, and an idle session closed with nothing lost."""

import asyncio
import json
import time
import urllib.error
import urllib.request

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from openenv.core import GenericEnvClient
from websockets.asyncio.client import connect

from annotation.environment.tokens import key_hash
from annotation.models import EnvToken, Rollout

pytestmark = pytest.mark.browser


def http(method: str, url: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def episode_closed(ceiling_s: float = 60) -> None:
    """Until the server has ended the (one) episode, or a generous ceiling passes."""
    deadline = time.monotonic() + ceiling_s
    status = sync_to_async(lambda: Rollout.objects.get().status)
    while await status() == Rollout.Status.PENDING and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


def test_env_token_prints_a_key_and_keeps_only_its_hash(bank, capsys):
    bank("Geometry_Click")
    call_command("env", "token", "lab-a", "--datasets", "generated:11", "--splits", "test")
    key = capsys.readouterr().out.split()[-1]
    token = EnvToken.objects.get(name="lab-a")
    assert token.key_hash == key_hash(key) and key not in str(EnvToken.objects.values().get())
    assert token.datasets == ["generated:11"] and token.splits == ["test"] and token.max_sessions == 4


def test_a_token_serves_its_own_datasets_and_nothing_once_revoked(env_server, bank, key):
    (mine,) = bank("Geometry_Click")
    (theirs,) = bank("Geometry_Click", seed=12)
    server = env_server()
    base = f"{server}/{key()}"

    async def tries():
        async with GenericEnvClient(base_url=base) as env:
            errors = []
            for asked in ({"puzzle": theirs.uid}, {"dataset": "generated:12"}, {"type": "Bingo"}, {"colour": "red"}):
                with pytest.raises(RuntimeError) as refused:
                    await env.reset(**asked)
                errors.append(str(refused.value))
            drawn = await env.reset(seed=3)
            return errors, drawn, await env.state()

    errors, drawn, state = asyncio.run(tries())
    assert errors == [
        f"Server error: no puzzle '{theirs.uid}' in this token's datasets and splits (code: VALIDATION_ERROR)",
        "Server error: this token serves generated:11, not 'generated:12' (code: VALIDATION_ERROR)",
        "Server error: no puzzle matches this reset's pool and curriculum (code: VALIDATION_ERROR)",
        "Server error: reset takes type, dataset, split, puzzle, group, checkpoint, episode_id, mined_from,"
        " people_solvable, seed, max_steps, mined_last, verified_only, valid_only, human_pass_min, human_pass_max;"
        " not colour"
        " (code: VALIDATION_ERROR)",
    ]
    assert state["puzzle"] == mine.uid and not drawn.done
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("admin", is_staff=True, is_superuser=True))
    token = EnvToken.objects.get()
    staff.post("/admin/annotation/envtoken/", {"action": "revoke", "_selected_action": [token.pk]})
    assert EnvToken.objects.get().revoked_at is not None

    async def revoked():
        with pytest.raises(ConnectionError):
            await GenericEnvClient(base_url=base).connect()

    asyncio.run(revoked())
    assert http("GET", f"{base}/state") == (403, {"detail": "unknown or revoked token"})
    assert http("GET", f"{base}/schema")[0] == 200  # what describes the environment is public
    assert http("GET", f"{server}/not-a-token/state")[0] == 403


def test_a_token_revoked_or_narrowed_while_connected_starts_no_more_episodes(env_server, bank, key):
    (mine,) = bank("Geometry_Click")
    (theirs,) = bank("Geometry_Click", seed=12)
    base = f"{env_server()}/{key()}"
    token = EnvToken.objects.filter(pk=EnvToken.objects.get().pk)
    change = sync_to_async(token.update)

    async def connected():
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(group="g", seed=1)
            await change(datasets=["generated:12"])  # staff narrow it while the socket stays open
            errors = []
            for asked in ({"puzzle": mine.uid}, {"group": "g"}):
                with pytest.raises(RuntimeError) as refused:
                    await env.reset(**asked)
                errors.append(str(refused.value))
            await env.reset(seed=1)
            narrowed = await env.state()
            await change(revoked_at=timezone.now())
            with pytest.raises(RuntimeError) as revoked:
                await env.reset(seed=1)
            return errors, narrowed["puzzle"], str(revoked.value)

    errors, narrowed, revoked = asyncio.run(connected())
    assert errors == [
        f"Server error: no puzzle '{mine.uid}' in this token's datasets and splits (code: VALIDATION_ERROR)",
        "Server error: group 'g' plays a puzzle of generated:11, split test, not served any more"
        " (code: VALIDATION_ERROR)",
    ]
    assert narrowed == theirs.uid
    assert revoked == "Server error: this token was revoked: it starts no more episodes (code: SESSION_ERROR)"


def test_a_refused_reset_leaves_the_episode_under_way_going_on(env_server, bank, key):
    (puzzle,) = bank("Geometry_Click")
    base = f"{env_server()}/{key()}"

    async def play():
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(puzzle=puzzle.uid)
            await env.step({"action": "screenshot"})
            for refused in ({"dataset": "generated:12"}, {"type": "Bingo"}):
                with pytest.raises(RuntimeError):
                    await env.reset(**refused)
            after = await env.step({"action": "screenshot"})
            return after, await env.state()

    after, state = asyncio.run(play())
    assert not after.done and after.observation["step"] == 2 and state["step_count"] == 2
    rollout = Rollout.objects.get()  # no second episode begun, the first not cut short
    assert state["rollout"] == rollout.pk and rollout.turns.count() == 2


def test_openenvs_http_endpoints(env_server, bank, key):
    (puzzle,) = bank("Geometry_Click")
    server = env_server()
    base = f"{server}/{key()}"
    assert http("GET", f"{server}/health") == (200, {"status": "healthy"})
    assert http("GET", f"{base}/health") == (200, {"status": "healthy"})
    status, schema = http("GET", f"{base}/schema")
    assert status == 200 and set(schema) == {"action", "observation", "state"}
    actions = schema["action"]["properties"]["action"]["enum"]
    assert actions == ["click", "drag", "type_text", "hold", "screenshot", "done"]
    assert http("GET", f"{base}/state") == (200, {"episode_id": None, "step_count": 0})
    status, first = http("POST", f"{base}/reset", {"puzzle": puzzle.uid, "seed": 1})
    assert status == 200 and set(first) == {"observation", "reward", "done"} and first["done"] is False
    assert first["observation"]["instruction"] and first["observation"]["screenshot"]
    bad = http("POST", f"{base}/step", {"action": {"action": "click", "arguments": {"x": -1, "y": 0}}})
    assert bad == (422, {"detail": "click x must be a whole number of stage pixels, 0 to 1279, not -1"})
    status, answer = http("POST", f"{base}/step", {"action": {"action": "click", "arguments": {"x": 1, "y": 1}}})
    assert status == 409 and "WebSocket" in answer["detail"]
    rollout = Rollout.objects.get()  # the HTTP reset's episode, closed at once and kept as such
    assert rollout.status == Rollout.Status.FAILED and rollout.reason.startswith("closed: HTTP reset is stateless")


def test_an_idle_session_is_closed_and_its_episode_kept(env_server, bank, key):
    (puzzle,) = bank("Geometry_Click")
    base = f"{env_server(idle_timeout=3)}/{key()}"

    async def idle():
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(puzzle=puzzle.uid)
            await env.step({"action": "screenshot"})
            await episode_closed()  # by the server, once idle: its error frame is on its way
            with pytest.raises(RuntimeError) as closed:
                await env.step({"action": "screenshot"})
            return str(closed.value)

    assert asyncio.run(idle()) == "Server error: idle for 3 s (code: SESSION_ERROR)"
    rollout = Rollout.objects.get()
    assert rollout.status == Rollout.Status.FAILED and rollout.reason == "closed: idle for 3 s"
    assert rollout.turns.count() == 1  # what was done before stays


def test_a_client_that_vanishes_loses_nothing_already_stored(env_server, bank, key):
    (puzzle,) = bank("Geometry_Click")
    url = f"{env_server()}/{key()}/ws".replace("http://", "ws://")

    async def vanish():
        async with connect(url, max_size=None) as socket:
            reset = {"type": "reset", "data": {"puzzle": puzzle.uid}}
            for message in (reset, {"type": "step", "data": {"action": "screenshot"}}):
                await socket.send(json.dumps(message))
                assert json.loads(await socket.recv())["type"] == "observation"
            socket.transport.abort()  # no close frame: the trainer's machine is gone

    asyncio.run(vanish())
    deadline = time.monotonic() + 10
    while Rollout.objects.get().status == Rollout.Status.PENDING and time.monotonic() < deadline:
        time.sleep(0.2)
    rollout = Rollout.objects.get()
    assert rollout.status == Rollout.Status.FAILED and rollout.reason == "closed: the client went away"
    assert rollout.turns.count() == 1 and rollout.instruction  # the step it made, and the page's instruction
