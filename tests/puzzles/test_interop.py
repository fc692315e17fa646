"""The published CaptchaArena layout: export then import gives the same verdicts; old and broken files."""

import io
import json
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
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


@pytest.fixture
def exported(tmp_path):
    """Two generated puzzles of every type, exported; the originals' truths, page data, masks and verdicts."""
    bank_generate(split="test", per_type=2, bank_seed=3, workers=2)
    result = export_captchaarena(tmp_path, split="test", dataset="generated:3")
    assert result.types == len(registry().names()) and result.puzzles == 2 * result.types
    originals = {
        (p.type, p.source_id): {
            "public": p.public,
            "truth": p.truth,
            "masks": p.load_masks(),
            "answers": _answers(p),
            "verdicts": _verdicts(p),
            "assets": {a.key: (a.width, a.height) for a in p.assets.all()},
            # The export names a puzzle after its main image's file: the id and the image's suffix.
            "file": p.source_id + Path(p.assets.get(key=p.public["image"]).file.name).suffix,
        }
        for p in Puzzle.objects.filter(dataset="generated:3")
    }
    return tmp_path, originals


def _answers(puzzle):
    puzzle_type = get_type(puzzle.type)
    masks = puzzle.load_masks()
    return [
        puzzle_type.solution(puzzle.truth),
        *puzzle_type.perturbations(puzzle.truth, masks, np.random.default_rng(0)),
    ]


def test_an_export_round_trips_into_an_empty_bank(exported):
    root, originals = exported
    Puzzle.objects.all().delete()
    imported = import_captchaarena(root, name="roundtrip")
    assert imported.broken == [] and imported.imported == len(originals)
    for key, original in originals.items():
        copy = Puzzle.objects.get(dataset="import:roundtrip", type=key[0], source_id=original["file"])
        assert copy.truth == original["truth"] and copy.public == original["public"], key
        masks = copy.load_masks()
        assert masks.keys() == original["masks"].keys()
        assert all(np.array_equal(masks[name], original["masks"][name]) for name in masks)
        assert _verdicts(copy) == original["verdicts"], key
        assert {a.key: (a.width, a.height) for a in copy.assets.all()} == original["assets"]


def test_the_published_fields_alone_give_the_same_verdicts(exported):
    """Without our arena_* fields, the export reads as a published dataset: the same answers pass and fail."""
    root, originals = exported
    for gt_file in root.glob("Test/*/ground_truth.json"):
        entries = json.loads(gt_file.read_text())
        gt_file.write_text(
            json.dumps({k: {f: v for f, v in e.items() if not f.startswith("arena_")} for k, e in entries.items()})
        )
    imported = import_captchaarena(root, name="published")
    assert imported.broken == [] and imported.imported == len(originals)
    for (type_name, _), original in originals.items():
        copy = Puzzle.objects.get(dataset="import:published", type=type_name, source_id=original["file"])
        puzzle_type, masks = get_type(type_name), copy.load_masks()
        verdicts = [puzzle_type.verify(copy.truth, a, masks).correct for a in original["answers"]]
        assert verdicts == [v.correct for _, v in original["verdicts"]], type_name
        assert copy.public["image_size"] == original["public"]["image_size"]
        assert copy.public.get("grid_size") == original["public"].get("grid_size")


def _published_requests(type_name, puzzle_id, entry):
    """The files the published server and page fetch for an entry (its app.py and script.js)."""
    files = [puzzle_id]
    for field in ("reference_image", "component_image"):
        if field in entry:
            files.append(entry[field])
    files += entry.get("option_images", []) if type_name not in ("Path_Finder", "Connect_icon") else entry["options"]
    if type_name == "Click_Order":
        files.append(entry["order_image"])
    if type_name == "Rotation_Match":
        base = Path(entry["object_base_image"]).stem
        files += [f"{base}_{angle}.png" for angle in range(0, 360, 45)]
    if type_name == "Image_Recognition":
        files += [f"{entry.get('subfolder', puzzle_id)}/{name}" for name in entry["images"]]
    return files


def test_the_export_serves_every_file_the_published_page_asks_for(exported):
    root, _ = exported
    for folder in sorted(root.glob("Test/*")):
        type_name = folder.name.rsplit("_", 1)[0]
        entries = json.loads((folder / "ground_truth.json").read_text())
        cu = json.loads((folder / "ground_truth_cu.json").read_text())
        assert cu.keys() == entries.keys()
        for puzzle_id, entry in entries.items():
            assert entry["prompt"] and entry["prompt"] == entry["question"]
            for name in _published_requests(type_name, puzzle_id, entry):
                assert (folder / name).is_file(), (type_name, name)
                if name.endswith(".png"):
                    assert Image.open(folder / name).format == "PNG"
            assert not any(k.startswith("arena_") for k in cu[puzzle_id])
        if type_name == "Image_Recognition":
            assert len(entry["images"]) == 9 and Image.open(folder / entry["subfolder"] / "tile_0.png").size == (
                174,
                174,
            )


TOOL_CALL_TYPES = {
    "Image_Recognition",
    "Patch_Select",
    "Select_Animal",
    "Unusual_Detection",
    "Place_Dot",
    "Slide_Puzzle",
}


