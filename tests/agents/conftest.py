"""Agent tests: puzzles made for the test, a stand-in for the published client's prompt."""

import io

import pytest
from django.core.management import call_command

from puzzles.models import Puzzle
from puzzles.services import bank_generate

STAND_IN_CLIENT = """
def _build_single_puzzle_system_prompt_sft(url, width, height):
    return "Stand-in for the trained prompt \\u2014 one puzzle at " + url + " \\nViewport " + f"{width}x{height}."
"""


@pytest.fixture(autouse=True)
def _private_in_tmp(settings, tmp_path):
    """Every test keeps screenshots in its own private folder."""
    settings.PRIVATE_ROOT = tmp_path / "private"


@pytest.fixture
def puzzles_of(transactional_db):
    def make(*types: str, index: int = 0) -> list[Puzzle]:
        bank_generate(split="test", per_type=1, start=index, types=list(types) or None, bank_seed=11, workers=1)
        return list(Puzzle.objects.filter(index=index, dataset="generated:11").order_by("type"))

    return make


@pytest.fixture
def prompt_file(tmp_path):
    """A stand-in system prompt (the trained one is never in the repository): odd bytes on purpose."""
    path = tmp_path / "prompt.txt"
    path.write_bytes("Stand-in prompt \u2014 not the trained one. \nLine two, trailing spaces  \r\nend".encode())
    return path


@pytest.fixture
def client_checkout(tmp_path):
    """A stand-in checkout of the public client: only its prompt builder, under its published path."""
    module = tmp_path / "client" / "agent_frameworks" / "computeruse_cli.py"
    module.parent.mkdir(parents=True)
    module.write_text(STAND_IN_CLIENT)
    return module.parent.parent


def command(*args) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue()
