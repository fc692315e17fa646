"""OpenEnv's wire protocol, as openenv-core 0.3.0's server speaks it and its client reads it.

Client frames: {"type": "reset"|"step"|"state"|"close", "data": {...}}. Server frames:
{"type": "observation", "data": {"observation": {...}, "reward": float|None, "done": bool}},
{"type": "state", "data": {...}} and {"type": "error", "data": {"message": str, "code": str}}, the
codes being OpenEnv's WSErrorCode values (its client raises "Server error: <message> (code: <code>)").

An action is one computer-use call as the agent harness and `compile_actions` write them,
{"action": NAME, "arguments": {...}}, in stage pixels (the page shows the stage alone, at 0,0 in a
1280x1080 viewport). Everything is checked strictly here, before anything reaches the page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from annotation.agents.actions import (
    CLICK_WAIT_MS,
    DRAG_STEP_MS,
    DRAG_STEPS,
    HOLD_DEFAULT_MS,
    HOLD_MAX_MS,
    KEY_WAIT_MS,
    SETTLE_MS,
    TYPE_DELAY_MS,
)
from annotation.agents.protocols.base import Call
from annotation.live.solvable import SolvableRule
from arena_env.models import schemas
from puzzles.layout import STAGE_H, STAGE_W

MAX_STEPS_DEFAULT, MAX_STEPS_LIMIT = 30, 200
TEXT_MAX = 1000
LABEL_MAX = 200
# The checkpoint names its run, "env <client>: <checkpoint>", within AgentRun.name's 200 characters
# beside a client's name of up to 100 (EnvToken.name), and the run's participant label beside that.
CHECKPOINT_MAX = 64

# A step answers within STEP_BOUND_S, or within the client's own timeout_s when that is shorter,
# far below OpenEnv clients' 60 s message timeout: so no answer can arrive after the client gave up on
# it and be read as the next request's. An action whose published waits leave less than
# STEP_MARGIN_S (or half the bound, if less) for the page and the screenshot is refused before
# anything is done.
STEP_BOUND_S = 30.0
STEP_MARGIN_S = 3.0
FRAME_DEPTH_MAX = 8  # a step's data nests 3 deep; deeper frames are refused before they are parsed
FRAME_MAX_CHARS = 64 * 1024  # a client's frame: a reset or an action (type_text's 1,000 characters at most)

# OpenEnv's WSErrorCode values.
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
SESSION_ERROR = "SESSION_ERROR"

# name: (required arguments, optional arguments)
ACTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "click": (("x", "y"), ("button",)),
    "drag": (("start_x", "start_y", "end_x", "end_y"), ()),
    "type_text": (("text",), ()),
    "hold": (("x", "y"), ("duration_ms", "button")),
    "screenshot": ((), ()),
    "done": ((), ()),
}
BUTTONS = ("left", "right", "middle")
RESET_TEXT: tuple[str, ...] = ("type", "dataset", "split", "puzzle", "group", "checkpoint", "episode_id", "mined_from")
RESET_TEXT += ("people_solvable",)  # a rule, PEOPLE:ATTEMPTS, read below
RESET_NUMBERS = ("seed", "max_steps", "mined_last")
RESET_FLAGS = ("verified_only", "valid_only")
RESET_RATES = ("human_pass_min", "human_pass_max")
RESET_KEYS = RESET_TEXT + RESET_NUMBERS + RESET_FLAGS + RESET_RATES
MINED_LAST_DEFAULT = 8  # Qwen-CUA's rule: solved at least once, but not 8 times in the last 8


class BadRequest(ValueError):
    """A frame, reset or action that is not as the protocol says; the message says what is wrong."""

    code = VALIDATION_ERROR


@dataclass(frozen=True)
class ResetParams:
    type: str = ""
    dataset: str = ""
    split: str = ""
    puzzle: str = ""
    group: str = ""
    checkpoint: str = "default"
    episode_id: str = ""
    seed: int | None = None
    max_steps: int = MAX_STEPS_DEFAULT
    # The curriculum: filters on the pool a reset draws from.
    verified_only: bool = False
    valid_only: bool = False  # replay-verified and not suspect, as the puzzle labels say (docs/datasets.md)
    human_pass_min: float | None = None
    human_pass_max: float | None = None
    mined_from: str = ""  # a run's name: its puzzles solved at least once but not every time...
    mined_last: int = MINED_LAST_DEFAULT  # ... in its last K rollouts of each
    people_solvable: str = ""  # PEOPLE:ATTEMPTS: only puzzles people solved so (annotation/live/solvable.py)


def reset_params(data: Any) -> ResetParams:
    """Reset's data, checked: known keys only, texts of at most 200 characters, whole numbers,
    true or false, rates from 0 to 1."""
    if not isinstance(data, dict):
        raise BadRequest("reset data must be an object")
    unknown = sorted(set(data) - set(RESET_KEYS))
    if unknown:
        raise BadRequest(f"reset takes {', '.join(RESET_KEYS)}; not {', '.join(unknown)}")
    given = {key: value for key, value in data.items() if value is not None}
    for key in RESET_TEXT:
        if key in given and (not isinstance(given[key], str) or not 0 < len(given[key]) <= LABEL_MAX):
            raise BadRequest(f"reset {key} must be a text of 1 to {LABEL_MAX} characters")
    if len(given.get("checkpoint", "")) > CHECKPOINT_MAX:
        raise BadRequest(f"reset checkpoint must be a text of 1 to {CHECKPOINT_MAX} characters (it names the run)")
    for key in RESET_NUMBERS:
        if key in given and (type(given[key]) is not int or given[key] < 0):
            raise BadRequest(f"reset {key} must be a whole number >= 0, not {given[key]!r}")
    for key in RESET_FLAGS:
        if key in given and not isinstance(given[key], bool):
            raise BadRequest(f"reset {key} must be true or false, not {given[key]!r}")
    for key in RESET_RATES:
        value = given.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise BadRequest(f"reset {key} must be a rate from 0 to 1, not {value!r}")
    if not 1 <= given.get("max_steps", 1) <= MAX_STEPS_LIMIT:
        raise BadRequest(f"reset max_steps must be 1 to {MAX_STEPS_LIMIT}")
    if given.get("mined_last", 1) < 1:
        raise BadRequest("reset mined_last must be at least 1")
    if "people_solvable" in given:
        try:
            SolvableRule.parse(given["people_solvable"])
        except ValueError as error:
            raise BadRequest(f"reset {error}") from None
    return ResetParams(**given)


def step_bound(data: Any) -> float:
    """The seconds a step may take: the server's bound, or the client's `timeout_s` if shorter."""
    timeout = data.get("timeout_s") if isinstance(data, dict) else None
    if timeout is None:
        return STEP_BOUND_S
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 3600:
        raise BadRequest(f"step timeout_s must be a number of seconds above 0, not {timeout!r}")
    return min(float(timeout), STEP_BOUND_S)


def published_wait_s(call: Call) -> float:
    """The waits the harness's published timings put into an action, in seconds."""
    arguments = call.arguments
    waits_ms = {
        "click": CLICK_WAIT_MS + SETTLE_MS,
        "drag": DRAG_STEPS * DRAG_STEP_MS + CLICK_WAIT_MS + SETTLE_MS,
        "type_text": TYPE_DELAY_MS * len(str(arguments.get("text", ""))) + KEY_WAIT_MS + SETTLE_MS,
        "hold": int(arguments.get("duration_ms", HOLD_DEFAULT_MS)) + SETTLE_MS,
    }
    return waits_ms.get(call.name, 0) / 1000


