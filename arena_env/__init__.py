"""CaptchaArena's training environment for OpenEnv 0.10 trainers: the typed models and the client
(`ArenaEnv`). The server is the project's `manage.py env serve` (docs/environment.md)."""

from .models import VERSION, ArenaAction, ArenaObservation, ArenaState

__all__ = ["VERSION", "ArenaAction", "ArenaObservation", "ArenaState"]