def test_widgets_the_published_client_cannot_map_get_screen_tool_calls(exported):
    """Cells, the placed dot and the slider: clicks and drags on the published page, Submit last."""
    root, _ = exported
    for folder in sorted(root.glob("Test/*")):
        type_name = folder.name.rsplit("_", 1)[0]
        for entry in json.loads((folder / "ground_truth_cu.json").read_text()).values():
            calls = entry["answer_cu"]
            if type_name not in TOOL_CALL_TYPES:
                assert entry["answer_cu_kind"] != "tool_calls"
                continue
            assert entry["answer_cu_kind"] == "tool_calls"
            assert all(0 <= c["arguments"].get("x", 0) < 1280 and 0 <= c["arguments"].get("y", 0) < 1080 for c in calls)
            *answer, submit = calls
            assert submit["action"] == "click" and submit not in answer
            if type_name in ("Place_Dot", "Slide_Puzzle"):
                assert len(answer) == 1 and answer[0]["action"] == ("click" if type_name == "Place_Dot" else "drag")
            else:
                assert len(answer) == len(entry.get("correct_patches") or entry.get("correct_selections"))


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


def _captcha_data(root):
    """The published server's own folder: type folders with no split folder above them, the oldest
    Geometry_Click truth (answer: the target's point) among them."""
    _image(root / "Dice_Count" / "d.png")
    (root / "Dice_Count" / "ground_truth.json").write_text(json.dumps({"d.png": {"sum": 9}}))
    _image(root / "Geometry_Click" / "old.png")
    (root / "Geometry_Click" / "ground_truth.json").write_text(
        json.dumps({"old.png": {"question": "Click on the circle.", "answer": [100, 50]}})
    )
    return root


def test_a_folder_with_no_split_folder_says_so_and_names_split(tmp_path):
    root = _captcha_data(tmp_path / "captcha_data")
    with pytest.raises(CommandError, match=r"no split folder .*Train, Val, Validation, Test.*--split"):
        call_command("puzzles", "import-captchaarena", str(root))
    assert not Puzzle.objects.exists()


def test_captcha_data_imports_as_the_split_given_with_the_oldest_geometry_truth(tmp_path, capsys):
    root = _captcha_data(tmp_path / "captcha_data")
    call_command("puzzles", "import-captchaarena", str(root), "--split", "val")
    assert "import: 2 imported, 0 already there, 0 broken" in capsys.readouterr().out
    assert set(Puzzle.objects.values_list("split", flat=True)) == {"val"}
    old = Puzzle.objects.get(type="Geometry_Click", source_id="old.png")
    geo, masks = get_type("Geometry_Click"), old.load_masks()
    # The published grader: within 25 px of the point, on the click as given.
    assert geo.verify(old.truth, [125, 50], masks).correct
    assert geo.verify(old.truth, [117.6, 67.6], masks).correct  # 24.9 px away
    assert not geo.verify(old.truth, [100, 75.5], masks).correct
    assert not geo.verify(old.truth, [118, 68], masks).correct  # 25.5 px away


def test_one_type_folder_imports_as_the_split_given(tmp_path):
    root = _captcha_data(tmp_path / "captcha_data") / "Dice_Count"
    assert import_captchaarena(root, name="one", split="test").imported == 1
    assert Puzzle.objects.get().split == "test"


def _dice_jpeg(root: Path, name: str, quality: int) -> bytes:
    values = np.random.default_rng(quality).integers(0, 256, (120, 200, 3), dtype=np.uint8)
    path = root / "Test" / "Dice_Count" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(values, "RGB").save(path, "JPEG", quality=quality)  # 4:2:0, as most sites write
    return path.read_bytes()


def _quantization(data: bytes) -> dict:
    return Image.open(io.BytesIO(data)).quantization


def test_an_imported_jpeg_is_imprinted_in_its_coefficients_and_a_coarse_one_encoded_again(tmp_path):
    fine, coarse = _dice_jpeg(tmp_path, "fine.jpg", 75), _dice_jpeg(tmp_path, "coarse.jpg", 20)
    (tmp_path / "Test" / "Dice_Count" / "ground_truth.json").write_text(
        json.dumps({"fine.jpg": {"sum": 4}, "coarse.jpg": {"sum": 5}})
    )
    assert import_captchaarena(tmp_path, name="jpegs").imported == 2
    served = {p.source_id: p.assets.get(key=p.public["image"]).file.read() for p in Puzzle.objects.all()}

    # Quality 75 (a DC step of 8): its own tables and coefficients, a keyed half of its blocks one step off.
    assert served["fine.jpg"] != fine and _quantization(served["fine.jpg"]) == _quantization(fine)
    decoded = np.asarray(Image.open(io.BytesIO(served["fine.jpg"])), dtype=np.int16)
    plain = np.asarray(Image.open(io.BytesIO(fine)), dtype=np.int16)
    assert 0 < np.abs(decoded - plain).max() <= 2
    # Quality 20 (a step of 40 would move a block by 5 levels): decoded, imprinted and written at 92.
    assert _quantization(served["coarse.jpg"]) != _quantization(coarse)
    assert _quantization(served["coarse.jpg"])[0][0] == 3
