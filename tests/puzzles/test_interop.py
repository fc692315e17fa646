"""The published CaptchaArena layout: export then import gives the same verdicts; old and broken files."""

import json

import numpy as np
import pytest
from django.core.management import call_command
from PIL import Image

from puzzles.interop import export_captchaarena, import_captchaarena
from puzzles.models import Puzzle
from puzzles.registry import get_type, registry
from puzzles.services import bank_generate

pytestmark = pytest.mark.django_db


def _verdicts(puzzle):
    puzzle_type = get_type(puzzle.type)
    masks = puzzle.load_masks()
    answers = [puzzle_type.solution(puzzle.truth)]
    answers += puzzle_type.perturbations(puzzle.truth, masks, np.random.default_rng(0))
    return [(json.dumps(a), puzzle_type.verify(puzzle.truth, a, masks)) for a in answers]


def test_export_then_import_gives_the_same_verdicts(tmp_path):
    bank_generate(split="test", per_type=2, bank_seed=3, workers=2)
    result = export_captchaarena(tmp_path, split="test", dataset="generated:3")
    assert result.types == len(registry().names()) and result.puzzles == 2 * result.types

    folder = tmp_path / "Test" / "Geometry_Click_2"
    ground_truth = json.loads((folder / "ground_truth.json").read_text())
    cu = json.loads((folder / "ground_truth_cu.json").read_text())
    puzzle_id, entry = next(iter(ground_truth.items()))
    assert (folder / puzzle_id).is_file()
    assert (folder / entry["answer"]["valid_area"]["mask_path"]).is_file()
    assert cu[puzzle_id]["answer_cu_kind"] == "single_xy"

    imported = import_captchaarena(tmp_path, name="roundtrip")
    assert imported.broken == [] and imported.imported == result.puzzles
    for original in Puzzle.objects.filter(dataset="generated:3"):
        copy = Puzzle.objects.get(
            dataset="import:roundtrip", type=original.type, source_id__startswith=original.source_id
        )
        assert copy.public == original.public
        assert _verdicts(copy) == _verdicts(original), original.type
        assert {a.key for a in copy.assets.all()} == {a.key for a in original.assets.all()}


def test_importing_twice_skips_what_is_there(tmp_path):
    bank_generate(split="val", per_type=1, types=["Dice_Count"], bank_seed=3, workers=1)
    export_captchaarena(tmp_path, split="val", dataset="generated:3")
    assert import_captchaarena(tmp_path, name="x").imported == 1
    again = import_captchaarena(tmp_path, name="x")
    assert (again.imported, again.skipped) == (0, 1)


def _image(path, size=(200, 100), color=(90, 140, 200)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


def _published_dataset(root):
    """A small dataset written the way the published benchmark writes it, old box files included."""
    geo = root / "Test" / "Geometry_Click_3"
    _image(geo / "a.png")
    _image(geo / "b.png")
    mask = np.zeros((100, 200), dtype=np.uint8)
    mask[40:60, 20:30] = 255  # an L-shape: its box (20..79, 40..59) accepts points like (60, 45)
    mask[50:60, 30:80] = 255  # that the mask rejects
    (geo / "masks").mkdir()
    Image.fromarray(mask, "L").save(geo / "masks" / "a.png")
    (geo / "ground_truth.json").write_text(
        json.dumps(
            {
                "a.png": {"question": "Click on the cone.", "answer": {"valid_area": {"mask_path": "masks/a.png"}}},
                "b.png": {"question": "Click on the cube.", "answer": {"area": [[10, 10], [50, 40]]}},
                "c.png": {"question": "missing image", "answer": {"area": [[10, 10], [50, 40]]}},
            }
        )
    )
    mis = root / "Test" / "Misleading_Click_1"
    _image(mis / "m.png")
    (mis / "ground_truth.json").write_text(
        json.dumps({"m.png": {"avoid_area": {"x": 50, "y": 20, "width": 40, "height": 30}}})
    )
    dice = root / "Test" / "Dice_Count_2"
    _image(dice / "d1.png")
    _image(dice / "d2.png")
    (dice / "ground_truth.json").write_text(json.dumps({"d1.png": {"sum": 17}, "d2.png": {"sum": "many"}}))
    broken = root / "Test" / "Bingo_1"
    broken.mkdir(parents=True)
    (broken / "ground_truth.json").write_text("{not json")
    (root / "Test" / "Nonsense_Type_5").mkdir()


def test_published_files_import_with_masks_and_old_boxes(tmp_path):
    _published_dataset(tmp_path)
    result = import_captchaarena(tmp_path, name="published")
    assert result.imported == 4
    broken = "\n".join(result.broken)
    assert "'c.png'" in broken and "'d2.png'" in broken and "Bingo_1" in broken and "Nonsense_Type_5" in broken
    assert len(result.broken) == 4

    geo = get_type("Geometry_Click")
    by_mask = Puzzle.objects.get(type="Geometry_Click", source_id="a.png")
    masks = by_mask.load_masks()
    assert geo.verify(by_mask.truth, [25, 45], masks).correct
    assert geo.verify(by_mask.truth, [60, 55], masks).correct
    assert not geo.verify(by_mask.truth, [60, 45], masks).correct  # inside the box, outside the mask
    by_box = Puzzle.objects.get(type="Geometry_Click", source_id="b.png")
    assert geo.verify(by_box.truth, [30, 25], by_box.load_masks()).correct
    assert not geo.verify(by_box.truth, [60, 25], by_box.load_masks()).correct

    avoid = Puzzle.objects.get(type="Misleading_Click")
    mis = get_type("Misleading_Click")
    assert not mis.verify(avoid.truth, [60, 30], avoid.load_masks()).correct
    assert mis.verify(avoid.truth, [10, 10], avoid.load_masks()).correct

    dice = Puzzle.objects.get(type="Dice_Count")
    assert get_type("Dice_Count").verify(dice.truth, "17", {}).correct


def test_import_command_names_broken_entries(tmp_path, capsys):
    _published_dataset(tmp_path)
    call_command("puzzles", "import-captchaarena", str(tmp_path), "--name", "cmd")
    out, err = capsys.readouterr()
    assert "import: 4 imported, 0 already there, 4 broken" in out
    assert "d2.png" in err and "no whole number" in err


def test_imported_truth_is_public_unless_said_private(tmp_path, capsys):
    _published_dataset(tmp_path)
    call_command("puzzles", "import-captchaarena", str(tmp_path), "--name", "published")
    assert "truth: public" in capsys.readouterr().out
    call_command("puzzles", "import-captchaarena", str(tmp_path), "--name", "ours", "--private-truth")
    assert "truth: public" not in capsys.readouterr().out
    public = Puzzle.objects.filter(dataset="import:published")
    private = Puzzle.objects.filter(dataset="import:ours")
    assert public.count() == private.count() == 4
    assert all(p.truth_public for p in public) and not any(p.truth_public for p in private)


def test_generated_puzzles_are_not_public_truth():
    bank_generate(split="val", per_type=1, types=["Dice_Count"], workers=1)
    assert not Puzzle.objects.get().truth_public
