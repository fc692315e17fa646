"""captchaarena-native end to end: CaptchaAgent's evaluation, against XML-only fake model servers."""

from urllib.parse import unquote

import pytest

from annotation.models import AgentRun, Attempt, Rollout
from puzzles.registry import get_type, type_names
from tests.agents.conftest import command
from tests.agents.fakes import PAGE_IN_PROMPT, FakeChatServer, text_reply, xml_call

pytestmark = pytest.mark.browser


def solver(solutions: dict[tuple[str, str], list[dict]]):
    """A model that answers in XML only (no tool_calls), one action of the puzzle's solution per
    reply; it knows the puzzle from the page URL the system prompt names."""
    served: dict[tuple[str, str], int] = {}

    def respond(body):
        page = PAGE_IN_PROMPT.search(body["messages"][0]["content"])
        key = (page.group(1), unquote(page.group(2)))
        step = served.get(key, 0)
        served[key] = step + 1
        actions = solutions[key]
        if step >= len(actions):
            return text_reply("The puzzle is solved.")
        action = actions[step]
        return text_reply(xml_call(action["action"], action["arguments"], thinking=f"Step {step}: I see the page."))

    return respond


def solutions_of(puzzles) -> dict[tuple[str, str], list[dict]]:
    """Each puzzle's reference answer in stage coordinates, as the replay plays it, under the
    names the published layout gives it (one puzzle per type: <Type>_1, the image's file name)."""
    out = {}
    for puzzle in puzzles:
        kind = get_type(puzzle.type)
        main = puzzle.assets.get(key=puzzle.public["image"]).file.name
        out[(f"{puzzle.type}_1", puzzle.source_id + main[main.rfind(".") :])] = kind.compile_actions(
            puzzle.truth, kind.layout(puzzle.public)
        )
    return out


def test_an_xml_only_model_that_writes_the_solution_solves_every_type(puzzles_of, client_checkout):
    puzzles = puzzles_of()
    assert len(puzzles) == len(type_names()) == 20
    with FakeChatServer(solver(solutions_of(puzzles))) as fake:
        out = command(
            "agent", "run", "--protocol", "captchaarena-native", "--model", "captcha-agent",
            "--base-url", fake.url, "--captchaarena-client", str(client_checkout),
            "--split", "test", "--workers", "4", "--name", "native",
        )  # fmt: skip
    assert out.strip().endswith("agent: 20/20 correct"), out
    run = AgentRun.objects.get(name="native")
    assert run.counts()["done"] == 20 and run.counts()["correct"] == 20
    assert all(b.get("tools") is None and b["max_tokens"] == 12000 for b in fake.bodies)
    assert Attempt.objects.filter(participant=run.participant, correct=True).count() == 20
    for rollout in Rollout.objects.filter(run=run).select_related("attempt"):
        assert rollout.attempt.correct and rollout.end == "done" and rollout.reason == "submitted"
        assert rollout.attempt.input_ok  # real pointer and key input behind every action