def action_within(call: Call, bound_s: float) -> None:
    """Refuse an action whose published waits do not leave STEP_MARGIN_S of the step's bound."""
    waits, margin = published_wait_s(call), min(STEP_MARGIN_S, bound_s / 2)
    if waits + margin <= bound_s:
        return
    said = f"this step must answer within {bound_s:g} s"
    if bound_s < STEP_BOUND_S:
        said += " (its timeout_s)"
    raise BadRequest(
        f"{call.name} waits {waits:g} s by the published timings, and {said} with {margin:g} s for the "
        f"page: nothing was done; {_shorter(call.name, bound_s - margin)}"
    )


def _shorter(name: str, room_s: float) -> str:
    room_ms = int(room_s * 1000) - SETTLE_MS
    if name == "hold":
        return f"hold for at most {max(0, room_ms)} ms, or split the hold"
    if name == "type_text":
        return f"type at most {max(0, (room_ms - KEY_WAIT_MS) // TYPE_DELAY_MS)} characters a step"
    return "give the step a longer timeout_s"


def action_call(data: Any) -> Call:
    """A step's data as the call the episode engine does; raises BadRequest for anything else."""
    if not isinstance(data, dict) or set(data) - {"action", "arguments", "timeout_s"} or "action" not in data:
        raise BadRequest('a step is {"action": NAME, "arguments": {...}, ["timeout_s": seconds]}')
    name, arguments = data["action"], data.get("arguments", {})
    if name not in ACTIONS:
        raise BadRequest(f"action must be one of {', '.join(ACTIONS)}, not {name!r}")
    if not isinstance(arguments, dict):
        raise BadRequest(f"{name} arguments must be an object")
    required, optional = ACTIONS[name]
    missing = [key for key in required if key not in arguments]
    unknown = sorted(set(arguments) - set(required) - set(optional))
    if missing or unknown:
        takes = ", ".join(required + tuple(f"[{key}]" for key in optional)) or "no arguments"
        wrong = f"missing {', '.join(missing)}" if missing else f"not {', '.join(unknown)}"
        raise BadRequest(f"{name} takes {takes}; {wrong}")
    for key, value in arguments.items():
        _check_argument(name, key, value)
    return Call(name, dict(arguments))


