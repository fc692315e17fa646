"""The published CaptchaArena layout, both ways.

    <root>/<Train|Val|Test>/<Type>_<n>/ground_truth.json      {puzzle_id: entry}
                                       ground_truth_cu.json   entry + answer_cu_kind, answer_cu
                                       images, masks (paths relative to the type folder)

Exports carry, beside the published fields, `arena_public` and `arena_assets` so that our own
import restores every puzzle exactly; published datasets without them are read from their
published fields alone.

An import stores each image re-encoded with the deployment's imprint (puzzles/imprint.py, as
lossless PNG), so a bot holding the dataset cannot find a served image by its hash; and it
records whether the dataset's truth is public (a published split's is, by default): a study on
such puzzles warns, and its report says so.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.core.files.base import ContentFile
from django.db import transaction
from PIL import Image

from puzzles import imprint
from puzzles.bank import SPLIT_SIZES, BankKey, bank_key
from puzzles.drawing import masks as mask_io
from puzzles.models import Asset, Puzzle, masks_to_bytes
from puzzles.registry import UnknownPuzzleType, get_type, type_names
from puzzles.types.base import PublishedContext, PuzzleType
from puzzles.types.contract import Masks, PublicData

SPLIT_DIRS = {"train": "Train", "val": "Val", "test": "Test"}
_TYPE_DIR = re.compile(r"^(?P<type>.+?)(?:_(?P<count>\d+))?$")


# --- export ---------------------------------------------------------------------------------
@dataclass
class ExportResult:
    puzzles: int = 0
    types: int = 0


def export_captchaarena(
    root: str | Path, *, split: str, types: list[str] | None = None, dataset: str | None = None
) -> ExportResult:
    dataset = dataset or bank_key().label
    puzzles = Puzzle.objects.filter(dataset=dataset, split=split).exclude(status=Puzzle.Status.RETIRED)
    if types:
        puzzles = puzzles.filter(type__in=type_names(types))
    result = ExportResult()
    for type_name in sorted(set(puzzles.values_list("type", flat=True))):
        of_type = list(puzzles.filter(type=type_name).prefetch_related("assets"))
        folder = Path(root) / SPLIT_DIRS[split] / f"{type_name}_{len(of_type)}"
        _export_type(get_type(type_name), of_type, folder)
        result.puzzles += len(of_type)
        result.types += 1
    return result


def _export_type(puzzle_type: PuzzleType[Any], puzzles: list[Puzzle], folder: Path) -> None:
    (folder / "masks").mkdir(parents=True, exist_ok=True)
    ground_truth: dict[str, dict[str, Any]] = {}
    ground_truth_cu: dict[str, dict[str, Any]] = {}
    for puzzle in puzzles:
        puzzle_id, entry = _export_puzzle(puzzle_type, puzzle, folder)
        ground_truth[puzzle_id] = entry
        kind, answer = puzzle_type.cu_answer(puzzle.truth)
        ground_truth_cu[puzzle_id] = {**entry, "answer_cu_kind": kind, "answer_cu": answer}
    (folder / "ground_truth.json").write_text(json.dumps(ground_truth, indent=1))
    (folder / "ground_truth_cu.json").write_text(json.dumps(ground_truth_cu, indent=1))


def _export_puzzle(puzzle_type: PuzzleType[Any], puzzle: Puzzle, folder: Path) -> tuple[str, dict[str, Any]]:
    stem = puzzle.source_id
    main_key = puzzle.public["image"]
    paths = {}
    for asset in puzzle.assets.all():
        ext = Path(asset.file.name).suffix
        name = f"{stem}{ext}" if asset.key == main_key else f"{stem}_{asset.key}{ext}"
        with asset.file.open("rb") as source:
            (folder / name).write_bytes(source.read())
        paths[asset.key] = name
    mask_paths = {}
    for name, mask in puzzle.load_masks().items():
        mask_paths[name] = f"masks/{stem}_{name}.png"
        (folder / mask_paths[name]).write_bytes(mask_io.to_png(mask))
    entry: dict[str, Any] = {"question": puzzle.public.get("instruction", puzzle_type.instruction)}
    entry.update(puzzle_type.published_truth(puzzle.truth, mask_paths))
    entry.update(_published_asset_fields(puzzle.public, paths))
    entry["arena_public"] = puzzle.public
    entry["arena_assets"] = paths
    return paths[main_key], entry


def _published_asset_fields(public: PublicData, paths: dict[str, str]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if "reference" in public:
        fields["reference_image"] = paths[public["reference"]]
    if "options" in public:
        fields["option_images"] = [paths[k] for k in public["options"]]
        fields["options"] = fields["option_images"]
    if "rotations" in public:
        fields["object_base_image"] = paths[public["rotations"]["0"]]
        fields["rotation_images"] = {angle: paths[k] for angle, k in public["rotations"].items()}
    if "piece" in public:
        fields["component_image"] = paths[public["piece"]]
    if "grid_size" in public:
        fields["grid_size"] = public["grid_size"]
    if "image_size" in public:
        fields["image_size"] = public["image_size"]
    return fields


# --- import ---------------------------------------------------------------------------------
@dataclass
class ImportResult:
    imported: int = 0
    skipped: int = 0
    broken: list[str] = field(default_factory=list)


class BrokenEntry(ValueError):
    pass


def import_captchaarena(
    root: str | Path,
    *,
    name: str | None = None,
    truth_public: bool = True,
    on_progress: Callable[[int], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> ImportResult:
    """Import every <split>/<Type>_<n>/ground_truth.json under root; broken entries are named and skipped.

    truth_public: whether the dataset's answers are published (the safe default: a dataset in
    the published layout usually is); only a dataset never made public is imported private."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder")
    target = _Target(f"import:{name or root.resolve().name}", truth_public, bank_key())
    result = ImportResult()

    def broken(message: str) -> None:
        result.broken.append(message)
        if warn:
            warn(f"skipped: {message}")

    for split_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        split = split_dir.name.lower()
        if split not in SPLIT_SIZES:
            continue
        for type_dir in sorted(p for p in split_dir.iterdir() if p.is_dir()):
            _import_type_dir(type_dir, split, target, result, broken)
            if on_progress:
                on_progress(1)
    return result


