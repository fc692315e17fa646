"""A crafted dataset against the real import and export commands (puzzles/contained.py): links
out of the folder, ids that climb out of the export folder, a 9600x9600 image, JSON nested past
the parser's stack, an over-long field and a wrong type, beside good entries. The good entries
import, each bad one is named, nothing outside the folder is read, and the export stays in its
own folder."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from PIL import Image

from puzzles.contained import IMAGE_MAX_PIXELS
from puzzles.models import Puzzle
from puzzles.services import bank_generate

pytestmark = pytest.mark.django_db

SECRET = "SECRET"
DEEP = "[" * 100_000 + "]" * 100_000


def _image(path: Path, size=(200, 100), mode="RGB") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, size, 90).save(path, "PNG")


def _entries(folder: Path, entries: dict, *, raw: str = "") -> None:
    """ground_truth.json: the entries, and `raw` JSON members written as they are (too deep to dump)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(entries)
    (folder / "ground_truth.json").write_text(text[:-1] + (", " + raw if raw else "") + "}")


def _outside(tmp_path: Path) -> Path:
    """What the links aim at: a secret, a type folder and a ground_truth.json that name it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "somewhere").mkdir()  # where `../../../somewhere/pwn` lands from an export's type folder
    (outside / "secret.txt").write_text(SECRET)
    _image(outside / "shot.png")
    _entries(outside / "dice", {"SECRET.png": {"sum": 3, "prompt": SECRET}})
    _image(outside / "dice" / "SECRET.png")
    (outside / "truth.json").write_text(json.dumps({"g.png": {"sum": 2, "prompt": SECRET}}))
    return outside


def _crafted(tmp_path: Path) -> Path:
    outside, test = _outside(tmp_path), tmp_path / "data" / "Test"
    dice = test / "Dice_Count_9"
    for name in ("good1.png", "good2.png", "=1+1"):
        _image(dice / name)
    _image(dice / "huge.png", (9600, 9600), "L")  # 110 KB on disk, 92 Mpx
    (dice / "link.png").symlink_to(outside / "shot.png")
    (dice / "secret.png").symlink_to(outside / "secret.txt")
    good = {"good1.png": {"sum": 7}, "good2.png": {"sum": 8}, "=1+1": {"sum": 2}}
    bad = {"huge.png": {"sum": 6}, "link.png": {"sum": 4}, "secret.png": {"sum": 1}}
    bad["long.png"] = {"sum": 5, "prompt": "x" * 100_000}
    _entries(dice, {**good, **bad}, raw=f'"deep.png": {DEEP}')
    (test / "Dice_Count_7").symlink_to(outside / "dice", target_is_directory=True)
    _image(test / "Dice_Count_8" / "g.png")
    (test / "Dice_Count_8" / "ground_truth.json").symlink_to(outside / "truth.json")
    geo = test / "Geometry_Click_2"
    _image(geo / "geo.png")
    _image(geo / "typed.png")
    _entries(geo, {"geo.png": {"answer": {"area": [[10, 10], [50, 40]]}}, "typed.png": {"answer": "everywhere"}})
    match = test / "Object_Match_3"  # its picture is an option, not a file named by the id
    for name in ("ref.png", "o0.png", "o1.png"):
        _image(match / name)
    options = {"reference_image": "ref.png", "option_images": ["o0.png", "o1.png"], "correct_option_index": 1}
    _entries(match, dict.fromkeys(("../../../somewhere/pwn", "a/b", "match_ok"), options))
    (test / "Bingo_1").mkdir()
    (test / "Bingo_1" / "ground_truth.json").write_text(DEEP)
    return tmp_path / "data"


def _import(root: Path, *args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("puzzles", "import-captchaarena", str(root), "--name", "crafted", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _export_bank(out: Path) -> tuple[str, str]:
    """The export of generated bank 5's test split to out: what it printed, and its warnings."""
    printed, warned = io.StringIO(), io.StringIO()
    call_command(
        "puzzles", "export-captchaarena", str(out), "--split", "test", "--dataset", "generated:5",
        stdout=printed, stderr=warned,
    )  # fmt: skip
    return printed.getvalue(), warned.getvalue()


def _named(err: str, what: str, why: str) -> bool:
    return any(what in line and why in line for line in err.splitlines())


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


