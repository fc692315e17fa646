"""What a training job depends on, against a real `env serve`: every step answered within its
bound and by its own answer, groups of a run that never hand one job another's puzzles, tokens
held to their splits and sessions, revocation that closes the socket, idle time counted from the
last reset or step, frames parsed safely, and the verdict beside the reward.

Frames are written by hand here where the published 0.3.0 client cannot send them (a timeout_s,
a nested or NUL-bearing frame); tests/environment/test_openenv10.py speaks through OpenEnv 0.10's."""

import asyncio
import json
import time
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.utils import timezone
from openenv.core import GenericEnvClient
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from annotation.environment.protocol import STEP_BOUND_S
from annotation.models import EnvGroup, EnvToken, Rollout, Slot, Study
from puzzles.services import bank_generate

pytestmark = pytest.mark.browser
CEILING_S = 60.0  # a wait with a generous ceiling: the test asserts what happens, never how fast


def ws_url(base: str) -> str:
    return f"{base}/ws".replace("http://", "ws://")


async def ask(socket, kind: str, data: dict | None = None) -> dict:
    await socket.send(json.dumps({"type": kind, "data": data or {}}))
    return json.loads(await socket.recv())


def test_a_step_answers_within_its_bound_or_is_refused_and_the_next_gets_its_own_answer(env_server, bank, key):
    (puzzle,) = bank("Geometry_Click")
    url = ws_url(f"{env_server()}/{key()}")

    async def play():
        async with connect(url, max_size=None) as socket:
            await ask(socket, "reset", {"puzzle": puzzle.uid})
            hold = {"action": "hold", "arguments": {"x": 5, "y": 5, "duration_ms": 60000}}
            long_hold = await ask(socket, "step", hold)
            short = {"action": "hold", "arguments": {"x": 5, "y": 5, "duration_ms": 4000}, "timeout_s": 5}
            over_timeout = await ask(socket, "step", short)
            click = await ask(socket, "step", {"action": "click", "arguments": {"x": 3, "y": 3}, "timeout_s": 5})
            shot = await ask(socket, "step", {"action": "screenshot"})
            bad_timeout = await ask(socket, "step", {"action": "screenshot", "timeout_s": -1})
            return long_hold, over_timeout, click, shot, bad_timeout

    long_hold, over_timeout, click, shot, bad_timeout = asyncio.run(play())
    assert long_hold["type"] == "error" and long_hold["data"]["code"] == "VALIDATION_ERROR"
    assert long_hold["data"]["message"] == (
        f"hold waits 60.8 s by the published timings, and this step must answer within {STEP_BOUND_S:g} s with 3 s"
        " for the page: nothing was done; hold for at most 26200 ms, or split the hold"
    )
    assert over_timeout["data"]["message"].startswith("hold waits 4.8 s by the published timings, and this step")
    assert "within 5 s (its timeout_s)" in over_timeout["data"]["message"]
    # each answer is its own step's: the click is step 1 (the refusals did nothing), the screenshot step 2
    assert click["type"] == "observation" and click["data"]["observation"]["step"] == 1
    assert click["data"]["observation"]["result"] == "clicked (3, 3) button=left"
    assert shot["data"]["observation"]["step"] == 2 and shot["data"]["observation"]["result"] == "screenshot_taken"
    assert bad_timeout["data"] == {
        "message": "step timeout_s must be a number of seconds above 0, not -1",
        "code": "VALIDATION_ERROR",
    }
    assert Rollout.objects.get().turns.count() == 2


