"""The reasoning fill against fake model servers: a writer, then a judge; only texts that pass both stay."""

import asyncio
import json
import re

from annotation.datasets.reasoning import JUDGE, WRITER, Reasoner, names_coordinates
from tests.agents.fakes import FakeChatServer, text_reply

PNG = b"\x89PNG\r\n\x1a\n stand-in"  # the fake servers never decode the screenshots

TEXTS = {
    1: "I click at (412, 300), where the dashed line from the car stops.",
    2: "The correct answer is 14, so I type it without counting.",
    3: "The car's dashed path ends below the tent, so I place the dot at its end.",
    4: "I press Submit now that the dot sits at the end of the path.",
}


def fake_model(texts: dict[int, str], *, leaks: tuple[str, ...] = ("correct answer",), garbled: int | None = None):
    """Writes TEXTS[step]; judges a text leaking when it holds one of `leaks`."""

    def respond(body: dict):
        system = body["messages"][0]["content"]
        said = body["messages"][1]["content"][0]["text"]
        step = int(re.search(r"Step (\d+) of", said).group(1))
        if system == WRITER:
            return text_reply(texts[step])
        assert system == JUDGE
        if step == garbled:
            return text_reply("Looks fine to me.")
        text = said.split("Reasoning text: ", 1)[1]
        leaking = any(word in text for word in leaks)
        verdict = {"consistent": True, "leaks_answer": leaking, "reason": "states the sum" if leaking else "ok"}
        return text_reply(f"```json\n{json.dumps(verdict)}\n```")

    return respond


def fill(server, count: int) -> list[dict]:
    reasoner = Reasoner(base_url=server.url, model="writer-m", judge_model="judge-m", retries=0)
    steps = [f"did step {n}" for n in range(1, count + 1)]
    return asyncio.run(reasoner.fill_steps(instruction="Click the end of the car's path", shots=[PNG] * 5, steps=steps))


def test_a_text_naming_coordinates_is_dropped_before_it_is_judged_and_only_texts_passing_both_are_kept():
    with FakeChatServer(fake_model(TEXTS, garbled=4)) as server:
        records = fill(server, 4)
        judged = [b for b in server.bodies if b["messages"][0]["content"] == JUDGE]
    by_step = {r["step"]: r for r in records}
    assert (by_step[1]["kept"], by_step[1]["why"]) == (False, "names coordinates")
    assert not by_step[2]["kept"] and by_step[2]["why"].startswith("leaks the answer")
    assert by_step[3]["kept"] and by_step[3]["text"] == TEXTS[3]
    assert not by_step[4]["kept"] and "not the JSON" in by_step[4]["why"]
    judged_steps = sorted(
        int(re.search(r"Step (\d+)", b["messages"][1]["content"][0]["text"]).group(1)) for b in judged
    )
    assert judged_steps == [2, 3, 4]  # the coordinates were caught here, without a judge
    assert {b["model"] for b in judged} == {"judge-m"}
    writer = next(b for b in server.bodies if b["messages"][0]["content"] == WRITER)
    assert writer["model"] == "writer-m"
    assert [p["type"] for p in writer["messages"][1]["content"]] == ["text", "image_url", "image_url"]
    assert "412" not in json.dumps(writer["messages"][1]["content"][0])  # the step is told in words


def test_a_model_server_that_fails_leaves_the_step_without_reasoning():
    with FakeChatServer(lambda body: (500, {"error": "down"})) as server:
        (record,) = fill(server, 1)
    assert not record["kept"] and record["why"].startswith("writer: model server error 500")


def test_coordinates_in_their_usual_shapes():
    for text in ("at (412, 300)", "x=412", "y: 30", "move 40 px left", "30 pixels down", "the coordinates", "end_x"):
        assert names_coordinates(text), text
    for text in ("the tile in row 2, column 3", "I typed 14", "the second arrow", "three dice"):
        assert not names_coordinates(text), text
