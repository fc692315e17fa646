"""A dataset written by hand in the published CaptchaArena layout, every type, imported and graded.

The rules below are written from the published field semantics (docs/captchaarena-layout.md),
not from our verifiers: which field the published grader reads, its default, and how it compares
(rounding for masks, inclusive float bounds for boxes, distance <= tolerance, set equality).
Hold_Button is the one type where we keep our own rule: the published one is inverted.
"""

import io
import json
import math

import numpy as np
import pytest
from django.core.management import call_command
from PIL import Image

from puzzles.interop import import_captchaarena
from puzzles.interop_files import type_of_folder
from puzzles.models import Puzzle
from puzzles.registry import get_type, registry

pytestmark = pytest.mark.django_db

NAME = "handmade"
DATASET = f"import:{NAME}"


def _image(path, size=(200, 100), color=(90, 140, 200), fmt=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, fmt)


def _mask(path, size, *boxes):
    """A mask PNG, white on the inclusive boxes (x1, y1, x2, y2)."""
    mask = np.zeros((size[1], size[0]), dtype=np.uint8)
    for x1, y1, x2, y2 in boxes:
        mask[y1 : y2 + 1, x1 : x2 + 1] = 255
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(mask, "L").save(path)


def _write(folder, entries):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ground_truth.json").write_text(json.dumps(entries))


# --- the published rules --------------------------------------------------------------------------
def _mask_hit(folder, relative, x, y):
    """The published mask test: the click rounded (Python's round), white (> 127) in the mask."""
    mask = Image.open(folder / relative).convert("L")
    ix, iy = int(round(x)), int(round(y))
    return 0 <= ix < mask.width and 0 <= iy < mask.height and mask.getpixel((ix, iy)) > 127


def _in_area(area, x, y):
    (x1, y1), (x2, y2) = area
    return x1 <= x <= x2 and y1 <= y <= y2


def _geometry(folder, entry, answer):
    x, y = answer
    if "valid_area" in entry["answer"]:
        return _mask_hit(folder, entry["answer"]["valid_area"]["mask_path"], x, y)
    return _in_area(entry["answer"]["area"], x, y)


def _misleading(folder, entry, answer):
    x, y = answer
    if entry.get("mask_path"):
        return not _mask_hit(folder, entry["mask_path"], x, y)
    a = entry["avoid_area"]
    return not (a["x"] <= x <= a["x"] + a["width"] and a["y"] <= y <= a["y"] + a["height"])


def _within(target, tolerance):
    return lambda folder, entry, answer: math.dist(answer, entry[target]) <= entry.get("tolerance", tolerance)


def _cells(field):
    return lambda folder, entry, answer: set(answer) == set(entry.get(field, []))


def _option(field):
    return lambda folder, entry, answer: int(answer) == entry.get(field)


def _bingo(folder, entry, answer):
    return any(set(answer) == set(pair) for pair in entry["answer"])


def _click_order(folder, entry, answer):
    targets, tolerance = entry["answer"], entry.get("tolerance", 20)
    return len(answer) == len(targets) and all(math.dist(a, t) <= tolerance for a, t in zip(answer, targets))


def _hold_ours(folder, entry, answer):
    """Ours, kept: held at least hold_time. (Published: hold_time >= answer >= 0, inverted.)"""
    return answer >= entry.get("hold_time", 3)


RULES = {
    "Geometry_Click": _geometry,
    "Pick_Area": _geometry,
    "Misleading_Click": _misleading,
    "Place_Dot": _within("target_position", 15),
    "Slide_Puzzle": _within("target_position", 10),
    "Select_Animal": _cells("correct_patches"),
    "Patch_Select": _cells("correct_patches"),
    "Unusual_Detection": _cells("answer"),
    "Image_Recognition": _cells("correct_selections"),
    "Object_Match": _option("correct_option_index"),
    "Image_Matching": _option("correct_option_index"),
    "Coordinates": _option("correct_option_index"),
    "Dart_Count": _option("correct_option_index"),
    "Path_Finder": _option("correct_option"),
    "Connect_icon": _option("correct_option"),
    "Bingo": _bingo,
    "Dice_Count": lambda folder, entry, answer: int(answer) == int(entry["sum"]),
    "Rotation_Match": lambda folder, entry, answer: int(answer) % 360 == entry["correct_angle"] % 360,
    "Click_Order": _click_order,
    "Hold_Button": _hold_ours,
}


