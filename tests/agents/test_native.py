"""captchaarena-native end to end: CaptchaAgent's evaluation, against XML-only fake model servers."""

from urllib.parse import unquote

import pytest

from annotation.models import AgentRun, Attempt, Rollout
from puzzles.registry import get_type, type_names
from tests.agents.conftest import command
from tests.agents.fakes import PAGE_IN_PROMPT, FakeChatServer, first_user_text, images_in, text_reply, xml_call

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


def test_a_native_request_is_the_published_one(puzzles_of, prompt_file):
    (puzzle,) = puzzles_of("Dice_Count")
    corner = xml_call("click", {"x": 5, "y": 5}, thinking="The corner first.")
    replies = [
        text_reply(corner),
        text_reply(xml_call("screenshot", {}, thinking="Let me look.")),
        text_reply("<function=click ><parameter=x>9</parameter></function>"),  # a near miss: no call
    ]
    with FakeChatServer(lambda body: replies.pop(0)) as fake:
        out = command(
            "agent", "run", "--protocol", "captchaarena-native", "--model", "captcha-agent", "--base-url", fake.url,
            "--system-prompt-file", str(prompt_file), "--split", "test", "--name", "shape",
        )  # fmt: skip
    assert out.strip().endswith("agent: 0/1 correct")
    first, second, third = fake.bodies
    assert set(first) == {"model", "max_tokens", "messages"}  # no tools, no tool_choice, no sampling parameters
    assert first["max_tokens"] == 12000 and first["model"] == "captcha-agent"
    system, user = first["messages"]
    assert system["role"] == "system" and system["content"].encode("utf-8") == prompt_file.read_bytes()
    assert user["content"][0] == {
        "type": "text",
        "text": f"Here is the current state of the browser. Solve this puzzle: {puzzle.public['instruction']}",
    }
    image = user["content"][1]
    assert image["type"] == "image_url" and set(image["image_url"]) == {"url"}
    assert image["image_url"]["url"].startswith("data:image/png;base64,")
    assert second["messages"][2] == {"role": "assistant", "content": corner}  # verbatim
    assert second["messages"][3]["content"][0]["text"] == (
        "Action executed: clicked (5, 5) button=left. Here is the updated screenshot:"
    )
    assert third["messages"][5]["content"][0]["text"] == "Here is the updated screenshot:"
    assert [images_in(b) for b in fake.bodies] == [1, 2, 3]
    rollout = Rollout.objects.get(run__name="shape")
    assert (rollout.status, rollout.end, rollout.reason, rollout.steps) == ("done", "submit_not_clicked", "no call", 2)
    assert rollout.system_prompt.encode("utf-8") == prompt_file.read_bytes()
    assert rollout.instruction == puzzle.public["instruction"] == first_user_text(first).split(": ", 1)[1]
    turns = list(rollout.turns.all())
    assert turns[1].request[0] == {"role": "system", "ref": "system_prompt"}
    assert turns[1].request[2] == {"role": "assistant", "ref": "turn:0"}
    assert turns[1].request[1]["content"][1] == {"type": "image_url", "image_url": {"url": "screenshot:0"}}
    assert turns[0].calls[0]["result"] == "clicked (5, 5) button=left" and turns[0].calls[0]["screenshot"] == 1
    assert turns[2].calls == [] and turns[2].reply["content"].startswith("<function=click >")


def test_folding_sends_at_most_twenty_screenshots(puzzles_of, prompt_file):
    puzzles_of("Bingo")
    look = text_reply(xml_call("screenshot", {}))
    with FakeChatServer(lambda body: look) as fake:
        command(
            "agent", "run", "--protocol", "captchaarena-native", "--model", "m", "--base-url", fake.url,
            "--system-prompt-file", str(prompt_file), "--split", "test", "--context", "fold", "--max-steps", "32",
        )  # fmt: skip
    sent = [images_in(body) for body in fake.bodies]
    assert len(sent) == 32 and max(sent) == 20
    # 21 screenshots: the oldest 10 folded; 31: the oldest 20. Each fold moves the boundary by 10.
    assert sent == [*range(1, 21), *range(11, 21), 11, 12]
    assert all(first_user_text(body).startswith("Here is the current state") for body in fake.bodies)  # nothing cut