@dataclass(frozen=True)
class _Target:
    """Where an import goes: its dataset label, its truth's provenance, the deployment's imprint key."""

    dataset: str
    truth_public: bool
    bank: BankKey


def _import_type_dir(
    type_dir: Path, split: str, target: _Target, result: ImportResult, broken: Callable[[str], None]
) -> None:
    named = _TYPE_DIR.match(type_dir.name)  # matches every non-empty name
    try:
        puzzle_type = get_type(named["type"] if named else type_dir.name)
    except UnknownPuzzleType:
        broken(f"{type_dir}: not a known puzzle type")
        return
    gt_file = type_dir / "ground_truth.json"
    try:
        entries = json.loads(gt_file.read_text())
        if not isinstance(entries, dict):
            raise ValueError("expected an object {puzzle_id: entry}")
    except (OSError, ValueError) as error:
        broken(f"{gt_file}: {error}")
        return
    existing = set(
        Puzzle.objects.filter(dataset=target.dataset, type=puzzle_type.name, split=split).values_list(
            "source_id", flat=True
        )
    )
    for puzzle_id, entry in entries.items():
        if puzzle_id in existing:
            result.skipped += 1
            continue
        try:
            _import_entry(puzzle_type, type_dir, split, target, puzzle_id, entry)
            result.imported += 1
        except (BrokenEntry, OSError, ValueError, KeyError, TypeError) as error:
            broken(f"{gt_file} puzzle {puzzle_id!r}: {error}")


def _read_image(folder: Path, relative: str) -> tuple[bytes, Image.Image]:
    path = (folder / relative).resolve()
    if folder.resolve() not in path.parents:
        raise BrokenEntry(f"path {relative!r} leaves the type folder")
    data = path.read_bytes()
    image = Image.open(io.BytesIO(data))
    image.load()
    return data, image


