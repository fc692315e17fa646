"""Importing a dataset in the published CaptchaArena layout (puzzles/interop_files.py).

Everything is read through puzzles/contained.py: no symbolic link is followed (a linked folder,
ground_truth.json or image is named and skipped), files and images are capped in size before
they are decoded, each entry is parsed on its own (one nested too deep or with an over-long field
is named and skipped), and an id that could not be one file name on export is refused.

Every entry is read from its published fields the way the published server and grader read them
(the kinds' hooks: the same field, default and rounding); each broken folder, file or entry is
named and skipped, the rest imported. Our own exports also carry `arena_public`, `arena_assets`,
`arena_truth` and `arena_masks`: those puzzles come back exactly, provided their published fields
say the same (the truth's own answer must verify under the published fields too).

At scale: a plan lists the entries not yet stored (a re-run skips what is there, so an
interrupted import resumes); worker processes read, check and re-encode them (no database
there) and write their image files; the main process stores them in batches, each batch in one
transaction.

Images are stored as served, with the deployment's imprint (puzzles/imprint.py): an RGB JPEG as
JPEG at quality 92 with ±1 on whole 8x8 blocks (at most 2 levels per pixel; a decoded JPEG
re-encoded at high quality loses little, and JPEG encodes ten times faster than PNG), anything
else losslessly as PNG with ±1 on half its colour samples. An import records whether the
dataset's truth is public (a published split's is, by default).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage
from django.db import transaction
from PIL import Image

from puzzles import imprint, jpeg_coefficients
from puzzles.bank import BankKey, bank_key
from puzzles.contained import IMAGE_MAX_PIXELS, Refused, name_problem, read_entries, read_image, safe_name, storable
from puzzles.drawing import masks as mask_io
from puzzles.interop_files import (
    ROTATION_ANGLES,
    SPLIT_DIRS,
    SPLIT_FOLDER_NAMES,
    is_retired,
    rotation_file,
    split_of,
    tile_path,
    type_of_folder,
)
from puzzles.models import Asset, Puzzle, asset_upload_to, masks_to_bytes
from puzzles.registry import UnknownPuzzleType, get_type
from puzzles.types.base import PublishedContext, PuzzleType
from puzzles.types.contract import Masks
from puzzles.workers import batched, in_workers

BATCH = 200  # puzzles stored per transaction
# An image's key (Asset.key, 64 characters) or a mask's name, as our exports write them: each
# names a file on export, and a key too long for its column would stop the batch it is stored in.
KEY = re.compile(r"[A-Za-z0-9_]{1,64}")
JPEG_QUALITY = 92  # as generated images (puzzles/encoding.py): the imprint's bound relies on it
PNG_LEVEL = 1  # zlib's fastest: imports of lossless sources are bound by encoding time
# All the images of one entry together (a rotation's nine, a grid's nine tiles): one worker's
# memory stays bounded however many files an entry names.
ENTRY_MAX_PIXELS = 2 * IMAGE_MAX_PIXELS


class BrokenEntry(ValueError):
    pass


class NoSplitFolder(ValueError):
    """A root that is no split folder and holds none: said plainly rather than importing nothing."""


@dataclass
class ImportResult:
    imported: int = 0
    skipped: int = 0  # already stored
    broken: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Target:
    """Where an import goes: its dataset label, its truth's provenance, the deployment's imprint key."""

    dataset: str
    truth_public: bool
    bank: BankKey


@dataclass(frozen=True)
class _Job:
    type: str
    split: str
    root: str  # the folder the import was given: nothing is read from outside it
    folder: str
    puzzle_id: str
    entry: Any

    def where(self) -> str:
        return f"{self.folder}/ground_truth.json puzzle {self.puzzle_id!r}"


@dataclass
class ImportPlan:
    """What an import will read: the entries not yet stored, and what is already broken or stored."""

    root: Path
    target: _Target
    jobs: list[_Job] = field(default_factory=list)
    skipped: int = 0
    broken: list[str] = field(default_factory=list)

    @property
    def dataset(self) -> str:
        return self.target.dataset

    @property
    def total(self) -> int:
        return len(self.jobs)


# --- the plan ---------------------------------------------------------------------------------------
def import_plan(
    root: str | Path, *, name: str | None = None, truth_public: bool = True, split: str | None = None
) -> ImportPlan:
    """Every entry under root that is not stored yet in dataset `import:<name>` (default: the folder's name).

    truth_public: whether the dataset's answers are published (the safe default: a dataset in
    the published layout usually is); only a dataset never made public is imported private.
    split: import root as that split's folder (its type folders, or root itself when it is one
    type folder), whatever it is named: the published server's `captcha_data`, say."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder")
    plan = ImportPlan(root, _Target(f"import:{name or root.resolve().name}", truth_public, bank_key()))
    planned: dict[tuple[str, str, str], Path] = {}
    for type_split, type_dir in _type_folders(plan, split):
        _plan_type_dir(plan, type_dir, type_split, planned)
    return plan


