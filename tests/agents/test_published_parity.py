# ruff: noqa: E501  (the published JSON is kept verbatim, one description a line)
"""The harness against the published client's own declarations, word for word."""

import json

from annotation.agents.protocols.tools import ToolsProtocol

# agent_frameworks/computeruse_cli.py, SFT_EVAL_TOOLS: the five tools its per-puzzle openai
# evaluation sends (CaptchaAgent's training set), as JSON.
PUBLISHED_TOOLS = json.loads(r"""[
 {"type": "function", "function": {"name": "screenshot",
  "description": "Capture the current 1280x1080 browser viewport as an image so you can see the puzzle and the result of your last action.",
  "parameters": {"type": "object", "properties": {}, "required": []}}},
 {"type": "function", "function": {"name": "click",
  "description": "Click at the given (x, y) pixel coordinate \u2014 used to select a tile, an option, or a point on the page.",
  "parameters": {"type": "object", "properties": {
    "x": {"type": "integer", "description": "Horizontal pixel coordinate."},
    "y": {"type": "integer", "description": "Vertical pixel coordinate."},
    "button": {"type": "string", "enum": ["left", "right", "middle"],
               "description": "Mouse button. Defaults to left; for these puzzles always use left."}},
   "required": ["x", "y"]}}},
 {"type": "function", "function": {"name": "type_text",
  "description": "Type the given text string at the current cursor position.",
  "parameters": {"type": "object", "properties": {"text": {"type": "string", "description": "The text to type."}},
   "required": ["text"]}}},
 {"type": "function", "function": {"name": "drag",
  "description": "Press the mouse at (start_x, start_y), move to (end_x, end_y), and release \u2014 drag the slider handle on the bar below the image horizontally until the puzzle piece lines up with its empty slot.",
  "parameters": {"type": "object", "properties": {
    "start_x": {"type": "integer", "description": "Start horizontal pixel (on the slider handle)."},
    "start_y": {"type": "integer", "description": "Start vertical pixel (on the slider handle)."},
    "end_x": {"type": "integer", "description": "Target horizontal pixel."},
    "end_y": {"type": "integer", "description": "Target vertical pixel."}},
   "required": ["start_x", "start_y", "end_x", "end_y"]}}},
 {"type": "function", "function": {"name": "hold",
  "description": "Press and hold the mouse button at (x, y) for a fixed 10 seconds \u2014 for puzzles that require a sustained hold.",
  "parameters": {"type": "object", "properties": {
    "x": {"type": "integer", "description": "Horizontal pixel coordinate."},
    "y": {"type": "integer", "description": "Vertical pixel coordinate."},
    "button": {"type": "string", "enum": ["left", "right", "middle"],
               "description": "Mouse button. Defaults to left; for these puzzles always use left."}},
   "required": ["x", "y"]}}}
]""")


def test_openai_tools_sends_the_published_tool_definitions_in_order():
    body = ToolsProtocol().body("m", [{"role": "user", "content": "hi"}])
    # Serialized, so key order and every word count, as they do in the model's prompt.
    assert json.dumps(body["tools"]) == json.dumps(PUBLISHED_TOOLS)
    assert body["tool_choice"] == "auto"
