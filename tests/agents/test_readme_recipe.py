"""The README's CaptchaAgent recipe, read by the command's own parser, runs as the model card says."""

import re
import shlex
from pathlib import Path

from django.core.management import load_command_class

README = Path(__file__).resolve().parents[2] / "README.md"
CARD_MAX_STEPS = 15  # the CaptchaAgent model card's evaluation: at most 15 steps a puzzle


def recipe_runs() -> list[list[str]]:
    """Every `manage.py agent run` of the recipe that starts a run, as argument lists."""
    section = README.read_text().split("### Evaluating CaptchaAgent", 1)[1].split("\n### ", 1)[0]
    joined = re.sub(r"\\\n\s*", " ", section)
    commands = [line.split("#", 1)[0] for line in joined.splitlines() if "manage.py agent run " in line]
    return [shlex.split(c.split("manage.py agent", 1)[1]) for c in commands if "--resume" not in c]


def test_the_captchaagent_recipe_passes_the_cards_max_steps():
    runs = recipe_runs()
    assert runs, "the recipe starts no run"
    for argv in runs:
        options = load_command_class("annotation", "agent").create_parser("manage.py", "agent").parse_args(argv)
        assert options.max_steps == CARD_MAX_STEPS, argv
