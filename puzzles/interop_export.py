"""Exporting a dataset in the published CaptchaArena layout (puzzles/interop_files.py), for the
published server, page and replay client as they are.

Every file is written through contained.output_path: a path that would leave the export's folder
(or go through a symbolic link in it) is refused. A puzzle whose id cannot be one file name
(imported before ids were checked) is named in the result and not written.

Per puzzle: its images as served (the main one named after the puzzle id), its masks, and the
files the published page asks for beyond those: `<base>_<angle>.png` for each rotation, the tiles
of a tiled grid in `<id>_tiles/`. Per entry: the published fields (`prompt` and `question` for
the instruction, every image field naming its file) and, for our own import, `arena_public`,
`arena_assets`, `arena_truth` and `arena_masks`, which bring the puzzle back exactly.

ground_truth_cu.json holds each entry's published fields with the computer-use answer
(answer_cu_kind, answer_cu; PuzzleType.cu_answer): screen-coordinate tool calls measured on the
published page where the published data uses them (puzzles/layout.py).
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from puzzles.bank import bank_key
from puzzles.contained import Refused, name_problem, output_path
from puzzles.drawing import masks as mask_io
from puzzles.interop_files import SPLIT_DIRS, rotation_file, stem_of, tile_path, type_folder_name
from puzzles.models import Puzzle, masks_from_bytes
from puzzles.registry import get_type, type_names
from puzzles.types.base import PuzzleType
from puzzles.workers import in_workers

PNG_LEVEL = 1  # files the published page needs as PNG: written fast, read once


@dataclass
class ExportResult:
    puzzles: int = 0
    types: int = 0
    refused: list[str] = field(default_factory=list)  # puzzles not written, each with why


@dataclass(frozen=True)
class _Job:
    """One puzzle to write: its data, its served files (key -> path on disk), where it goes."""

    type: str
    stem: str
    public: dict[str, Any]
    truth: dict[str, Any]
    masks: bytes
    files: dict[str, str]
    folder: str
    uid: str


def export_captchaarena(
    root: str | Path,
    *,
    split: str,
    types: list[str] | None = None,
    dataset: str | None = None,
    workers: int | None = None,
) -> ExportResult:
    """Write the dataset's puzzles of a split (default: the deployment's bank) under root."""
    dataset = dataset or bank_key().label
    puzzles = Puzzle.objects.filter(dataset=dataset, split=split).exclude(status=Puzzle.Status.RETIRED)
    if types:
        puzzles = puzzles.filter(type__in=type_names(types))
    result = ExportResult()
    for type_name in sorted(set(puzzles.values_list("type", flat=True))):
        of_type = _named_safely(list(puzzles.filter(type=type_name).prefetch_related("assets")), result)
        if not of_type:
            continue
        folder = output_path(Path(root), SPLIT_DIRS[split], type_folder_name(type_name, len(of_type)))
        refused = _export_type(of_type, folder, workers or os.cpu_count() or 1)
        result.refused += refused
        result.puzzles += len(of_type) - len(refused)
        result.types += 1
    return result


def _named_safely(puzzles: list[Puzzle], result: ExportResult) -> list[Puzzle]:
    """The puzzles whose id can name their files; the others named in the result."""
    kept = []
    for puzzle in puzzles:
        if why := name_problem(puzzle.source_id, what=f"{puzzle.type} puzzle {puzzle.uid}: its id"):
            result.refused.append(f"{why}: not written")
        else:
            kept.append(puzzle)
    return kept


def _export_type(puzzles: list[Puzzle], folder: Path, workers: int) -> list[str]:
    """Write a type's puzzles and its ground_truth files; the puzzles not written, each with why."""
    output_path(folder, "masks").mkdir(parents=True, exist_ok=True)
    stems = Counter(stem_of(p.source_id) for p in puzzles)
    jobs = [
        _Job(
            type=p.type,
            # A puzzle id without its suffix names the files, unless two ids would share one.
            stem=stem_of(p.source_id) if stems[stem_of(p.source_id)] == 1 else p.source_id,
            public=p.public,
            truth=p.truth,
            masks=bytes(p.masks),
            files={a.key: a.file.path for a in p.assets.all()},
            folder=str(folder),
            uid=str(p.uid),
        )
        for p in puzzles
    ]
    refused = []
    ground_truth: dict[str, dict[str, Any]] = {}
    ground_truth_cu: dict[str, dict[str, Any]] = {}
    for written in in_workers(_write_puzzle, jobs, workers=workers):
        if isinstance(written, str):
            refused.append(written)
            continue
        puzzle_id, entry, cu = written
        ground_truth[puzzle_id] = entry
        ground_truth_cu[puzzle_id] = cu
    output_path(folder, "ground_truth.json").write_text(json.dumps(ground_truth, indent=1))
    output_path(folder, "ground_truth_cu.json").write_text(json.dumps(ground_truth_cu, indent=1))
    return refused