def test_two_jobs_with_the_same_group_names_get_their_own_puzzles_and_a_group_keeps_its_filters(env_server, bank, key):
    bank("Geometry_Click", "Dice_Count", "Bingo", "Hold_Button")
    base = f"{env_server()}/{key()}"

    async def job(checkpoint: str) -> list[str]:
        async with GenericEnvClient(base_url=base) as env:
            puzzles = []
            for number in range(2):
                for _ in range(2):
                    await env.reset(group=f"round-{number}", checkpoint=checkpoint, split="test")
                    puzzles.append((await env.state())["puzzle"])
            return puzzles

    async def refused() -> list[str]:
        async with GenericEnvClient(base_url=base) as env:
            errors = []
            for asked in ({"split": "train"}, {"type": "Bingo"}):
                with pytest.raises(RuntimeError) as refusal:
                    await env.reset(group="round-0", checkpoint="job-a", **asked)
                errors.append(str(refusal.value))
            await env.reset(group="round-0", checkpoint="job-a")  # no filters: the group's own
            return errors

    first = asyncio.run(job("job-a"))
    second = asyncio.run(job("job-b"))
    assert first[0] == first[1] and first[2] == first[3] and second[0] == second[1] and second[2] == second[3]
    assert len({first[0], first[2], second[0], second[2]}) == 4  # four groups in use, four puzzles
    errors = asyncio.run(refused())
    assert errors == [
        "Server error: group 'round-0' was drawn with split='test'; this reset asks split='train': send the group's"
        " filters (or none), or name another group (code: VALIDATION_ERROR)",
        "Server error: group 'round-0' was drawn with split='test'; this reset asks type='Bingo': send the group's"
        " filters (or none), or name another group (code: VALIDATION_ERROR)",
    ]
    # A group unused for GROUP_IDLE_S is over: its name draws anew, with the filters of its new first reset.
    EnvGroup.objects.update(used_at=timezone.now() - timedelta(hours=1))

    async def later() -> str:
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(group="round-0", checkpoint="job-a", type="Bingo")
            return (await env.state())["type"]

    assert asyncio.run(later()) == "Bingo"
    assert EnvGroup.objects.get(run__name="env trainer: job-a", name="round-0").filters == {"type": "Bingo"}


def test_a_token_draws_only_from_its_splits_and_warns_when_studies_use_them(env_server, bank, key, capsys):
    (studied,) = bank("Dice_Count")
    bank_generate(split="train", per_type=1, types=["Dice_Count"], bank_seed=11, start=5, workers=1)
    study = Study.objects.create(name="Baseline", split="test", puzzles_per_annotator=1)
    Slot.objects.create(study=study, puzzle=studied, copy=0, rank=0)
    base = f"{env_server()}/{key(splits=('train',))}"

    async def tries():
        async with GenericEnvClient(base_url=base) as env:
            errors = []
            for asked in ({"split": "test"}, {"puzzle": studied.uid}):
                with pytest.raises(RuntimeError) as refusal:
                    await env.reset(**asked)
                errors.append(str(refusal.value))
            await env.reset()
            return errors, (await env.state())["split"]

    errors, split = asyncio.run(tries())
    assert errors == [
        "Server error: this token serves split train, not 'test' (code: VALIDATION_ERROR)",
        f"Server error: no puzzle '{studied.uid}' in this token's datasets and splits (code: VALIDATION_ERROR)",
    ]
    assert split == "train"
    call_command("env", "token", "lab-b", "--datasets", "generated:11", "--splits", "train")
    assert "warning" not in capsys.readouterr().err
    call_command("env", "token", "lab-c", "--datasets", "generated:11", "--splits", "train", "test")
    warned = capsys.readouterr().err
    assert warned.startswith("warning: this token reaches puzzles that studies use: 'Baseline' (1).")


def test_a_token_holds_at_most_its_sessions(env_server, bank, key):
    bank("Dice_Count")
    base = f"{env_server(sessions=4)}/{key(sessions=1)}"

    async def two():
        async with GenericEnvClient(base_url=base) as first:
            await first.reset()
            second = GenericEnvClient(base_url=base)
            await second.connect()
            with pytest.raises(RuntimeError) as refused:
                await second.reset()
            await second.close()
            return str(refused.value)

    assert asyncio.run(two()) == (
        "Server error: Token at capacity: 1/1 of its sessions are open on this server. Close one before opening"
        " another. (code: CAPACITY_REACHED)"
    )


