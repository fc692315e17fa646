"""Untrusted folders are read without leaving them (puzzles/contained.py), on real files and links."""

import json
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from PIL import Image, UnidentifiedImageError

from puzzles.contained import (
    Refused,
    nesting,
    output_path,
    read_bytes,
    read_entries,
    read_image,
    read_json,
    regular_file,
    regular_folder,
    safe_name,
    storable,
)
from puzzles.interop_import import import_plan


@pytest.fixture
def tree(tmp_path):
    """root/ with a file, a folder, and outside/ holding a secret the links aim at."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "Test" / "Bingo").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET_KEY=s3cret")
    (root / "Test" / "Bingo" / "a.json").write_text('{"x": [1, 2]}')
    return root, outside


def test_a_regular_file_under_the_root_is_read(tree):
    root, _ = tree
    assert read_json(root, root / "Test" / "Bingo" / "a.json") == {"x": [1, 2]}


def test_a_link_to_a_file_outside_is_refused(tree):
    root, outside = tree
    (root / "Test" / "Bingo" / "shot.png").symlink_to(outside / "secret.txt")
    with pytest.raises(Refused, match="symbolic link"):
        read_bytes(root, root / "Test" / "Bingo" / "shot.png", limit=1000)


def test_a_link_that_stays_inside_is_refused_too(tree):
    root, _ = tree
    (root / "Test" / "Bingo" / "b.json").symlink_to(root / "Test" / "Bingo" / "a.json")
    with pytest.raises(Refused, match="symbolic link"):
        read_json(root, root / "Test" / "Bingo" / "b.json")


def test_a_linked_folder_on_the_way_is_refused(tree):
    root, outside = tree
    (root / "Test" / "Geometry_Click").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Refused, match="Geometry_Click is a symbolic link"):
        regular_file(root, root / "Test" / "Geometry_Click" / "secret.txt")
    with pytest.raises(Refused, match="Geometry_Click is a symbolic link"):
        regular_folder(root, root / "Test" / "Geometry_Click")


def test_a_path_outside_the_root_or_climbing_out_is_refused(tree):
    root, outside = tree
    with pytest.raises(Refused, match="not under"):
        read_bytes(root, outside / "secret.txt", limit=1000)
    with pytest.raises(Refused, match="climbs out"):
        read_bytes(root, root / "Test" / ".." / ".." / "outside" / "secret.txt", limit=1000)


def test_sizes_are_capped_before_reading(tree):
    root, _ = tree
    big = root / "Test" / "big.json"
    big.write_bytes(b"[" + b"0," * 1000 + b"0]")
    with pytest.raises(Refused, match="over the 100 read"):
        read_json(root, big, limit=100)


def test_a_small_file_is_read_without_reserving_its_cap(tree):
    # Every image of an import is read under a 32 MiB cap: reserving the cap for each read cost
    # a fifth of a millisecond a file. Memory, not time, is what this test holds.
    root, _ = tree
    path = root / "Test" / "Bingo" / "a.json"
    tracemalloc.start()
    try:
        assert read_bytes(root, path, limit=32 * 1024 * 1024) == b'{"x": [1, 2]}'
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024


def test_deep_json_is_refused_by_depth_and_past_the_parser_stack(tree):
    root, _ = tree
    deep, deeper = root / "deep.json", root / "deeper.json"
    deep.write_text("[" * 40 + "]" * 40)
    deeper.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(Refused, match="nests deeper than 32"):
        read_json(root, deep)
    with pytest.raises(Refused, match="not JSON"):
        read_json(root, deeper)
    assert nesting(json.loads("[" * 5 + "]" * 5)) == 5


@pytest.mark.parametrize(
    "name", ["../../../somewhere/pwn", "a/b", "a\\b", "..", ".hidden", "a\x00b", "a\nb", "x" * 201, "", 7]
)
def test_names_that_could_leave_a_folder_are_refused(name):
    with pytest.raises(Refused):
        safe_name(name)


def test_published_ids_are_names():
    assert safe_name("00012.jpg") == "00012.jpg"
    assert safe_name("Image Recognition 7") == "Image Recognition 7"


def test_an_output_path_stays_in_its_root(tmp_path):
    root = tmp_path / "out"
    root.mkdir()
    assert output_path(root, "Test", "Bingo_1", "00001.png") == root / "Test" / "Bingo_1" / "00001.png"
    with pytest.raises(Refused, match="leaves the output folder"):
        output_path(root, "Test", "../../../pwn.jpg")
    (root / "link").symlink_to(tmp_path)
    with pytest.raises(Refused, match="symbolic link"):
        output_path(root, "link")


def test_a_hard_link_a_fifo_and_an_image_format_past_the_published_ones_are_refused(tree, tmp_path):
    root, outside = tree
    (root / "secret.txt").hardlink_to(outside / "secret.txt")  # a regular file, the site's elsewhere
    with pytest.raises(Refused, match="hard link"):
        read_bytes(root, root / "secret.txt", limit=1000)
    os.mkfifo(root / "fifo")
    with pytest.raises(Refused, match="not a regular file"):
        read_bytes(root, root / "fifo", limit=1000)
    Image.new("RGB", (10, 10)).save(root / "a.tiff", "TIFF")  # EPS, another format, would run Ghostscript
    with pytest.raises(UnidentifiedImageError):  # an OSError, as for any file that is no image
        read_image(root, root / "a.tiff")


def test_json_is_capped_at_16_mib_by_default(tmp_path):
    """64 MiB of JSON took ~850 MB to parse; the published files are a few MB."""
    at_cap, over = tmp_path / "at.json", tmp_path / "over.json"
    at_cap.write_bytes(b'"' + b"a" * (16 * 1024 * 1024 - 2) + b'"')
    over.write_bytes(b'"' + b"a" * (16 * 1024 * 1024 - 1) + b'"')
    assert len(read_json(tmp_path, at_cap)) == 16 * 1024 * 1024 - 2
    with pytest.raises(Refused, match="16,777,217 bytes, over the 16,777,216 read"):
        read_json(tmp_path, over)


def test_a_name_is_capped_in_bytes_not_characters():
    assert safe_name("é" * 100) == "é" * 100
    with pytest.raises(Refused, match="too long"):
        safe_name("é" * 150)  # 300 bytes: no file name


def test_values_the_database_cannot_keep_refuse_their_entry_alone(tmp_path):
    (tmp_path / "g.json").write_text('{"good": {"p": "a"}, "nul": {"p": "a\\u0000b"}, "lone": {"p": "\\ud800"},'
                                     ' "nan": {"x": NaN}, "inf": {"x": [1e999]}, "key": {"\\u0000": 1}}')  # fmt: skip
    entries, refused = read_entries(tmp_path, tmp_path / "g.json")
    assert list(entries) == ["good"] and sorted(refused) == ["inf", "key", "lone", "nan", "nul"]
    assert storable({"p": "a\\u0000b"})  # a backslash then u0000 is text, not a NUL


def _as_nobody(action) -> str:
    """What `action` returns or raises run as user nobody (as root every file is readable), in a child."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child: never back into pytest
        os.close(reader)
        try:
            os.setgid(65534)
            os.setuid(65534)
            message = f"returned {action()!r}"
        except BaseException as error:  # reported to the parent, whatever it is
            message = f"{type(error).__name__}: {error}"
        os.write(writer, message.encode("utf-8", "replace"))
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        message = pipe.read().decode()
    os.waitpid(child, 0)
    return message


@pytest.fixture
def open_tree():
    """A folder user nobody can enter (pytest's tmp_path is root's alone), removed afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        yield Path(folder)


def test_an_unreadable_file_or_folder_is_refused_not_raised(open_tree):
    (open_tree / "a.json").write_text("{}")
    (open_tree / "a.json").chmod(0)
    message = _as_nobody(lambda: read_json(open_tree, open_tree / "a.json"))
    assert message.startswith("Refused: a.json: Permission denied"), message
    (open_tree / "Test").mkdir(mode=0)
    message = _as_nobody(lambda: import_plan(open_tree).broken)
    assert message == f"returned ['{open_tree / 'Test'}: Permission denied']", message
