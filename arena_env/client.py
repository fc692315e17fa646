"""`ArenaEnv`: OpenEnv 0.10's EnvClient for CaptchaArena, typed by models.py.

The key: `ArenaEnv(base_url, key=...)`, or ARENA_ENV_KEY in the environment, which is what
`ArenaEnv.from_env(...)` and `ArenaEnv.from_docker_image(...)` use, since they build the client
with a base URL alone. It travels as `Authorization: Bearer <key>`, never in a URL a log could
keep. `step(action, timeout_s=...)` sends the timeout with the step: the server answers within it
or refuses the action (docs/environment.md, "Every step answers within its bound")."""

from __future__ import annotations

import os
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from .models import ArenaAction, ArenaObservation, ArenaState

KEY_VARIABLE = "ARENA_ENV_KEY"


class ArenaEnv(EnvClient[ArenaAction, ArenaObservation, ArenaState]):
    def __init__(self, base_url: str | None = None, *, key: str | None = None, **kwargs: Any) -> None:
        key = key or os.environ.get(KEY_VARIABLE)
        if not key:
            raise ValueError(f"CaptchaArena needs a trainer's key: pass key= or set {KEY_VARIABLE}")
        kwargs["headers"] = {**(kwargs.get("headers") or {}), "Authorization": f"Bearer {key}"}
        super().__init__(base_url=base_url, **kwargs)

    def _step_payload(self, action: ArenaAction | dict[str, Any]) -> dict[str, Any]:
        return action.payload() if isinstance(action, ArenaAction) else ArenaAction.model_validate(action).payload()

    async def _step_async(self, action: ArenaAction, **kwargs: Any) -> StepResult[ArenaObservation]:
        data = self._step_payload(action)
        if kwargs.get("timeout_s") is not None:
            data["timeout_s"] = kwargs["timeout_s"]
        response = await self._send_and_receive({"type": "step", "data": data})
        return self._parse_result(response.get("data", {}))

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ArenaObservation]:
        observation = ArenaObservation.model_validate(
            {**payload.get("observation", {}), "done": payload.get("done", False), "reward": payload.get("reward")}
        )
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> ArenaState:
        return ArenaState.model_validate(payload)