def _type_folders(plan: ImportPlan, split: str | None) -> list[tuple[str, Path]]:
    """(split, type folder) for every type folder to import, retired ones left out."""
    if split and os.path.lexists(plan.root / "ground_truth.json"):
        return [(split, plan.root)]  # root is one type folder
    splits = [(split, plan.root)] if split else _split_folders(plan)
    return [(s, folder) for s, path in splits for folder in _folders_in(plan, path) if not is_retired(folder)]


def _split_folders(plan: ImportPlan) -> list[tuple[str, Path]]:
    """(split, folder) for each split folder under root, or root itself when it is one."""
    own = split_of(plan.root)
    if own:
        return [(own, plan.root)]
    found = [(split, path) for path in _folders_in(plan, plan.root) if (split := split_of(path))]
    if not found:
        raise NoSplitFolder(
            f"{plan.root} holds no split folder (looked for {', '.join(SPLIT_FOLDER_NAMES)}, in any case) and is "
            f"not one: to import its type folders as one split, give the split (--split {'|'.join(SPLIT_DIRS)})"
        )
    return found


def _folders_in(plan: ImportPlan, folder: Path) -> list[Path]:
    """The real folders in a folder, sorted; a symbolic link among them is named, not followed."""
    found = []
    try:
        listed = sorted(folder.iterdir())
    except OSError as error:  # unreadable: named, the other folders imported
        plan.broken.append(f"{folder}: {error.strerror or error}")
        return []
    for path in listed:
        if path.is_symlink():
            plan.broken.append(f"{path}: a symbolic link, not followed")
        elif path.is_dir():
            found.append(path)
    return found


def _plan_type_dir(plan: ImportPlan, type_dir: Path, split: str, planned: dict[tuple[str, str, str], Path]) -> None:
    try:
        type_name = get_type(type_of_folder(type_dir.name)).name
    except UnknownPuzzleType:
        plan.broken.append(f"{type_dir}: not a known puzzle type")
        return
    gt_file = type_dir / "ground_truth.json"
    try:
        entries, refused = read_entries(plan.root, gt_file)
    except Refused as error:  # it names the file
        plan.broken.append(str(error))
        return
    plan.broken.extend(f"{gt_file} puzzle {puzzle_id[:60]!r}: {why}" for puzzle_id, why in refused.items())
    stored = set(
        Puzzle.objects.filter(dataset=plan.dataset, type=type_name, split=split).values_list("source_id", flat=True)
    )
    for puzzle_id, entry in entries.items():
        key = (type_name, split, puzzle_id)
        if puzzle_id in stored:
            plan.skipped += 1
        elif key in planned:
            plan.broken.append(f"{gt_file} puzzle {puzzle_id!r}: also in {planned[key]} (imported from there)")
        elif len(puzzle_id) > (Puzzle._meta.get_field("source_id").max_length or 255):
            plan.broken.append(f"{gt_file} puzzle {puzzle_id[:40]!r}...: the id is too long")
        elif why := name_problem(puzzle_id, what="the id"):
            plan.broken.append(f"{gt_file} puzzle {puzzle_id[:60]!r}: {why}: an id names the puzzle's files on export")
        else:
            planned[key] = type_dir
            plan.jobs.append(_Job(type_name, split, str(plan.root), str(type_dir), puzzle_id, entry))


