"""The protocols' reading of replies, the published coercions and the history policies: pure code."""

import pytest

from annotation.agents.actions import BadCall, applied
from annotation.agents.context import PLACEHOLDER, fold, published, screenshots_in
from annotation.agents.protocols import NativeProtocol, ToolsProtocol
from annotation.agents.protocols.base import ACTION_TEXT, Call, Outcome, first_text, image_part, user_message
from annotation.agents.protocols.native import parse_xml_calls
from tests.agents.fakes import tool_calls, xml_call


def native_calls(text: str) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in NativeProtocol().calls({"role": "assistant", "content": text})]


def test_the_first_xml_call_is_read_with_integers_only_where_published():
    text = (
        "<think>Maybe <function=screenshot></function> first? No.</think>"  # inside the thinking: still first
        + xml_call("click", {"x": " 720 ", "y": "410.5", "button": "left"})
    )
    assert native_calls(text) == [("screenshot", {})]
    assert native_calls(xml_call("click", {"x": "720", "y": "-3", "button": "Left"})) == [
        ("click", {"x": 720, "y": -3, "button": "Left"})
    ]
    assert native_calls(xml_call("drag", {"start_x": "+7", "end_x": "720px", "duration_ms": "1500"})) == [
        ("drag", {"start_x": "+7", "end_x": "720px", "duration_ms": 1500})
    ]
    typed = "<function=type_text><parameter=text>  K7 PQ  </parameter><parameter=text>second</parameter></function>"
    assert native_calls(typed) == [("type_text", {"text": "second"})]  # stripped; the last value wins
    assert [c.name for c in parse_xml_calls(xml_call("click", {"x": 1}) + xml_call("hold", {"x": 2}))] == [
        "click",
        "hold",
    ]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "click", "arguments": {"x": 640, "y": 500}}\n</tool_call>',  # Hermes JSON
        "<function=click ><parameter=x>1</parameter></function>",  # a near miss
        "<function=click><parameter=x>1</parameter>",  # never closed
        "click(640, 500)",
        "",
    ],
)
def test_anything_but_a_well_formed_xml_call_is_no_call(text):
    assert native_calls(text) == []


def test_arguments_are_coerced_as_published_and_the_rest_is_a_bad_call():
    assert applied("click", {"x": [579, 784]}) == {"x": 579, "y": 784}
    assert applied("click", {"x": [579, 784], "y": 700}) == {"x": 579, "y": 700}  # published crash: y kept
    assert applied("click", {"x": "410.9", "y": "+7"}) == {"x": 410, "y": 7}  # truncated, not rounded
    assert applied("hold", {"x": 5, "y": 6}) == {"x": 5, "y": 6}  # the 10 s default is the hold's own
    assert applied("type_text", {"text": 1234}) == {"text": "1234"}
    for name, arguments, problem in [
        ("click", {"x": "720px", "y": 1}, "x must be a number"),
        ("click", {"x": 1}, "click needs y"),
        ("drag", {"start_x": 1, "start_y": 1, "end_x": 2}, "drag needs end_y"),
        ("click", {"x": 1, "y": 1, "button": "Left"}, "button must be one of"),
        ("click", {"x": True, "y": 1}, "x must be a number"),
    ]:
        with pytest.raises(BadCall, match=problem):
            applied(name, arguments)


def test_tool_calls_that_cannot_be_read_are_problems_not_crashes():
    message = tool_calls(("click", "{not json"), ("click", "[1, 2]"), ("click", {"x": 1, "y": 2}))
    message["tool_calls"].append("garbage")
    calls = ToolsProtocol().calls(message)
    assert [c.problem for c in calls] == [
        "the arguments of click are not JSON",
        "the arguments of click are not a JSON object",
        "",
        "a tool call that is not an object",
    ]
    assert calls[2].arguments == {"x": 1, "y": 2} and calls[2].id == "call_2"


def test_the_request_bodies():
    native = NativeProtocol().body("m", [{"role": "user", "content": "hi"}])
    assert native == {"model": "m", "max_tokens": 12000, "messages": [{"role": "user", "content": "hi"}]}
    tools = ToolsProtocol(max_tokens=500, disable_thinking=True).body("m", [])
    assert tools["tool_choice"] == "auto" and tools["max_tokens"] == 500
    assert tools["chat_template_kwargs"] == {"enable_thinking": False}
    hold = next(t for t in tools["tools"] if t["function"]["name"] == "hold")["function"]["parameters"]
    assert hold["required"] == ["x", "y"]  # the duration may be left out
    assert first_text("Pick a fox") == "Here is the current state of the browser. Solve this puzzle: Pick a fox"
    assert first_text("") == "Here is the current state of the browser. Begin solving this puzzle."
    answer = NativeProtocol().answer([Outcome(Call("click"), "clicked (1, 2) button=left", screenshot=3)], 3)
    assert answer == [user_message(ACTION_TEXT.format(result="clicked (1, 2) button=left"), 3)]
    assert (
        answer[0]["content"][0]["text"]
        == "Action executed: clicked (1, 2) button=left. Here is the updated screenshot:"
    )


def history(steps: int) -> list[dict]:
    """A native history after `steps` model calls, each a screenshot call answered with a screenshot."""
    messages = [{"role": "system", "content": "p"}, user_message(first_text("x"), 0)]
    for step in range(steps):
        messages += [
            {"role": "assistant", "content": f"reply {step}"},
            user_message("Here is the updated screenshot:", step + 1),
        ]
    return messages


def test_the_published_bounds_keep_system_and_twenty_messages_and_eight_screenshots():
    assert published(history(7)) == history(7)  # 8 screenshots: all kept
    eight = published(history(8))
    assert screenshots_in(eight) == [image_part(n)["image_url"]["url"] for n in range(1, 9)]
    assert eight[1]["content"] == [{"type": "text", "text": first_text("x")}, {"type": "text", "text": PLACEHOLDER}]
    assert len(published(history(10))) == 22  # not yet over 22
    capped = published(history(11))
    assert len(capped) == 21 and capped[0]["role"] == "system" and capped[1]["role"] == "assistant"
    assert first_text("x") not in str(capped)  # the instruction is gone, as published
    assert len(screenshots_in(capped)) == 8


def test_folding_sends_at_most_twenty_screenshots_and_moves_its_boundary_ten_at_a_time():
    counts = {steps + 1: len(screenshots_in(fold(history(steps)))) for steps in range(0, 45)}
    assert max(counts.values()) == 20
    assert [counts[n] for n in (20, 21, 30, 31, 40, 41)] == [20, 11, 20, 11, 20, 11]
    # Between two folds the request only grows: the earlier request is a prefix of the later one.
    for steps in range(21, 29):
        earlier, later = fold(history(steps)), fold(history(steps + 1))
        assert later[: len(earlier)] == earlier
    folded = fold(history(25))
    assert len(folded) == len(history(25)) and all(m["content"] == f"reply {n}" for n, m in enumerate(folded[2::2]))