# --- the dataset: (folder, puzzle id, entry, probes), probes as the published page submits them -----
def _points(test):
    geo = test / "Geometry_Click_2"
    _image(geo / "g1.png")
    _image(geo / "g2.jpg", fmt="JPEG")
    _mask(geo / "masks" / "g1.png", (200, 100), (20, 40, 29, 59), (30, 50, 79, 59))  # an L
    mis = test / "Misleading_Click_2"
    _image(mis / "m1.png")
    _image(mis / "m2.png")
    _mask(mis / "masks" / "m1.png", (200, 100), (50, 20, 89, 49))
    pick = test / "Pick_Area_1"
    _image(pick / "p1.png", size=(120, 80))
    _mask(pick / "masks" / "p1.png", (120, 80), (10, 10, 59, 39))
    dot = test / "Place_Dot_2"
    _image(dot / "d1.png", size=(640, 480))
    _image(dot / "d2.png", size=(500, 400))
    # Mask edges: 29.4 rounds onto the L, 29.6 off it; 28.5 rounds to 28 and 29.5 to 30 (to even).
    mask_probes = [[25, 45], [29.4, 45], [29.6, 45], [28.5, 45], [29.5, 45], [60, 45], [60, 55], [199.6, 99.6]]
    return [
        (
            geo,
            "g1.png",
            {"question": "Click on the L.", "answer": {"valid_area": {"mask_path": "masks/g1.png"}}},
            mask_probes,
        ),
        (
            geo,
            "g2.jpg",
            {"question": "Click on the box.", "answer": {"area": [[10, 10], [50, 40]]}},
            [[30, 25], [50, 40], [50.4, 40], [9.6, 25], [10, 10], [60, 25]],
        ),
        (mis, "m1.png", {"mask_path": "masks/m1.png"}, [[10, 10], [60, 30], [49.4, 30], [49.6, 30], [89.5, 30]]),
        (
            mis,
            "m2.png",
            {"avoid_area": {"x": 50, "y": 20, "width": 40, "height": 30}},
            [[10, 10], [60, 30], [90, 30], [90.5, 30], [49.9, 20], [50, 50]],
        ),
        (
            pick,
            "p1.png",
            {
                "answer": {
                    "valid_area": {"mask_path": "masks/p1.png", "bbox": [10, 10, 59, 39]},
                    "area": [[10, 10], [59, 39]],
                }
            },
            [[30, 20], [59.4, 39.4], [59.6, 20], [100, 70]],
        ),
        (
            dot,
            "d1.png",
            {"target_position": [120.5, 40], "tolerance": 12},
            [[120.5, 40], [132.5, 40], [132.6, 40], [300, 300]],
        ),
        (dot, "d2.png", {"target_position": [200, 200]}, [[215, 200], [215.1, 200], [200, 185]]),
    ]