# --- the run ----------------------------------------------------------------------------------------
def import_run(
    plan: ImportPlan,
    *,
    workers: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> ImportResult:
    """Read, check, re-encode and store the plan's entries; broken ones are named (warn) and skipped."""
    result = ImportResult(skipped=plan.skipped, broken=list(plan.broken))
    for message in plan.broken:
        if warn:
            warn(f"skipped: {message}")
    tasks = [(job, plan.target) for job in plan.jobs]
    read = in_workers(_read_task, tasks, workers=workers or os.cpu_count() or 1, ordered=False)
    for batch in batched(read, BATCH):
        ready = [item for item in batch if isinstance(item, _Read)]
        for message in (item for item in batch if isinstance(item, str)):
            result.broken.append(message)
            if warn:
                warn(f"skipped: {message}")
        _store(ready, plan.target)
        result.imported += len(ready)
        if on_progress:
            on_progress(len(batch))
    return result


def import_captchaarena(
    root: str | Path,
    *,
    name: str | None = None,
    truth_public: bool = True,
    split: str | None = None,
    workers: int | None = None,
    on_progress: Callable[[int], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> ImportResult:
    """Plan and run an import of root (see import_plan and import_run)."""
    plan = import_plan(root, name=name, truth_public=truth_public, split=split)
    return import_run(plan, workers=workers, on_progress=on_progress, warn=warn)


# --- an import as a job's chunks (puzzles/tasks.py) ------------------------------------------------
# A chunk names its entries; the process that runs it (a worker on any machine that reads the same
# folder) reads them again from their ground_truth.json, so no entry travels through the broker.
ImportItem = list[str]  # [type, split, folder relative to the root, puzzle id]
ItemFailure = dict[str, str]  # {"item": ..., "reason": ...}, as puzzles/jobs keeps them


def import_items(plan: ImportPlan) -> list[ImportItem]:
    """The plan's entries (those not stored yet) as job items, in the plan's order."""
    return [[job.type, job.split, os.path.relpath(job.folder, job.root), job.puzzle_id] for job in plan.jobs]


def import_chunk(
    root: Path,
    items: list[ImportItem],
    *,
    dataset: str,
    truth_public: bool,
    step: int,
    on_progress: Callable[[int, list[ItemFailure]], None],
) -> None:
    """Import the named entries of root in this process, `step` a transaction; stored ones are
    skipped (a chunk delivered again stores nothing twice), broken ones named. on_progress gets the
    items handled so far (failed ones included) and the failures, after each step."""
    target = _Target(dataset, truth_public, bank_key())
    handled, failures = 0, list[ItemFailure]()
    for folder, group in _by_folder(items):
        entries, refused = _entries_of(root, folder, group)
        stored = _stored_ids(target, group)
        for batch in batched(group, step):
            ready = []
            for item in batch:
                read = _read_item(root, target, item, entries, refused) if item[3] not in stored else None
                if isinstance(read, str):
                    failures.append({"item": "/".join(item[2:]), "reason": read})
                elif read is not None:
                    ready.append(read)
            _store(ready, target)
            handled += len(batch)
            on_progress(handled, failures)


def _by_folder(items: list[ImportItem]) -> list[tuple[str, list[ImportItem]]]:
    groups: dict[str, list[ImportItem]] = {}
    for item in items:
        groups.setdefault(item[2], []).append(item)
    return list(groups.items())


def _entries_of(root: Path, folder: str, group: list[ImportItem]) -> tuple[dict[str, Any], dict[str, str]]:
    try:
        return read_entries(root, root / folder / "ground_truth.json")
    except Refused as error:  # the file changed since the plan: each of its items fails by name
        return {}, {item[3]: str(error) for item in group}


def _stored_ids(target: _Target, group: list[ImportItem]) -> set[str]:
    type_name, split = group[0][0], group[0][1]  # one folder: one type of one split
    ids = [item[3] for item in group]
    found = Puzzle.objects.filter(dataset=target.dataset, type=type_name, split=split, source_id__in=ids)
    return set(found.values_list("source_id", flat=True))


def _read_item(
    root: Path, target: _Target, item: ImportItem, entries: dict[str, Any], refused: dict[str, str]
) -> _Read | str:
    type_name, split, folder, puzzle_id = item
    if puzzle_id not in entries:
        return refused.get(puzzle_id, "no longer in its ground_truth.json")
    return _read_task((_Job(type_name, split, str(root), str(root / folder), puzzle_id, entries[puzzle_id]), target))


@dataclass
class _StoredAsset:
    key: str
    name: str  # the file's name in the asset storage, written by the worker
    width: int
    height: int


@dataclass
class _Read:
    """One entry, read and checked, its images written: what the database still needs."""

    type: str
    split: str
    source_id: str
    public: dict[str, Any]
    truth: dict[str, Any]
    masks: bytes
    assets: list[_StoredAsset]


def _store(batch: list[_Read], target: _Target) -> None:
    if not batch:
        return
    with transaction.atomic():
        puzzles = Puzzle.objects.bulk_create(
            Puzzle(
                type=read.type,
                split=read.split,
                dataset=target.dataset,
                source_id=read.source_id,
                public=read.public,
                truth=read.truth,
                masks=read.masks,
                truth_public=target.truth_public,
            )
            for read in batch
        )
        Asset.objects.bulk_create(
            Asset(puzzle=puzzle, key=a.key, file=a.name, width=a.width, height=a.height)
            for puzzle, read in zip(puzzles, batch)
            for a in read.assets
        )


# --- one entry (in a worker) ------------------------------------------------------------------------
# What a broken file or entry can raise while it is read; anything else is a bug and stops the import.
_BROKEN = (
    BrokenEntry,
    OSError,
    ValueError,  # contained.Refused among them: a link, a file over its cap, an image over its pixels
    KeyError,
    TypeError,
    IndexError,
    AttributeError,  # a field of the wrong type: a string or a list where an object is read
    ArithmeticError,  # a division by a zero size, a number too large for int()
    Image.DecompressionBombError,
)


def _read_task(task: tuple[_Job, _Target]) -> _Read | str:
    job, target = task
    try:
        return _read_entry(job, target)
    except _BROKEN as error:
        return f"{job.where()}: {error}"


@dataclass
class _Source:
    """An image to store: its pixels, whether it came as an RGB JPEG, and a digest of its bytes."""

    image: Image.Image
    jpeg: bool
    digest: str
    file: bytes | None = None  # a JPEG's own bytes, when the image is that one file as it came


class _Files:
    """The type folder's files as one entry reads them (contained.py's rules, under the import's
    root), each decoded once, all of them within ENTRY_MAX_PIXELS."""

    def __init__(self, root: Path, folder: Path) -> None:
        self.root = root
        self.folder = folder
        self._images: dict[str, _Source] = {}
        self._pixels = 0

    def exists(self, relative: str) -> bool:
        """Whether the entry names something there (a link too: reading it is then refused, by name)."""
        return os.path.lexists(self._path(relative))

    def image(self, relative: str) -> _Source:
        if relative not in self._images:
            # Pixels decoded on first use: a JPEG served as it came (imprinted losslessly) never is.
            image, data = read_image(self.root, self._path(relative), decode=False)
            self._count(relative, image)
            jpeg = image.format == "JPEG" and image.mode == "RGB"
            self._images[relative] = _Source(image, jpeg, hashlib.sha256(data).hexdigest(), data if jpeg else None)
        return self._images[relative]

    def _path(self, relative: str) -> Path:
        if not isinstance(relative, str) or not relative:
            raise BrokenEntry(f"{relative!r} is not a file name")
        return self.folder / relative

    def _count(self, relative: str, image: Image.Image) -> None:
        self._pixels += image.width * image.height
        if self._pixels > ENTRY_MAX_PIXELS:
            raise BrokenEntry(f"its images, {relative} included, are over {ENTRY_MAX_PIXELS:,} pixels together")

    def mask(self, relative: str) -> np.ndarray:
        return mask_io.to_mask(self.image(relative).image)


def _read_entry(job: _Job, target: _Target) -> _Read:
    if not isinstance(job.entry, dict):
        raise BrokenEntry("entry is not an object")
    puzzle_type = get_type(job.type)
    files = _Files(Path(job.root), Path(job.folder))
    entry: dict[str, Any] = job.entry
    if _is_ours(entry):
        keys = [_key(k, "arena_assets key") for k in entry["arena_assets"]]
        public, sources = dict(entry["arena_public"]), {k: files.image(entry["arena_assets"][k]) for k in keys}
    else:
        public, sources = _published_page_data(puzzle_type, job.puzzle_id, entry, files)
    _complete_sizes(public, sources)
    truth, masks = _truth(puzzle_type, entry, public, files)
    _check_solution(puzzle_type, truth, masks)
    assets = [_stored(key, source, _noise(target, job, key, source)) for key, source in sources.items()]
    if not (storable(public) and storable(truth)):  # what the hooks derived, as PostgreSQL keeps it
        raise BrokenEntry("its page data or truth holds NaN, infinity, a NUL or a lone surrogate")
    return _Read(job.type, job.split, job.puzzle_id, public, truth, masks_to_bytes(masks), assets)


def _key(name: Any, what: str) -> str:
    """An image key or mask name from our export's fields, refused unless it is one we write."""
    if not isinstance(name, str) or not KEY.fullmatch(safe_name(name, what=what)):
        raise BrokenEntry(f"{what} {str(name)[:60]!r} is not 1 to 64 letters, digits or _")
    return name


def _noise(target: _Target, job: _Job, key: str, source: _Source) -> np.random.Generator:
    """The imprint's randomness: keyed by the deployment, the puzzle and the image's own bytes."""
    return target.bank.rng("import", target.dataset, job.split, job.type, job.puzzle_id, key, source.digest)


def _is_ours(entry: dict[str, Any]) -> bool:
    return all(isinstance(entry.get(k), dict) for k in ("arena_public", "arena_assets", "arena_truth"))


def _complete_sizes(public: dict[str, Any], sources: dict[str, _Source]) -> None:
    """Sizes the page lays out by, from the images themselves."""
    if public.get("image") not in sources:
        raise BrokenEntry("no main image")
    public["image_size"] = list(sources[public["image"]].image.size)
    if "reference" in public:
        public["reference_size"] = list(sources[public["reference"]].image.size)
    if "piece" in public:
        public.setdefault("piece_size", list(sources[public["piece"]].image.size))
    if "options" in public:
        public["option_count"] = len(public["options"])


def _truth(
    puzzle_type: PuzzleType[Any], entry: dict[str, Any], public: dict[str, Any], files: _Files
) -> tuple[dict[str, Any], Masks]:
    """The truth from the published fields; from arena_truth for our own exports, which must agree."""
    published = {k: v for k, v in entry.items() if not k.startswith("arena_")}
    ours = _is_ours(entry)
    # Our exports' page data is exact already: the hooks may complete only a copy of it.
    context = PublishedContext(tuple(public["image_size"]), files.mask, dict(public) if ours else public)
    truth, masks = puzzle_type.truth_from_published(published, context)
    truth = json.loads(json.dumps(truth))
    if not ours:
        return truth, masks
    own = entry["arena_truth"]
    if not puzzle_type.verify(truth, puzzle_type.solution(own), masks).correct:
        raise BrokenEntry("arena_truth and the published fields give different answers")
    given = entry.get("arena_masks") or {}
    return own, {_key(name, "arena_masks name"): files.mask(path) for name, path in given.items()}


def _check_solution(puzzle_type: PuzzleType[Any], truth: dict[str, Any], masks: Masks) -> None:
    """Refuse an entry whose own answer does not verify: its truth is unusable as it stands."""
    verdict = puzzle_type.verify(truth, puzzle_type.solution(truth), masks)
    if not verdict.correct:
        raise BrokenEntry(f"its own answer does not verify ({verdict.reason})")


def _stored(key: str, source: _Source, noise: np.random.Generator) -> _StoredAsset:
    """The image as served, imprinted, written to the asset storage."""
    if source.jpeg:
        name = _save_asset(memoryview(_imprinted_jpeg(source, noise)), ".jpg")
    else:
        buffer = io.BytesIO()
        imprint.lossless(imprint.servable(source.image), noise).save(buffer, "PNG", compress_level=PNG_LEVEL)
        name = _save_asset(buffer.getbuffer(), ".png")
    return _StoredAsset(key, name, source.image.width, source.image.height)


def _imprinted_jpeg(source: _Source, noise: np.random.Generator) -> bytes:
    """A JPEG file imprinted in its coefficients, as it came otherwise (no generation loss; 4.3-4.9
    ms of CPU against 7.4-8.5 ms for 640x480 at quality 92), when it is one YCbCr file whose DC
    step keeps the imprint within 2 levels; else decoded, imprinted and encoded again."""
    step = _luma_dc_step(source.image)
    if source.file is not None and step is not None and step <= imprint.JPEG_DC_STEP_MAX:
        with contextlib.suppress(jpeg_coefficients.Unsupported):
            return imprint.jpeg_file(source.file, step, noise)
    buffer = io.BytesIO()
    imprint.jpeg_blocks(source.image, noise).save(buffer, "JPEG", quality=JPEG_QUALITY, subsampling=0)
    return buffer.getvalue()


def _luma_dc_step(image: Image.Image) -> int | None:
    """The quantisation step of the first component's DC coefficient, from the JPEG's header."""
    try:
        table = image.quantization[image.layer[0][3]]  # type: ignore[attr-defined]
        return int(table[0]) or None
    except (AttributeError, IndexError, KeyError, TypeError):
        return None


def _save_asset(data: memoryview, ext: str) -> str:
    """The bytes written to a new file of the asset storage; its name there.

    On the local file system, written straight (one open, one write, one close: Django's save
    adds an existence check, a lock, a chmod and three stats, a millisecond a puzzle); its
    name is as random and as exclusive (O_EXCL). The first file of a folder, and any other
    storage, go through the storage's own save, which makes folders its way."""
    storage = Asset._meta.get_field("file").storage
    name = asset_upload_to(None, f"x{ext}")
    if not isinstance(storage, FileSystemStorage):
        return storage.save(name, ContentFile(bytes(data)))
    try:
        descriptor = os.open(os.path.join(storage.location, name), _NEW_FILE, 0o666)
    except (FileNotFoundError, FileExistsError):  # a new folder, or that rare name taken
        return storage.save(name, ContentFile(bytes(data)))
    try:
        _write_all(descriptor, data)
        _as_the_storage_leaves_it(descriptor, storage)
    finally:
        os.close(descriptor)
    return name


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC


def _as_the_storage_leaves_it(descriptor: int, storage: FileSystemStorage) -> None:
    """The file's mode and group as the storage's save sets them."""
    if storage.file_permissions_mode is not None:
        os.fchmod(descriptor, storage.file_permissions_mode)
    group = _group_of(os.fspath(storage.location))
    if os.fstat(descriptor).st_gid != group:
        with contextlib.suppress(PermissionError):
            os.fchown(descriptor, -1, group)


@functools.cache
def _group_of(folder: str) -> int:
    return os.stat(folder).st_gid


def _write_all(descriptor: int, data: memoryview) -> None:
    while data:
        data = data[os.write(descriptor, data) :]


# --- page data from the published fields ------------------------------------------------------------
def _published_page_data(
    puzzle_type: PuzzleType[Any], puzzle_id: str, entry: dict[str, Any], files: _Files
) -> tuple[dict[str, Any], dict[str, _Source]]:
    """The page data and its images, from the fields the published server serves them by."""
    public: dict[str, Any] = {"instruction": _instruction(puzzle_type, entry)}
    paths: dict[str, str] = {}
    reference = entry.get("reference_image") or entry.get("order_image")  # Click_Order's strip: order_image
    if reference:
        paths["reference"] = reference
        public["reference"] = "reference"
    options = _names(entry.get("option_images")) or _names(entry.get("options"))
    if options:
        public["options"] = [f"option_{i}" for i in range(len(options))]
        paths.update(zip(public["options"], options))
        public["image"] = public["options"][0]
    rotations = _rotation_paths(entry, files)
    if rotations:
        public["rotations"] = {str(angle): f"rotation_{angle}" for angle in rotations}
        paths.update({f"rotation_{angle}": path for angle, path in rotations.items()})
        public["image"] = "rotation_0"
    if entry.get("component_image"):
        paths["piece"] = entry["component_image"]
        public["piece"] = "piece"
    sources = {key: files.image(path) for key, path in paths.items()}
    if "image" not in public:
        public["image"] = "image"
        sources["image"] = _main_image(puzzle_type, puzzle_id, entry, files)
    return public, sources


def _instruction(puzzle_type: PuzzleType[Any], entry: dict[str, Any]) -> str:
    """What the published page shows: its own words for some types, else `prompt`, else the
    question, else the type's instruction."""
    own = puzzle_type.published_instruction(entry)
    if own:
        return own
    for key in ("prompt", "question", "instruction"):
        if isinstance(entry.get(key), str) and entry[key].strip():
            return entry[key].strip()
    return puzzle_type.instruction


def _names(value: Any) -> list[str]:
    return value if isinstance(value, list) and value and all(isinstance(v, str) for v in value) else []


def _rotation_paths(entry: dict[str, Any], files: _Files) -> dict[int, str]:
    """The rotations the published page shows: `<base>_<angle>.png` beside the object's base image
    (or, in older exports of ours, the files `rotation_images` names)."""
    base = entry.get("object_base_image")
    if not base:
        return {}
    if not isinstance(base, str):
        raise BrokenEntry("object_base_image is not a file name")
    given = entry.get("rotation_images")
    if isinstance(given, dict) and all(str(a) in given for a in ROTATION_ANGLES):
        return {angle: given[str(angle)] for angle in ROTATION_ANGLES}
    paths = {angle: rotation_file(base, angle) for angle in ROTATION_ANGLES}
    missing = [path for path in paths.values() if not files.exists(path)]
    if missing:
        raise BrokenEntry(f"no rotation image {missing[0]} (the published page shows <base>_<angle>.png)")
    return paths


def _main_image(puzzle_type: PuzzleType[Any], puzzle_id: str, entry: dict[str, Any], files: _Files) -> _Source:
    """The picture: the file named by the puzzle id, or the tiles the published page shows
    instead (`images` in `subfolder`, the puzzle id by default), or the type's stand-in."""
    tiles = _names(entry.get("images"))
    if tiles:
        subfolder = entry.get("subfolder") or puzzle_id
        sources = [files.image(tile_path(str(subfolder), name)) for name in tiles]
        image = puzzle_type.image_from_tiles([s.image for s in sources])
        digest = hashlib.sha256("".join(s.digest for s in sources).encode()).hexdigest()
        return _Source(image, all(s.jpeg for s in sources), digest)
    if files.exists(puzzle_id):
        return files.image(puzzle_id)
    stand_in = puzzle_type.stand_in_image()
    if stand_in is None:
        raise BrokenEntry(f"no image {puzzle_id!r} (and no tiles in `images`)")
    return _Source(stand_in, False, hashlib.sha256(b"stand-in").hexdigest())
