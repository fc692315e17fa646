"""The published client's names for our puzzles: type folders, puzzle ids, page URLs, output folders.

The published dataset keeps a type's puzzles in a folder `<Type>_<count>` (e.g. Bingo_200) under
ids that are image file names (bingo13.png); its client names a rollout's folder
`<type_folder lower>/<type_folder>_<id stem>/[rollout_<n>/]` and writes the type folder and the
id stem into summary.json. Our export of a bank (puzzles/interop.py) uses the same names: the
count of the type's puzzles in the dataset and split, and the main image's file name.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from puzzles.interop_files import stem_of, type_folder_name
from puzzles.models import Asset, Puzzle
from puzzles.registry import UnknownPuzzleType, get_type

DEFAULT_PAGE = "http://127.0.0.1:7860"  # the published client's default --url
TYPE_FOLDER = re.compile(r"^(?P<type>.+?)(?:_(?P<count>\d+))?$")


def type_folder(puzzle: Puzzle) -> str:
    """ "Bingo_200": the type and how many puzzles of it the dataset's split holds."""
    count = (
        Puzzle.objects.filter(dataset=puzzle.dataset, split=puzzle.split, type=puzzle.type)
        .exclude(status=Puzzle.Status.RETIRED)
        .count()
    )
    return type_folder_name(puzzle.type, count)


def puzzle_file_id(puzzle: Puzzle) -> str:
    """The id the published layout gives the puzzle: its main image's file name, as an export of
    the bank names it (the source id without its image suffix, then the stored image's)."""
    main = Asset.objects.filter(puzzle=puzzle, key=puzzle.public.get("image")).values_list("file", flat=True).first()
    return stem_of(puzzle.source_id) + (PurePosixPath(main).suffix if main else ".png")


def id_stem(puzzle_id: str) -> str:
    """The client's folder-name form of a published id: the last path part without its extension
    (a stored puzzle's is stem_of(source_id))."""
    return PurePosixPath(puzzle_id).stem.replace("/", "_").replace(" ", "_")


def page_url(base: str, folder: str, puzzle_id: str) -> str:
    """The per-puzzle page URL exactly as the client builds it (no encoding, no "/" before "?")."""
    return f"{base.split('?')[0].rstrip('/')}?single_puzzle=true&puzzle_type={folder}&puzzle_id={puzzle_id}"


def type_of_folder(folder: str) -> str | None:
    """Our type name for a published type folder name ("Bingo_200" -> "Bingo"); None if unknown."""
    match = TYPE_FOLDER.match(folder)
    for candidate in (folder, match["type"] if match else folder):
        try:
            return get_type(candidate).name
        except UnknownPuzzleType:
            continue
    return None