def _import_entry(
    puzzle_type: PuzzleType[Any], folder: Path, split: str, target: _Target, puzzle_id: str, entry: Any
) -> None:
    if not isinstance(entry, dict):
        raise BrokenEntry("entry is not an object")
    public, asset_paths = _public_from_entry(puzzle_type, puzzle_id, entry)
    files = {key: _read_image(folder, path) for key, path in asset_paths.items()}
    main = files[public["image"]][1]
    public["image_size"] = [main.width, main.height]
    if "piece" in public:
        public.setdefault("piece_size", list(files[public["piece"]][1].size))
    if "options" in public:
        public["option_count"] = len(public["options"])

    def load_mask(relative: str) -> np.ndarray:
        return mask_io.to_mask(_read_image(folder, relative)[1])

    published = {k: v for k, v in entry.items() if not k.startswith("arena_")}
    truth, masks = puzzle_type.truth_from_published(published, PublishedContext(main.size, load_mask, public))
    truth = json.loads(json.dumps(truth))
    if "piece" in public:
        public.setdefault("start_position", truth["start_position"])
    _check_solution(puzzle_type, truth, masks)
    with transaction.atomic():
        puzzle = Puzzle.objects.create(
            type=puzzle_type.name,
            split=split,
            dataset=target.dataset,
            source_id=puzzle_id,
            public=public,
            truth=truth,
            masks=masks_to_bytes(masks),
            truth_public=target.truth_public,
        )
        for key, (data, image) in files.items():
            noise = target.bank.rng("import", target.dataset, split, puzzle_type.name, puzzle_id, key, _digest(data))
            asset = Asset(puzzle=puzzle, key=key, width=image.width, height=image.height)
            asset.file.save("x.png", ContentFile(_served_png(image, noise)), save=False)
            asset.save()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _served_png(image: Image.Image, noise: np.random.Generator) -> bytes:
    """The imported image as served: its own pixels, imprinted, losslessly (no second JPEG loss)."""
    buffer = io.BytesIO()
    imprint.lossless(imprint.servable(image), noise).save(buffer, "PNG", compress_level=6)
    return buffer.getvalue()


def _check_solution(puzzle_type: PuzzleType[Any], truth: dict[str, Any], masks: Masks) -> None:
    """Refuse an entry whose own answer does not verify: its truth is unusable as it stands."""
    verdict = puzzle_type.verify(truth, puzzle_type.solution(truth), masks)
    if not verdict.correct:
        raise BrokenEntry(f"its own answer does not verify ({verdict.reason})")


def _public_from_entry(
    puzzle_type: PuzzleType[Any], puzzle_id: str, entry: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The page data and its image files: exact from our own exports, else from published fields."""
    if isinstance(entry.get("arena_public"), dict) and isinstance(entry.get("arena_assets"), dict):
        return dict(entry["arena_public"]), dict(entry["arena_assets"])
    # Read field by field: a dict, not yet PublicData (image_size comes from the image file).
    public: dict[str, Any] = {
        "instruction": entry.get("question") or entry.get("instruction") or puzzle_type.instruction
    }
    paths = {"image": puzzle_id}
    if entry.get("reference_image"):
        paths["reference"] = entry["reference_image"]
        public["reference"] = "reference"
    options = entry.get("option_images") or entry.get("options")
    if isinstance(options, list) and options and all(isinstance(o, str) for o in options):
        keys = [f"option_{i}" for i in range(len(options))]
        paths.update(zip(keys, options))
        public["options"] = keys
        paths.pop("image")
    if entry.get("object_base_image"):
        base = Path(entry["object_base_image"])
        rotations = entry.get("rotation_images") or {
            str(a): str(base.with_name(f"{base.stem}_{a}{base.suffix}")) for a in range(0, 360, 45)
        }
        public["rotations"] = {angle: f"rotation_{angle}" for angle in rotations}
        paths.update({f"rotation_{angle}": path for angle, path in rotations.items()})
        paths.pop("image", None)
    if entry.get("component_image"):
        paths["piece"] = entry["component_image"]
        public["piece"] = "piece"
        if entry.get("start_position"):
            public["start_position"] = entry["start_position"]
    if entry.get("grid_size"):
        public["grid_size"] = entry["grid_size"]
    public["image"] = "image" if "image" in paths else (public.get("options") or ["rotation_0"])[0]
    if public["image"] not in paths:
        raise BrokenEntry("no main image")
    return public, paths
