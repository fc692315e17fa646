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

from annotation.agents.actions import HOLD_DEFAULT_MS, HOLD_MAX_MS
from annotation.agents.protocols.base import Call
from annotation.live.solvable import SolvableRule
from puzzles.layout import STAGE_H, STAGE_W

MAX_STEPS_DEFAULT, MAX_STEPS_LIMIT = 30, 200
TEXT_MAX = 1000
LABEL_MAX = 200
# The checkpoint names its run, "env <client>: <checkpoint>", within AgentRun.name's 200 characters
# beside a client's name of up to 100 (EnvToken.name), and the run's participant label beside that.
CHECKPOINT_MAX = 64

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


def action_call(data: Any) -> Call:
    """A step's data as the call the episode engine does; raises BadRequest for anything else."""
    if not isinstance(data, dict) or set(data) - {"action", "arguments"} or "action" not in data:
        raise BadRequest('a step is {"action": NAME, "arguments": {...}}')
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


def frame(kind: str, data: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "data": data})


def error_data(message: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"message": message, "code": code, **extra}


def step_result(observation: dict[str, Any], reward: float | None, done: bool) -> dict[str, Any]:
    """serialize_observation's shape: what the client's _parse_result reads."""
    return {"observation": observation, "reward": reward, "done": done}


def _coordinate(description: str, limit: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 0, "maximum": limit - 1, "description": description}


ACTION_SCHEMA: dict[str, Any] = {
    "title": "ArenaAction",
    "type": "object",
    "description": "One computer-use action in stage pixels (1280x1080, the page shows the stage alone).",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "arguments": {
            "type": "object",
            "properties": {
                **{key: _coordinate(key, STAGE_W) for key in ("x", "start_x", "end_x")},
                **{key: _coordinate(key, STAGE_H) for key in ("y", "start_y", "end_y")},
                "text": {"type": "string", "minLength": 1, "maxLength": TEXT_MAX},
                "duration_ms": {"type": "integer", "minimum": 0, "maximum": HOLD_MAX_MS, "default": HOLD_DEFAULT_MS},
                "button": {"type": "string", "enum": list(BUTTONS), "default": "left"},
            },
            "additionalProperties": False,
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}
OBSERVATION_SCHEMA: dict[str, Any] = {
    "title": "ArenaObservation",
    "type": "object",
    "properties": {
        "screenshot": {"type": "string", "description": "the page, 1280x1080 PNG, base64"},
        "instruction": {"type": "string", "description": "as the page shows it"},
        "step": {"type": "integer", "description": "actions done so far"},
        "max_steps": {"type": "integer"},
        "result": {"type": "string", "description": "the last action's result text, as the harness answers it"},
        "ended": {"type": "string", "description": "why the episode ended: submitted, done, step limit; '' while on"},
    },
}
STATE_SCHEMA: dict[str, Any] = {
    "title": "ArenaState",
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer", "minimum": 0},
        "puzzle": {"type": "string"},
        "type": {"type": "string"},
        "dataset": {"type": "string"},
        "split": {"type": "string"},
        "group": {"type": "string"},
        "run": {"type": "string"},
        "done": {"type": "boolean"},
    },
    "additionalProperties": True,
}
SCHEMAS = {"action": ACTION_SCHEMA, "observation": OBSERVATION_SCHEMA, "state": STATE_SCHEMA}
