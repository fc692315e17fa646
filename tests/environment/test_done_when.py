"""The issue's done-when, through openenv-core's own GenericEnvClient against a real
`manage.py env serve`: one puzzle of each of the 20 types solved from its truth (reward 1.0, done),
and eight concurrent episodes of one group on one puzzle while another group keeps to its own."""

import asyncio
import base64
import io

import pytest
from openenv.core import GenericEnvClient
from PIL import Image

from annotation.models import AgentRun, Rollout
from puzzles.models import Puzzle
from puzzles.registry import get_type

pytestmark = pytest.mark.browser
OBSERVATION_KEYS = {"screenshot", "instruction", "step", "max_steps", "result", "ended", "verdict"}


def truth_actions(puzzle: Puzzle) -> list[dict]:
    """The reference answer as actions: read here, server-side, as the replay verifier does."""
    kind = get_type(puzzle.type)
    return kind.compile_actions(puzzle.truth, kind.layout(puzzle.public))


def png_size(observation: dict) -> tuple[int, int]:
    return Image.open(io.BytesIO(base64.b64decode(observation["screenshot"]))).size


async def solve(base: str, puzzle: Puzzle, actions: list[dict]) -> list:
    async with GenericEnvClient(base_url=base) as env:
        results = [await env.reset(puzzle=puzzle.uid, checkpoint="step-100")]
        for action in actions:
            results.append(await env.step(action))
        return results


def test_every_type_is_solved_from_its_truth_through_the_published_client(env_server, bank, key):
    puzzles = bank()
    assert len(puzzles) == 20
    base = f"{env_server(sessions=4)}/{key()}"
    plans = [(puzzle, truth_actions(puzzle)) for puzzle in puzzles]

    async def play_all():
        lanes = [plans[lane::4] for lane in range(4)]  # four sessions at once, five puzzles each

        async def lane(mine):
            return [(puzzle, await solve(base, puzzle, actions)) for puzzle, actions in mine]

        return [played for found in await asyncio.gather(*(lane(m) for m in lanes)) for played in found]

    for puzzle, results in asyncio.run(play_all()):
        first, *steps = results
        assert set(first.observation) == OBSERVATION_KEYS and png_size(first.observation) == (1280, 1080)
        assert first.observation["instruction"] and first.reward is None and not first.done
        assert [r.done for r in steps] == [False] * (len(steps) - 1) + [True], puzzle.type
        assert steps[-1].reward == 1.0 and steps[-1].observation["ended"] == "submitted", puzzle.type
        assert steps[-1].observation["verdict"] == "correct" and first.observation["verdict"] == "", puzzle.type
    run = AgentRun.objects.get(name="env trainer: step-100")
    assert run.source == AgentRun.Source.ENVIRONMENT and run.model == "step-100"
    rollouts = Rollout.objects.filter(run=run).select_related("attempt")
    assert rollouts.count() == 20 and sorted(run.puzzles) == sorted(p.pk for p in puzzles)
    for rollout in rollouts:
        assert rollout.status == Rollout.Status.DONE and rollout.correct and rollout.reason == "submitted"
        assert rollout.attempt.reward == 1.0 and rollout.attempt.input_ok  # real input behind every action
        assert rollout.turns.count() == rollout.steps == len(truth_actions(rollout.puzzle))


def test_one_group_gets_one_puzzle_and_groups_never_share_an_episode(env_server, bank, key):
    bank("Geometry_Click", "Dice_Count", "Bingo", "Hold_Button")
    base = f"{env_server(sessions=10)}/{key()}"

    async def episode(group: str, seed: int):
        async with GenericEnvClient(base_url=base) as env:
            await env.reset(group=group, seed=seed, checkpoint="grpo")
            state = await env.state()
            ended = await env.step({"action": "done"})
            return state, ended

    async def groups():
        one = [episode("task-1", seed) for seed in range(8)]  # seeds differ: the group decides
        two = [episode("task-2", seed) for seed in (3, 4)]
        return await asyncio.gather(*one, *two)

    results = asyncio.run(groups())
    states = [state for state, _ in results]
    assert len({s["puzzle"] for s in states[:8]}) == 1 and len({s["puzzle"] for s in states[8:]}) == 1
    assert len({s["rollout"] for s in states}) == 10 and all(ended.done for _, ended in results)
    rollouts = Rollout.objects.filter(run__name="env trainer: grpo")
    assert rollouts.count() == 10 and len({r.attempt_id for r in rollouts}) == 10  # an attempt each
    assert not any(r.attempt.is_submitted for r in rollouts.select_related("attempt"))  # nothing leaked across
    assert sorted(r.index for r in rollouts if r.puzzle.uid == states[0]["puzzle"])[:8] == list(range(8))
