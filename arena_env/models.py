"""The environment's typed action, observation and state (pydantic): what `/schema` serves and what
the client class parses into. No Django and no OpenEnv here: the server imports this module, and a
trainer's machine needs only pydantic and OpenEnv's client."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

VERSION = "0.2.0"  # as openenv.yaml says; /metadata reports it
STAGE_W, STAGE_H = 1280, 1080  # the published page's stage (puzzles/layout.py, checked by a test)
ActionName = Literal["click", "drag", "type_text", "hold", "screenshot", "done"]


class ArenaArguments(BaseModel):
    """An action's arguments, in stage pixels; each action takes its own (docs/environment.md)."""

    model_config = ConfigDict(extra="forbid")

    x: int | None = Field(default=None, ge=0, lt=STAGE_W)
    y: int | None = Field(default=None, ge=0, lt=STAGE_H)
    start_x: int | None = Field(default=None, ge=0, lt=STAGE_W)
    start_y: int | None = Field(default=None, ge=0, lt=STAGE_H)
    end_x: int | None = Field(default=None, ge=0, lt=STAGE_W)
    end_y: int | None = Field(default=None, ge=0, lt=STAGE_H)
    text: str | None = Field(default=None, min_length=1, max_length=1000)
    duration_ms: int | None = Field(default=None, ge=0, le=60_000)
    button: Literal["left", "right", "middle"] | None = None


class ArenaAction(BaseModel):
    """One computer-use action on the stage (1280x1080; the page shows the stage alone)."""

    model_config = ConfigDict(extra="forbid")

    action: ActionName
    arguments: ArenaArguments = Field(default_factory=ArenaArguments)

    def payload(self) -> dict[str, Any]:
        """The step's data as the server reads it: only the arguments given."""
        return {"action": self.action, "arguments": self.arguments.model_dump(exclude_none=True)}


class ArenaObservation(BaseModel):
    """What the page shows after a reset or a step, and the episode's end with its verdict."""

    model_config = ConfigDict(extra="forbid")

    screenshot: str = Field(description="the page, 1280x1080 PNG, base64")
    instruction: str = Field(description="as the page shows it")
    step: int = Field(ge=0, description="actions done so far")
    max_steps: int = Field(ge=1)
    result: str = Field(description="the last action's result text, as the harness answers it")
    ended: str = Field(description="why the episode ended: submitted, done, step limit; '' while on")
    verdict: Literal["", "correct", "incorrect", "unanswered"] = Field(
        description="the server verifier's, once ended: correct, incorrect, unanswered (nothing submitted)"
    )
    done: bool = False
    reward: float | None = Field(default=None, description="the verifier's 0-1 reward, once ended")
    metadata: dict[str, Any] = Field(default_factory=dict)


class ArenaState(BaseModel):
    """The session's episode as `state` reports it: no truth, only what names the episode."""

    model_config = ConfigDict(extra="allow")

    episode_id: str | None = None
    step_count: int = Field(default=0, ge=0)
    puzzle: str | None = None
    type: str | None = None
    dataset: str | None = None
    split: str | None = None
    group: str | None = None
    run: str | None = None
    rollout: int | None = None
    done: bool | None = None


def schemas() -> dict[str, Any]:
    """`/schema`'s answer, as OpenEnv's SchemaResponse."""
    return {
        "action": ArenaAction.model_json_schema(),
        "observation": ArenaObservation.model_json_schema(),
        "state": ArenaState.model_json_schema(),
    }