def _write_puzzle(job: _Job) -> tuple[str, dict[str, Any], dict[str, Any]] | str:
    """Write one puzzle's files; its id, its ground_truth.json entry and its ground_truth_cu.json entry,
    or why it was not written (a stored key or mask name that is no file name, a file gone: the
    other puzzles are still exported)."""
    try:
        return _written(job)
    except (Refused, OSError) as why:
        return f"{job.type} puzzle {job.uid} ({job.stem!r}): {why}: not written"


def _written(job: _Job) -> tuple[str, dict[str, Any], dict[str, Any]]:
    puzzle_type = get_type(job.type)
    folder = Path(job.folder)
    paths = _copy_assets(job, folder)
    masks = masks_from_bytes(job.masks)
    mask_paths = {name: f"masks/{job.stem}_{name}.png" for name in masks}
    for name, mask in masks.items():
        output_path(folder, mask_paths[name]).write_bytes(mask_io.to_png(mask))
    instruction = job.public.get("instruction", puzzle_type.instruction)
    entry: dict[str, Any] = {"question": instruction, "prompt": instruction}
    entry.update(_named_files(puzzle_type.published_truth(job.truth, mask_paths), paths))
    entry.update(_page_fields(puzzle_type, job, paths, folder))
    kind, answer = puzzle_type.cu_answer(job.truth)
    cu = {**entry, "answer_cu_kind": kind, "answer_cu": answer}
    entry.update(arena_public=job.public, arena_assets=paths, arena_truth=job.truth, arena_masks=mask_paths)
    return paths[job.public["image"]], entry, cu


def _copy_assets(job: _Job, folder: Path) -> dict[str, str]:
    """The served files as they are: the main image named after the puzzle, the others by key."""
    paths = {}
    for key, source in job.files.items():
        ext = Path(source).suffix
        name = f"{job.stem}{ext}" if key == job.public["image"] else f"{job.stem}_{key}{ext}"
        shutil.copyfile(source, output_path(folder, name))
        paths[key] = name
    return paths


def _named_files(fields: dict[str, Any], paths: dict[str, str]) -> dict[str, Any]:
    """Fields that name one of the puzzle's images by its key (order_image, option_images...) name its file."""

    def named(value: Any) -> Any:
        if isinstance(value, str):
            return paths.get(value, value)
        if isinstance(value, list) and value and all(isinstance(v, str) and v in paths for v in value):
            return [paths[v] for v in value]
        return value

    return {key: named(value) for key, value in fields.items()}


def _page_fields(puzzle_type: PuzzleType[Any], job: _Job, paths: dict[str, str], folder: Path) -> dict[str, Any]:
    """The fields the published server serves a puzzle's images by, and the files it asks for."""
    public = job.public
    fields: dict[str, Any] = {"image_size": public["image_size"]}
    if "reference" in public:
        fields["reference_image"] = paths[public["reference"]]
    if "options" in public:
        fields["option_images"] = fields["options"] = [paths[k] for k in public["options"]]
    if "rotations" in public:
        fields.update(_rotation_files(job, folder))
    if "piece" in public:
        fields["component_image"] = paths[public["piece"]]
    if "grid_size" in public:
        fields["grid_size"] = public["grid_size"]
    with Image.open(job.files[public["image"]]) as image:
        tiles = puzzle_type.tiles_from_image(image)
    if tiles:
        fields.update(_tile_files(tiles, job.stem, folder))
    return fields


def _rotation_files(job: _Job, folder: Path) -> dict[str, Any]:
    """`<stem>_object.png` and the `<stem>_object_<angle>.png` the published page shows for each angle."""
    base = f"{job.stem}_object.png"
    for angle, key in job.public["rotations"].items():
        data = _png(job.files[key])
        output_path(folder, rotation_file(base, int(angle))).write_bytes(data)
        if int(angle) == 0:
            output_path(folder, base).write_bytes(data)
    return {"object_base_image": base}


def _tile_files(tiles: list[Image.Image], stem: str, folder: Path) -> dict[str, Any]:
    """The tiles in `<stem>_tiles/`, listed in `images` with their `subfolder`."""
    subfolder = f"{stem}_tiles"
    names = [f"tile_{k}.png" for k in range(len(tiles))]
    output_path(folder, subfolder).mkdir(exist_ok=True)
    for name, tile in zip(names, tiles):
        tile.save(output_path(folder, tile_path(subfolder, name)), "PNG", compress_level=PNG_LEVEL)
    return {"images": names, "subfolder": subfolder}


def _png(source: str) -> bytes:
    with Image.open(source) as image:
        if image.format == "PNG":
            return Path(source).read_bytes()
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=PNG_LEVEL)
        return buffer.getvalue()