def test_revoking_a_token_closes_its_open_socket_and_ends_its_episode(env_server, bank, key):
    (puzzle,) = bank("Dice_Count")
    url = ws_url(f"{env_server()}/{key()}")
    revoke = sync_to_async(lambda: EnvToken.objects.update(revoked_at=timezone.now()))

    async def revoked():
        async with connect(url, max_size=None) as socket:
            await ask(socket, "reset", {"puzzle": puzzle.uid})
            await revoke()
            told = None
            deadline = time.monotonic() + CEILING_S
            while time.monotonic() < deadline:  # the client sends nothing: the server closes on its own
                try:
                    told = json.loads(await asyncio.wait_for(socket.recv(), timeout=1))
                except TimeoutError:
                    continue
                except ConnectionClosed:
                    break
            await asyncio.wait_for(socket.wait_closed(), 5)
            return told, socket.close_code

    told, code = asyncio.run(revoked())
    assert told == {"type": "error", "data": {"message": "this token was revoked: the session is closed",
                                              "code": "SESSION_ERROR"}}  # fmt: skip
    assert code == 4403
    # The server ends the episode as it closes the socket: its write may land after the close is seen.
    deadline = time.monotonic() + CEILING_S
    while Rollout.objects.get().status == Rollout.Status.PENDING and time.monotonic() < deadline:
        time.sleep(0.1)
    rollout = Rollout.objects.get()
    assert rollout.status == Rollout.Status.FAILED and rollout.reason == "closed: the token was revoked"


def test_state_frames_do_not_keep_an_idle_session_alive(env_server, bank, key):
    (puzzle,) = bank("Dice_Count")
    url = ws_url(f"{env_server(idle_timeout=3)}/{key()}")

    async def pinging():
        async with connect(url, max_size=None) as socket:
            await ask(socket, "reset", {"puzzle": puzzle.uid})
            deadline = time.monotonic() + CEILING_S
            while time.monotonic() < deadline:
                answer = await ask(socket, "state")
                if answer["type"] == "error":
                    return answer["data"]
                await asyncio.sleep(0.5)
            return None

    assert asyncio.run(pinging()) == {"message": "idle for 3 s", "code": "SESSION_ERROR"}
    assert Rollout.objects.get().reason == "closed: idle for 3 s"


def test_frames_too_deep_or_holding_a_nul_get_openenvs_errors_and_the_session_goes_on(env_server, bank, key):
    (puzzle,) = bank("Dice_Count")
    url = ws_url(f"{env_server()}/{key()}")

    async def frames():
        async with connect(url, max_size=None) as socket:
            answers = []
            for text in (
                '{"type": "step", "data": ' + "[" * 20_000 + "]" * 20_000 + "}",
                json.dumps({"type": "reset", "data": {"puzzle": puzzle.uid, "checkpoint": "step\x00-1"}}),
                json.dumps({"type": "reset", "data": {"puzzle": puzzle.uid, "step\x00": 1}}),
                "{nope",
            ):
                await socket.send(text)
                answers.append(json.loads(await socket.recv())["data"])
            after = await ask(socket, "reset", {"puzzle": puzzle.uid})
            return answers, after

    answers, after = asyncio.run(frames())
    assert answers == [
        {"message": "Invalid JSON: nested deeper than 8 levels", "code": "INVALID_JSON"},
        {"message": "a text in the frame holds a NUL character (U+0000): nothing was done", "code": "VALIDATION_ERROR"},
        {"message": "a text in the frame holds a NUL character (U+0000): nothing was done", "code": "VALIDATION_ERROR"},
        {"message": "Invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
         "code": "INVALID_JSON"},
    ]  # fmt: skip
    assert after["type"] == "observation" and Rollout.objects.count() == 1


def test_the_verdict_is_beside_the_reward(env_server, bank, key):
    (puzzle,) = bank("Dice_Count")
    base = f"{env_server()}/{key()}"

    async def play():
        async with GenericEnvClient(base_url=base) as env:
            first = await env.reset(puzzle=puzzle.uid)
            ended = await env.step({"action": "done"})
            return first.observation["verdict"], ended.observation["verdict"], ended.reward

    assert asyncio.run(play()) == ("", "unanswered", 0.0)