def _check_argument(name: str, key: str, value: Any) -> None:
    if key in ("x", "start_x", "end_x", "y", "start_y", "end_y"):
        limit = STAGE_W if key.endswith("x") else STAGE_H
        if type(value) is not int or not 0 <= value < limit:
            raise BadRequest(f"{name} {key} must be a whole number of stage pixels, 0 to {limit - 1}, not {value!r}")
    elif key == "duration_ms":
        if type(value) is not int or not 0 <= value <= HOLD_MAX_MS:
            raise BadRequest(f"hold duration_ms must be a whole number, 0 to {HOLD_MAX_MS}, not {value!r}")
    elif key == "button":
        if value not in BUTTONS:
            raise BadRequest(f"{name} button must be one of {', '.join(BUTTONS)}, not {value!r}")
    elif key == "text" and (not isinstance(value, str) or not 0 < len(value) <= TEXT_MAX):
        raise BadRequest(f"type_text text must be a text of 1 to {TEXT_MAX} characters")


def parse_frame(text: str | bytes) -> Any:
    """A client's JSON, parsed safely: refused (BadRequest, INVALID_JSON) when it is no JSON or
    nests deeper than FRAME_DEPTH_MAX (measured before parsing, so no recursion limit is met), and
    when any text in it, a key or a value, holds a NUL (which PostgreSQL cannot store)."""
    if isinstance(text, bytes):
        try:
            text = text.decode()
        except UnicodeDecodeError:
            raise BadJson("Invalid JSON: not UTF-8") from None
    if len(text) > FRAME_MAX_CHARS:
        raise BadJson(f"Invalid JSON: a client frame is at most {FRAME_MAX_CHARS} characters")
    if _depth(text) > FRAME_DEPTH_MAX:
        raise BadJson(f"Invalid JSON: nested deeper than {FRAME_DEPTH_MAX} levels")
    try:
        parsed = json.loads(text)
    except ValueError as error:
        raise BadJson(f"Invalid JSON: {error}") from None
    if _holds_nul(parsed):
        raise BadRequest("a text in the frame holds a NUL character (U+0000): nothing was done")
    return parsed


class BadJson(BadRequest):
    code = INVALID_JSON


def _depth(text: str) -> int:
    """The deepest nesting of [ and { in JSON text, strings skipped."""
    deepest = depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            in_string = escaped or char != '"'  # an escaped quote does not end the string
            escaped = not escaped and char == "\\"
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def frame(kind: str, data: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "data": data})


def error_data(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"message": message, "code": code, **extra}


def step_result(observation: dict[str, Any], reward: float | None, done: bool) -> dict[str, Any]:
    """serialize_observation's shape: what the client's _parse_result reads."""
    return {"observation": observation, "reward": reward, "done": done}


# /schema: the typed models a trainer's client parses into (arena_env/models.py, pydantic).
SCHEMAS = schemas()