def test_a_crafted_folder_imports_its_good_entries_and_names_each_bad_one(tmp_path):
    root = _crafted(tmp_path)
    out, err = _import(root, "--workers", "1")

    imported = set(Puzzle.objects.filter(dataset="import:crafted").values_list("type", "source_id"))
    assert imported == {
        ("Dice_Count", "good1.png"),
        ("Dice_Count", "good2.png"),
        ("Dice_Count", "=1+1"),  # a formula-looking id is a valid name: CSV cells escape it
        ("Geometry_Click", "geo.png"),
        ("Object_Match", "match_ok"),
    }
    assert "import: 5 imported, 0 already there, 11 broken" in out
    assert _named(err, "Dice_Count_7", "symbolic link")
    assert _named(err, "Dice_Count_8/ground_truth.json", "symbolic link")
    assert _named(err, "'link.png'", "symbolic link")
    assert _named(err, "'secret.png'", "symbolic link")
    assert _named(err, "'huge.png'", f"over the {IMAGE_MAX_PIXELS:,} pixels")
    assert _named(err, "'deep.png'", "does not parse")
    assert _named(err, "'long.png'", "100,000 characters")
    assert _named(err, "'typed.png'", "answer is neither an object nor a point")
    assert _named(err, "'../../../somewhere/pwn'", "separator")
    assert _named(err, "'a/b'", "separator")
    assert _named(err, "Bingo_1/ground_truth.json", "not an object")


def test_nothing_outside_the_folder_is_read_and_the_export_stays_in_its_own(tmp_path, settings):
    root = _crafted(tmp_path)
    _import(root, "--workers", "1")
    puzzles = Puzzle.objects.filter(dataset="import:crafted")
    assert SECRET not in json.dumps([[p.source_id, p.public, p.truth] for p in puzzles])
    media = Path(settings.MEDIA_ROOT).rglob("*")
    assert all(SECRET.encode() not in path.read_bytes() for path in media if path.is_file())
    before = _files(tmp_path)

    out = tmp_path / "out"
    call_command("puzzles", "export-captchaarena", str(out), "--split", "test", "--dataset", "import:crafted")

    written = _files(tmp_path) - before
    assert written and all(name.startswith("out/") for name in written)
    assert _files(tmp_path / "outside") == {
        "secret.txt",
        "shot.png",
        "truth.json",
        "dice/ground_truth.json",
        "dice/SECRET.png",
    }
    assert not any((tmp_path / "somewhere").iterdir())


def test_an_export_refuses_stored_ids_that_would_leave_its_folder(tmp_path):
    """Defence in depth: puzzles imported before ids were checked are named and not written."""
    (tmp_path / "somewhere").mkdir()
    bank_generate(split="test", per_type=3, types=["Hold_Button"], bank_seed=5, workers=1)
    stored = Puzzle.objects.filter(dataset="generated:5").order_by("pk")
    for puzzle, unsafe in zip(stored, ("../../../somewhere/pwn", "a/b")):
        Puzzle.objects.filter(pk=puzzle.pk).update(source_id=unsafe)
    out, err = _export_bank(tmp_path / "out")

    assert "export: 1 puzzles of 1 types" in out
    assert _named(err, "../../../somewhere/pwn", "not written")
    assert _named(err, "'a/b'", "not written")
    assert not any((tmp_path / "somewhere").iterdir())
    assert {p.relative_to(tmp_path / "out").parts[0] for p in (tmp_path / "out").rglob("*")} == {"Test"}


def test_pillow_refuses_what_the_cap_refuses():
    assert Image.MAX_IMAGE_PIXELS == IMAGE_MAX_PIXELS


def test_an_image_just_over_the_cap_is_refused_from_its_header(tmp_path):
    """Under Pillow's refusal (twice the cap) but over ours: refused before a pixel is decoded."""
    _image(tmp_path / "Test" / "Dice_Count" / "big.png", (3000, 3000), "L")  # 9 Mpx
    _entries(tmp_path / "Test" / "Dice_Count", {"big.png": {"sum": 6}})
    _, err = _import(tmp_path / "Test")
    assert _named(err, "'big.png'", f"3000x3000, over the {IMAGE_MAX_PIXELS:,} pixels")
    assert not Puzzle.objects.exists()


