"""The published CaptchaArena layout on disk: which folder holds which split and type, and how
its files are named (facts from the published server, page and replay client; shared by the
import and the export).

    <root>/<Train|Val|Validation|Test>/<Type>_<n>/ground_truth.json      {puzzle_id: entry}
                                                 ground_truth_cu.json   entry + answer_cu_kind, answer_cu
                                                 images, masks, tiles (paths relative to the type folder)

A root may also be one split folder itself (the published server is pointed at `data/Test`), or
any folder of type folders imported as a split named on the command line (its `captcha_data`).
Files are read and written through puzzles/contained.py (no symbolic link followed, size caps).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

SPLIT_DIRS = {"train": "Train", "val": "Val", "test": "Test"}  # what an export writes
_SPLIT_NAMES = {"train": "train", "val": "val", "validation": "val", "test": "test"}
SPLIT_FOLDER_NAMES = ("Train", "Val", "Validation", "Test")  # as the published data spells them; any case reads
RETIRED_SUFFIX = "_deprecated"  # the published server skips such type folders: kept for reference only
# `<Type>_<n>` (the published data: n is the split's size) or the bare type name.
_TYPE_DIR = re.compile(r"^(?P<type>.+?)(?:_(?P<count>\d+))?$")
ROTATION_ANGLES = tuple(range(0, 360, 45))
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")


def split_of(folder: Path) -> str | None:
    """Our split name for a published split folder ("Validation" is val), or None."""
    return _SPLIT_NAMES.get(folder.name.lower())


def type_of_folder(name: str) -> str:
    """The type a type folder holds: "Bingo_200" and "Bingo" both hold Bingo."""
    named = _TYPE_DIR.match(name)  # matches every non-empty name
    return named["type"] if named else name


def type_folder_name(type_name: str, count: int) -> str:
    """The folder an export writes a type's puzzles to: the published `<Type>_<count>`."""
    return f"{type_name}_{count}"


def is_retired(folder: Path) -> bool:
    return folder.name.endswith(RETIRED_SUFFIX)


def rotation_file(object_base_image: str, angle: int) -> str:
    """The file the published page shows for a rotation: `<base>_<angle>.png`, whatever the base's suffix."""
    base = PurePosixPath(object_base_image)
    return str(base.with_name(f"{base.stem}_{angle}.png"))


def tile_path(subfolder: str, name: str) -> str:
    """Where the published page reads an Image_Recognition tile: `<subfolder>/<name>`."""
    return f"{subfolder}/{name}"


def stem_of(source_id: str) -> str:
    """A puzzle id without its image suffix ("00012.jpg" -> "00012"), for an export's file names."""
    path = PurePosixPath(source_id)
    return path.stem if path.suffix.lower() in IMAGE_SUFFIXES else source_id