def _grids(test):
    select = test / "Select_Animal"  # the bare type name: a folder variant the published server also reads
    _image(select / "s1.jpg", size=(600, 400), fmt="JPEG")
    _image(select / "s2.jpg", size=(600, 400), fmt="JPEG")
    patch = test / "Patch_Select_2"
    _image(patch / "p1.png", size=(500, 500))
    _image(patch / "p2.png", size=(576, 576))
    unusual = test / "Unusual_Detection_2"
    _image(unusual / "u1.png", size=(600, 400))
    _image(unusual / "u2.png", size=(600, 400))
    recognition = test / "Image_Recognition_2"
    for k in range(9):
        _image(recognition / "rec0" / f"t{k}.png", size=(120, 120), color=(20 * k, 100, 200))
        size = (130, 100) if k == 4 else (174, 174)  # any size: the published page covers a 143 px cell
        _image(recognition / "r1_tiles" / f"tile_{k}.jpg", size=size, color=(200, 20 * k, 90), fmt="JPEG")
    bingo = test / "Bingo_1"
    _image(bingo / "b1.png", size=(480, 480))
    return [
        (
            select,
            "s1.jpg",
            {"correct_patches": [4], "grid_size": [2, 3], "target_object": "pig"},
            [[4], [3], [4, 1], []],
        ),
        (select, "s2.jpg", {"correct_patches": [5], "target_object": "fox"}, [[5], [0]]),  # grid: [2, 3] assumed
        (
            patch,
            "p1.png",
            {"correct_patches": [0, 6, 12], "grid_size": [5, 5], "target_object": "axe"},
            [[12, 0, 6], [0, 6], [0, 6, 12, 24]],
        ),
        (patch, "p2.png", {"correct_patches": [35, 16], "grid_size": [6, 6]}, [[16, 35], [16]]),
        (unusual, "u1.png", {"answer": [0, 5], "grid_size": [2, 3]}, [[5, 0], [0], [0, 5, 1]]),
        (unusual, "u2.png", {"answer": [2]}, [[2], []]),
        (
            recognition,
            "rec0",
            {
                "images": [f"t{k}.png" for k in range(9)],
                "correct_selections": [1, 5],
                "question": "Select all images containing a cat, then click submit",
            },
            [[5, 1], [1], [1, 5, 8]],
        ),
        (
            recognition,
            "r1.jpg",
            {
                "images": [f"tile_{k}.jpg" for k in range(9)],
                "subfolder": "r1_tiles",
                "correct_selections": [0],
                "grid_size": [2, 3],
            },  # the page lays out 3x3 anyway
            [[0], [8], []],
        ),
        (
            bingo,
            "b1.png",
            {"answer": [[0, 4], [2, 6]], "grid_size": [3, 3], "solution_line": [0, 4, 8]},
            [[4, 0], [2, 6], [0, 2], [0, 6]],
        ),
    ]


def _cycles(test):
    out = []
    for type_name, field, list_field in (
        ("Object_Match", "correct_option_index", "option_images"),
        ("Image_Matching", "correct_option_index", "option_images"),
        ("Coordinates", "correct_option_index", "option_images"),
        ("Dart_Count", "correct_option_index", "option_images"),
        ("Path_Finder", "correct_option", "options"),
        ("Connect_icon", "correct_option", "options"),
    ):
        where = test / f"{type_name}_1"
        _image(where / "ref.png", size=(480, 480))
        options = [f"opt{i}.png" for i in range(4)]
        for i, name in enumerate(options):
            _image(where / name, size=(480, 360), color=(40 * i, 90, 90))
        entry = {"reference_image": "ref.png", list_field: options, field: 2, "reference_number": 12}
        out.append((where, "opt0.png", entry, [0, 1, 2, 3, 2.0]))
    rotation = test / "Rotation_Match_1"
    _image(rotation / "hand.png", size=(300, 300))
    _image(rotation / "objects" / "arrow.png", size=(300, 300))
    for angle in range(0, 360, 45):
        _image(rotation / "objects" / f"arrow_{angle}.png", size=(300, 300), color=(angle % 256, 10, 10))
    out.append(
        (
            rotation,
            "arrow.png",
            {"reference_image": "hand.png", "object_base_image": "objects/arrow.png", "correct_angle": 135},
            [135, 495, -225, 90, 0],
        )
    )
    return out