def test_values_the_database_cannot_keep_and_a_hard_link_are_named_the_rest_imported(tmp_path):
    """A NUL, a lone surrogate or NaN in an entry (PostgreSQL's jsonb refuses them, psycopg cannot
    encode the surrogate) would stop the batch it is stored in; a hard link to a file outside is a
    regular file in the folder. Each is named, its type folder's other entries imported."""
    outside = _outside(tmp_path)
    dice = tmp_path / "data" / "Test" / "Dice_Count_9"
    for name in ("good.png", "nul.png", "surrogate.png", "nan.png"):
        _image(dice / name)
    (dice / "hard.png").hardlink_to(outside / "shot.png")
    entries = {"good.png": {"sum": 7}, "nul.png": {"sum": 3, "prompt": "a\x00b"}, "hard.png": {"sum": 2}}
    entries["surrogate.png"] = {"sum": 4, "prompt": "a \ud800"}  # dumped as the escape \ud800
    _entries(dice, entries, raw='"nan.png": {"sum": 5, "prompt": "p", "x": NaN}')

    _, err = _import(tmp_path / "data", "--workers", "1")

    assert set(Puzzle.objects.values_list("source_id", flat=True)) == {"good.png"}
    for name in ("nul.png", "surrogate.png", "nan.png"):
        assert _named(err, repr(name), "the database cannot keep"), err
    assert _named(err, "'hard.png'", "hard link")


def test_a_broken_key_after_an_entry_too_deep_for_the_parser_names_its_file(tmp_path):
    """Parsed entry by entry (one is past the parser's stack), a key with a control character is
    no JSON: its file is named, the other type folders imported."""
    test = tmp_path / "data" / "Test"
    _image(test / "Dice_Count_1" / "good.png")
    _entries(test / "Dice_Count_1", {"good.png": {"sum": 7}})
    _image(test / "Dice_Count_2" / "g.png")
    _entries(test / "Dice_Count_2", {"g.png": {"sum": 7}}, raw=f'"deep": {DEEP}, "b\x01": 1')

    _, err = _import(tmp_path / "data", "--workers", "1")

    assert list(Puzzle.objects.values_list("source_id", flat=True)) == ["good.png"]
    assert _named(err, "Dice_Count_2/ground_truth.json", "not JSON")


def test_our_exports_image_keys_and_mask_names_must_be_names_that_fit(tmp_path):
    """arena_assets keys become Asset.key (64 characters) and file names on export, arena_masks
    names file names: one too long or with a separator is named, the others imported."""
    bank_generate(split="test", per_type=3, types=["Geometry_Click"], bank_seed=5, workers=1)
    call_command("puzzles", "export-captchaarena", str(tmp_path / "out"), "--split", "test", "--dataset", "generated:5")
    (folder,) = (tmp_path / "out" / "Test").iterdir()
    entries = json.loads((folder / "ground_truth.json").read_text())
    long_key, bad_mask, good = sorted(entries)
    entries[long_key]["arena_assets"]["k" * 65] = entries[long_key]["arena_assets"]["image"]
    masks = entries[bad_mask]["arena_masks"]
    masks["../m"] = next(iter(masks.values()))
    (folder / "ground_truth.json").write_text(json.dumps(entries))

    _, err = _import(tmp_path / "out", "--workers", "1")

    assert list(Puzzle.objects.filter(dataset="import:crafted").values_list("source_id", flat=True)) == [good]
    assert _named(err, repr(long_key), "arena_assets key 'kkkk")
    assert _named(err, repr(bad_mask), "arena_masks name '../m'")


def test_an_export_names_a_stored_key_or_id_that_cannot_name_a_file_and_writes_the_rest(tmp_path):
    """Defence in depth: a stored image key with a separator, an id of 300 bytes (150 'é', under 255
    characters): each puzzle named and not written, the others exported."""
    bank_generate(split="test", per_type=3, types=["Click_Order"], bank_seed=5, workers=1)
    stored = list(Puzzle.objects.filter(dataset="generated:5").order_by("pk"))
    stored[0].assets.filter(key="reference").update(key="a/b")
    stored[0].public = {**stored[0].public, "reference": "a/b"}
    stored[0].save(update_fields=["public"])
    Puzzle.objects.filter(pk=stored[1].pk).update(source_id="é" * 150)
    out, err = _export_bank(tmp_path / "out")

    assert "export: 1 puzzles of 1 types" in out
    assert _named(err, f"puzzle {stored[0].uid}", "not written")
    assert _named(err, "'éééé", "too long")
    (folder,) = (tmp_path / "out" / "Test").iterdir()
    assert len(json.loads((folder / "ground_truth.json").read_text())) == 1
