"""Untrusted folders are read without leaving them (puzzles/contained.py), on real files and links."""

import json

import pytest

from puzzles.contained import (
    Refused,
    nesting,
    output_path,
    read_bytes,
    read_json,
    regular_file,
    safe_name,
    subfolders,
)


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


def test_a_linked_folder_on_the_way_is_refused_and_not_listed(tree):
    root, outside = tree
    (root / "Test" / "Geometry_Click").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Refused, match="Geometry_Click is a symbolic link"):
        regular_file(root, root / "Test" / "Geometry_Click" / "secret.txt")
    assert [p.name for p in subfolders(root, root / "Test")] == ["Bingo"]


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