def _others(test):
    dice = test / "Dice_Count_1"
    _image(dice / "d.png", size=(640, 400))
    slide = test / "Slide_Puzzle_2"
    _image(slide / "bg.png", size=(620, 360))
    _image(slide / "bg_piece.png", size=(40, 40))
    _image(slide / "big.png", size=(620, 360))
    _image(slide / "big_piece.png", size=(40, 40))  # larger than its 30 px hole: centred on it
    order = test / "Click_Order_1"
    _image(order / "c.png", size=(600, 400))
    _image(order / "c_order.png", size=(400, 170))
    hold = test / "Hold_Button_1"  # no image: the published page draws its button itself
    targets = [[30, 30], [150, 60], [80, 80]]
    return [
        (dice, "d.png", {"sum": 17}, ["17", "18", 17, " 17 "]),
        (
            slide,
            "bg.png",
            {"target_position": [100, 50], "component_image": "bg_piece.png", "hole_size": [40, 40]},
            [[100, 50], [109, 50], [111, 50], [100, 60], [100, 60.5]],
        ),
        (
            slide,
            "big.png",
            {"target_position": [300, 80], "component_image": "big_piece.png", "hole_size": [30, 30], "tolerance": 8},
            [[300, 80], [308, 80], [308.5, 80], [295, 85]],
        ),
        (
            order,
            "c.png",
            {"order_image": "c_order.png", "answer": targets, "tolerance": 20},
            [targets, [[45, 40], [150, 60], [80, 80]], [[50, 30], [150, 60], [80, 80]], targets[:2], targets[::-1]],
        ),
        (hold, "hold_0001", {"hold_time": 2.5}, [2.5, 3.0, 2.4, 0.0]),
    ]


def _broken(test, val):
    """One broken folder, a retired one, an unknown type, and entries the published server could not serve."""
    _write(val / "Bingo_1", {})
    (val / "Bingo_1" / "ground_truth.json").write_text("{not json")
    _write(test / "Dice_Count_deprecated", {"x.png": {"sum": 1}})  # the published server skips it: so do we
    (test / "Nonsense_Type_3").mkdir()
    _write(val / "Unusual_Detection_1", {"u.png": {"correct_patches": [1]}})  # the published grader reads `answer`
    _image(val / "Unusual_Detection_1" / "u.png", size=(600, 400))
    _write(val / "Image_Recognition_1", {"gone": {"images": ["a.png"] * 9, "correct_selections": [0]}})


@pytest.fixture
def published(tmp_path):
    """The dataset written; every entry with its probes, by type."""
    test, val = tmp_path / "Test", tmp_path / "Validation"
    entries = _points(test) + _grids(test) + _cycles(test) + _others(test)
    by_folder: dict = {}
    for folder, puzzle_id, entry, _ in entries:
        by_folder.setdefault(folder, {})[puzzle_id] = entry
    for folder, folder_entries in by_folder.items():
        _write(folder, folder_entries)
    _broken(test, val)
    _image(val / "Dice_Count_1" / "v.png", size=(640, 400))
    _write(val / "Dice_Count_1", {"v.png": {"sum": 3}})
    return tmp_path, entries


def _answer(type_name, entry, published_answer):
    """Our answer for what the published page submits: a slide gives the hole's top left, ours the piece's."""
    if type_name != "Slide_Puzzle":
        return published_answer
    offset = (40 - entry["hole_size"][0]) / 2  # every piece here is 40 px
    return [published_answer[0] - offset, published_answer[1] - offset]


def _type(folder):
    return get_type(type_of_folder(folder.name)).name


