"""The `puzzles` management command, end to end against the test database."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from puzzles.bank import bank_key, generate_puzzle
from puzzles.models import Puzzle
from puzzles.registry import registry
from puzzles.types.dice_count import DiceCount

pytestmark = pytest.mark.django_db


def _run(*args):
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command("puzzles", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_types_lists_every_type_with_mode_and_instruction():
    out, _ = _run("types")
    assert out.strip().endswith(f"{len(registry().names())} types")
    line = next(row for row in out.splitlines() if row.startswith("Geometry_Click"))
    assert "click" in line and "auto-submit" in line and "Click on the cone." in line


def test_generate_stores_and_reports_progress():
    out, err = _run(
        "generate", "--split", "val", "--per-type", "2", "--types", "Dice_Count", "Geometry_Click", "--workers", "1"
    )
    assert "generate: 4 created, 0 already stored" in out
    assert "4/4" in err  # the progress line
    assert Puzzle.objects.filter(split="val").count() == 4
    out, _ = _run("generate", "--split", "val", "--per-type", "2", "--types", "Dice_Count", "--workers", "1")
    assert "generate: 0 created, 2 already stored" in out
    assert f"dataset: {bank_key().label}" in out


def test_generate_with_a_seed_fills_another_bank_of_this_deployment():
    out, _ = _run("generate", "--split", "val", "--per-type", "1", "--types", "Dice_Count", "--seed", "3")
    assert "generate: 1 created" in out and "dataset: generated:3" in out
    stored = Puzzle.objects.get(dataset="generated:3")
    assert stored.truth == json.loads(json.dumps(generate_puzzle("Dice_Count", "val", 0, bank_key(3)).truth))


@pytest.fixture
def broken_type():
    """A registered type whose generator fails on its third puzzle, as a generator bug would."""

    class BrokenCount(DiceCount):
        name = "Broken_Count"

        def generate(self, rng):
            if self.calls == 2:
                raise ValueError("Cannot take a larger sample than population when replace is False")
            self.calls += 1
            return super().generate(rng)

    broken = BrokenCount()
    broken.calls = 0
    registry().register(broken)
    yield broken
    del registry()._by_name[broken.name]


def test_a_failing_generator_is_a_command_error_naming_the_puzzle(broken_type):
    with pytest.raises(CommandError) as raised:
        _run("generate", "--split", "val", "--per-type", "4", "--types", "Broken_Count", "--seed", "4")
    assert str(raised.value) == (
        "generating Broken_Count val #2 of generated:4 failed: ValueError: Cannot take a larger sample than "
        "population when replace is False"
    )


def test_selfcheck_prints_a_table_and_the_final_line():
    out, _ = _run("selfcheck", "--per-type", "2", "--workers", "2")
    lines = out.strip().splitlines()
    count = 2 * len(registry().names())
    assert lines[-1] == f"selfcheck: {count}/{count} puzzles ok"
    assert any(line.startswith("Geometry_Click") for line in lines)


def test_verify_prints_the_verdict_as_json():
    _run("generate", "--split", "test", "--per-type", "1", "--types", "Dice_Count", "--workers", "1")
    puzzle = Puzzle.objects.get(type="Dice_Count")
    right = str(puzzle.truth["sum"])
    out, _ = _run("verify", "Dice_Count", puzzle.uid, json.dumps(right))
    verdict = json.loads(out)
    assert verdict["correct"] is True and verdict["reward"] == 1.0 and verdict["puzzle"] == puzzle.uid
    out, _ = _run("verify", "dice-count", "0", json.dumps(str(puzzle.truth["sum"] + 1)))
    assert json.loads(out)["correct"] is False
    out, _ = _run("verify", "Dice_Count", "0", '"seven"')
    assert json.loads(out)["reward"] == 0.0 and "malformed" in json.loads(out)["reason"]
    with pytest.raises(CommandError, match="not valid JSON"):
        _run("verify", "Dice_Count", "0", "[1,")
    with pytest.raises(CommandError, match="no Dice_Count puzzle"):
        _run("verify", "Dice_Count", "999", "1")
    with pytest.raises(CommandError, match="unknown puzzle type"):
        _run("verify", "Nope", "0", "1")


def test_mask_report_shows_box_inflation_per_mask_type():
    out, _ = _run("mask-report", "--generate", "3")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if line and line[0].isupper()}
    for name in ("Geometry_Click", "Pick_Area"):
        if name in registry():
            n, mask_share, box_share, disagreement = rows[name][1:5]
            assert n == "3"
            assert float(box_share.rstrip("%")) > float(mask_share.rstrip("%")) > 0
            assert float(disagreement.rstrip("%")) > 0
