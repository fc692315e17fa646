"""`agent run --resume` on an environment run: refused with a clear error, not a KeyError."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.environment.episodes import episode_begin
from annotation.environment.protocol import reset_params
from annotation.models import EnvToken, Rollout


def test_resuming_an_environment_run_is_refused_with_the_reason(bank, key):
    (puzzle,) = bank("Dice_Count")
    key("lab")
    episode_begin(token=EnvToken.objects.get(), params=reset_params({"puzzle": puzzle.uid, "checkpoint": "step-9"}))
    with pytest.raises(CommandError) as refused:
        call_command("agent", "run", "--resume", "env lab: step-9")
    assert str(refused.value) == (
        "run 'env lab: step-9' holds training environment episodes, not rollouts of `agent run`: it cannot be resumed"
    )
    assert Rollout.objects.get().status == Rollout.Status.PENDING  # nothing was played