def test_every_type_imports_and_grades_by_the_published_rules(published):
    root, entries = published
    result = import_captchaarena(root, name=NAME)
    assert {_type(folder) for folder, *_ in entries} == set(registry().names())
    assert result.imported == len(entries) + 1  # and the Validation Dice_Count
    broken = "\n".join(result.broken)
    assert len(result.broken) == 4, broken
    assert "Bingo_1/ground_truth.json" in broken and "Nonsense_Type_3: not a known puzzle type" in broken
    assert "'u.png': no answer list (the published grader reads the cells from answer)" in broken
    assert "'gone'" in broken and "deprecated" not in broken

    stored = Puzzle.objects.filter(dataset=DATASET)
    assert all(p.truth_public for p in stored)
    assert set(stored.values_list("split", flat=True)) == {"test", "val"}
    for folder, puzzle_id, entry, probes in entries:
        type_name = _type(folder)
        puzzle = stored.get(type=type_name, source_id=puzzle_id)
        puzzle_type, masks = get_type(type_name), puzzle.load_masks()
        for probe in probes:
            expected = RULES[type_name](folder, entry, probe)
            verdict = puzzle_type.verify(puzzle.truth, _answer(type_name, entry, probe), masks)
            assert verdict.correct == expected, (type_name, puzzle_id, probe, verdict.reason)
        assert puzzle_type.verify(puzzle.truth, puzzle_type.solution(puzzle.truth), masks).correct


def test_the_page_data_comes_from_the_published_fields(published):
    root, _ = published
    import_captchaarena(root, name=NAME)
    stored = Puzzle.objects.filter(dataset=DATASET)

    tiled = stored.get(type="Image_Recognition", source_id="rec0")
    assert tiled.public["image_size"] == [3 * 126, 3 * 126] and tiled.public["grid_size"] == [3, 3]
    assert tiled.public["instruction"] == "Select all images containing a cat, then click submit"
    assert stored.get(type="Image_Recognition", source_id="r1.jpg").assets.get().file.name.endswith(".jpg")

    hold = stored.get(type="Hold_Button")
    assert hold.public["image_size"] == [560, 320] and hold.assets.count() == 1
    assert hold.public["instruction"] == get_type("Hold_Button").instruction

    order = stored.get(type="Click_Order")
    assert order.public["reference"] == "reference" and order.public["reference_size"] == [400, 170]

    rotation = stored.get(type="Rotation_Match")
    assert sorted(map(int, rotation.public["rotations"])) == list(range(0, 360, 45))
    assert rotation.assets.count() == 9  # eight angles and the reference

    # The published page writes these two instructions itself, from the target object.
    assert stored.get(source_id="s2.jpg").public["instruction"] == "Pick a fox"
    assert stored.get(type="Patch_Select", source_id="p1.png").public["instruction"] == "Select all squares with axe"
    assert stored.get(source_id="s2.jpg").public["grid_size"] == [2, 3]
    assert stored.get(source_id="r1.jpg").public["grid_size"] == [3, 3]
    assert stored.get(source_id="u2.png").public["grid_size"] == [2, 3]
    big = stored.get(source_id="big.png")
    assert big.public["hole_size"] == [30, 30] and big.public["start_position"] == [0, 75.0]


def test_an_interrupted_import_resumes(published):
    root, _ = published
    first = import_captchaarena(root, name=NAME)
    lost = Puzzle.objects.filter(dataset=DATASET, type__in=["Bingo", "Click_Order", "Dice_Count"])
    assert lost.count() == 4
    lost.delete()
    again = import_captchaarena(root, name=NAME)
    assert again.imported == 4 and again.skipped == first.imported - 4
    assert len(again.broken) == len(first.broken)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_our_page_replays_every_imported_puzzle(published):
    """Tiles composed into a grid, a hold without an image, a piece larger than its hole: the live
    page shows them, and each reference answer replayed on it verifies by the server's verdict."""
    root, entries = published
    import_captchaarena(root, name=NAME)
    out = io.StringIO()
    call_command("replay", "--split", "test", "--dataset", DATASET, "--workers", "3", stdout=out, stderr=io.StringIO())
    assert out.getvalue().strip().endswith(f"replay: {len(entries)}/{len(entries)} verified"), out.getvalue()
    assert f"datasets: {DATASET} ({len(entries)})" in out.getvalue()
