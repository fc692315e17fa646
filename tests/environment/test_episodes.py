"""Episodes through openenv-core's own GenericEnvClient against a real `manage.py env serve`:
the verifier's partial and zero rewards, clear errors for bad actions, the capacity error."""

import asyncio
import io

import pytest
from django.core.management import call_command
from openenv.core import GenericEnvClient

from annotation.models import Rollout
from puzzles.registry import get_type

pytestmark = pytest.mark.browser
OBSERVATION_KEYS = {"screenshot", "instruction", "step", "max_steps", "result", "ended", "verdict"}


def test_a_wrong_answer_earns_the_verifiers_partial_reward_and_bad_actions_a_clear_error(env_server, bank, key):
    (puzzle,) = bank("Geometry_Click")
    base = f"{env_server()}/{key()}"
    image = get_type(puzzle.type).layout(puzzle.public).main.rect
    x, y = get_type(puzzle.type).layout(puzzle.public).main.to_stage(*puzzle.truth["point"])
    # On the image, as far from the truth's point as it goes: the page takes it, the verifier does not.
    far_x = image.x + 2 if x > image.x + image.w / 2 else image.x + image.w - 2
    far_y = image.y + 2 if y > image.y + image.h / 2 else image.y + image.h - 2
    wrong = {"action": "click", "arguments": {"x": round(far_x), "y": round(far_y)}}

    async def play():
        errors = []
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(puzzle=puzzle.uid)
            for bad in (
                {"action": "click", "arguments": {"x": 10}},
                {"action": "click", "arguments": {"x": 1280, "y": 10}},
                {"action": "teleport", "arguments": {}},
                {"action": "hold", "arguments": {"x": 1, "y": 1, "duration_ms": "long"}},
                {"click": {"x": 1, "y": 1}},
            ):
                with pytest.raises(RuntimeError) as raised:
                    await env.step(bad)
                errors.append(str(raised.value))
            state = await env.state()
            last = await env.step(wrong)
            with pytest.raises(RuntimeError) as over:
                await env.step({"action": "screenshot"})
            return errors, state, last, str(over.value)

    errors, state, last, over = asyncio.run(play())
    assert errors == [
        "Server error: click takes x, y, [button]; missing y (code: VALIDATION_ERROR)",
        "Server error: click x must be a whole number of stage pixels, 0 to 1279, not 1280 (code: VALIDATION_ERROR)",
        "Server error: action must be one of click, drag, type_text, hold, screenshot, done, not 'teleport' "
        "(code: VALIDATION_ERROR)",
        "Server error: hold duration_ms must be a whole number, 0 to 60000, not 'long' (code: VALIDATION_ERROR)",
        'Server error: a step is {"action": NAME, "arguments": {...}, ["timeout_s": seconds]} (code: VALIDATION_ERROR)',
    ]
    assert state["step_count"] == 0 and state["puzzle"] == puzzle.uid  # a refused action is no step
    assert last.done and last.observation["ended"] == "submitted" and last.observation["verdict"] == "incorrect"
    assert set(last.observation) == OBSERVATION_KEYS  # what the page shows, nothing of the truth
    attempt = Rollout.objects.get().attempt
    assert last.reward == attempt.reward < 1.0 and attempt.correct is False  # the server's verdict, as given
    assert over == "Server error: the episode is over: send reset for the next (code: VALIDATION_ERROR)"


def test_done_and_the_step_limit_end_an_episode_unsubmitted_with_reward_zero(env_server, bank, key, tmp_path):
    (puzzle,) = bank("Geometry_Click")
    base = f"{env_server()}/{key()}"

    async def play():
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(puzzle=puzzle.uid, max_steps=2)
            looked = await env.step({"action": "screenshot"})
            limit = await env.step({"action": "screenshot"})
            await env.reset(puzzle=puzzle.uid)
            done = await env.step({"action": "done"})
            return looked, limit, done

    looked, limit, done = asyncio.run(play())
    assert not looked.done and looked.observation["result"] == "screenshot_taken"
    assert limit.done and limit.reward == 0.0 and limit.observation["ended"] == "step limit"
    assert done.done and done.reward == 0.0 and done.observation["ended"] == "done"
    assert [(r.submitted, r.end) for r in Rollout.objects.order_by("pk")] == [(False, "submit_not_clicked")] * 2
    # Recorded like any agent run: the published layout gives each episode of the puzzle its folder.
    call_command("agent", "export", "env trainer: default", str(tmp_path / "out"), stdout=io.StringIO())
    folders = sorted(p.parent.name for p in (tmp_path / "out").glob("geometry_click_1/*/rollout_*/summary.json"))
    assert folders == ["rollout_1", "rollout_2"]


def test_sessions_past_the_cap_get_openenvs_capacity_error(env_server, bank, key):
    bank("Geometry_Click")
    base = f"{env_server(sessions=2)}/{key()}"

    async def crowd():
        first, second = GenericEnvClient(base_url=base), GenericEnvClient(base_url=base)
        async with first, second:
            await first.state()
            await second.state()
            async with GenericEnvClient(base_url=base) as third:
                with pytest.raises(RuntimeError) as refused:
                    await third.reset()
        return str(refused.value)

    assert asyncio.run(crowd()) == (
        "Server error: Server at capacity: 2/2 sessions active. Cannot accept new connections. (code: CAPACITY_REACHED)"
    )
