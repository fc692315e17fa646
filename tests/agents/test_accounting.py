"""Honest accounting: retries, failed rollouts left out, no_action counted, one run is one run."""

import pytest

from annotation.models import AgentRun, Rollout, Turn
from annotation.reporting.reports import agents_on
from puzzles.registry import get_type
from tests.agents.conftest import command
from tests.agents.fakes import PAGE_IN_PROMPT, FakeChatServer, reply, text_reply, tool_calls

pytestmark = pytest.mark.browser

ERROR = (500, {"error": {"message": "the GPU fell over"}})


def run_command(fake, *extra) -> str:
    return command(
        "agent", "run", "--protocol", "openai-tools", "--model", "m", "--base-url", fake.url,
        "--split", "test", *extra,
    )  # fmt: skip


def solve_geometry(puzzle):
    x, y = get_type(puzzle.type).layout(puzzle.public).main.to_stage(*puzzle.truth["point"])
    return reply(tool_calls(("click", {"x": round(x), "y": round(y)})))


def test_a_server_error_is_retried_and_the_rollout_goes_on(puzzles_of):
    (puzzle,) = puzzles_of("Geometry_Click")
    answers = [ERROR, solve_geometry(puzzle)]
    with FakeChatServer(lambda body: answers.pop(0)) as fake:
        out = run_command(fake, "--name", "retried")
    assert out.strip().endswith("agent: 1/1 correct"), out
    assert len(fake.requests) == 2 and fake.bodies[0] == fake.bodies[1]  # the same request, again
    rollout = Rollout.objects.get(run__name="retried")
    assert rollout.status == "done" and rollout.correct
    turn = rollout.turns.get()
    assert turn.retries == 1 and turn.tokens_in == 1000 and turn.tokens_out == 50 and turn.latency_ms > 0


def test_rollouts_the_server_keeps_failing_are_failed_and_left_out_of_pass_at_k(puzzles_of, client_checkout):
    dice, geometry = puzzles_of("Dice_Count", "Geometry_Click")

    def respond(body):  # Dice_Count's requests always fail; Geometry_Click is solved
        if "Dice_Count" in PAGE_IN_PROMPT.search(body["messages"][0]["content"]).group(1):
            return ERROR
        return solve_geometry(geometry)

    with FakeChatServer(respond) as fake:
        out = run_command(
            fake, "--captchaarena-client", str(client_checkout), "--rollouts", "2", "--retries", "1", "--name", "half"
        )
    assert out.strip().endswith("agent: 2/2 correct, 2 failed (left out)"), out
    assert "failed rollout" in out and "model server error 500" in out
    failed = Rollout.objects.filter(run__name="half", puzzle=dice)
    assert {r.status for r in failed} == {"failed"} and all("500" in r.reason for r in failed)
    assert all(t.error and t.retries == 1 and t.reply is None for t in Turn.objects.filter(rollout__in=failed))
    (agent,) = agents_on({dice.pk, geometry.pk})
    assert agent["pass_at"] == {"1": 1.0} and agent["rollouts_per_puzzle"] == 2
    assert [row["type"] for row in agent["types"]] == ["Geometry_Click"]
    assert agent["failed"] == 2 and agent["failed_by_type"] == {"Dice_Count": 2} and agent["short_puzzles"] == 1

    with FakeChatServer(lambda body: ERROR) as fake:  # always 500: nothing to score, nothing scored
        out = run_command(fake, "--types", "Dice_Count", "--retries", "0", "--name", "down")
    assert out.strip().endswith("agent: 0/0 correct, 1 failed (left out)"), out
    down = next(a for a in agents_on({dice.pk}) if a["name"] == "down")
    assert down["pass_at"] == {} and down["types"] == [] and down["failed_by_type"] == {"Dice_Count": 1}


def test_a_model_that_never_acts_is_no_action_and_counts_as_not_submitted(puzzles_of, prompt_file):
    (puzzle,) = puzzles_of("Bingo")
    hermes = '<tool_call>\n{"name": "click", "arguments": {"x": 640, "y": 500}}\n</tool_call>'
    with FakeChatServer(lambda body: text_reply(hermes)) as fake:
        out = command(
            "agent", "run", "--protocol", "captchaarena-native", "--model", "m", "--base-url", fake.url,
            "--system-prompt-file", str(prompt_file), "--split", "test", "--name", "silent",
        )  # fmt: skip
    assert out.strip().endswith("agent: 0/1 correct"), out
    assert len(fake.requests) == 1  # the published client stops at the first reply without a call
    rollout = Rollout.objects.get(run__name="silent")
    assert (rollout.status, rollout.submitted, rollout.end) == ("no_action", False, "submit_not_clicked")
    assert rollout.reason == "no usable action (no call)" and rollout.turns.get().calls == []
    (agent,) = agents_on({puzzle.pk})
    assert agent["pass_at"] == {"1": 0.0}  # in the denominator, as published


def test_two_runs_do_not_mix_and_limit_counts_puzzles_in_total(puzzles_of):
    puzzles = puzzles_of("Geometry_Click", "Dice_Count", "Bingo")
    geometry = next(p for p in puzzles if p.type == "Geometry_Click")
    with FakeChatServer(lambda body: solve_geometry(geometry)) as fake:
        first = run_command(fake, "--types", "Geometry_Click", "--name", "first")
    with FakeChatServer(lambda body: text_reply("no idea")) as fake:
        second = run_command(fake, "--limit", "2", "--name", "second")
    assert first.strip().endswith("agent: 1/1 correct") and second.strip().endswith("agent: 0/2 correct")
    assert len(AgentRun.objects.get(name="second").puzzles) == 2
    agents = {a["name"]: a for a in agents_on({p.pk for p in puzzles})}
    assert agents["first"]["pass_at"] == {"1": 1.0} and agents["second"]["pass_at"] == {"1": 0.0}
    assert agents["first"]["rollouts_per_puzzle"] == agents["second"]["rollouts_per_puzzle"] == 1
    first_run, second_run = AgentRun.objects.get(name="first"), AgentRun.objects.get(name="second")
    assert first_run.participant != second_run.participant
    assert first_run.base_url != second_run.base_url and first_run.protocol == "openai-tools"
    assert first_run.started_at and first_run.finished_at and first_run.split == "test"


def test_a_run_resumes_its_failed_rollouts_on_the_same_server(puzzles_of):
    (puzzle,) = puzzles_of("Geometry_Click")
    state = {"up": False}
    with FakeChatServer(lambda body: solve_geometry(puzzle) if state["up"] else ERROR) as fake:
        out = run_command(fake, "--retries", "0", "--name", "flaky")
        assert out.strip().endswith("agent: 0/0 correct, 1 failed (left out)")
        state["up"] = True
        again = command("agent", "run", "--resume", "flaky", "--retry-failed")
    assert again.strip().endswith("agent: 1/1 correct"), again
    rollout = Rollout.objects.get(run__name="flaky")
    assert rollout.status == "done" and rollout.turns.count() == 1  # the failed try is forgotten


def test_the_native_protocol_needs_the_trained_prompt_from_outside(puzzles_of):
    from django.core.management.base import CommandError

    puzzles_of("Bingo")
    with pytest.raises(CommandError, match="system-prompt-file"):
        command("agent", "run", "--protocol", "captchaarena-native", "--model", "m", "--base-url", "http://x/v1",
                "--split", "test")  # fmt: skip
