"""Writes to the puzzle bank."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.db import transaction

from puzzles.bank import SPLIT_SIZES, bank_key, split_code
from puzzles.encoding import EncodedPuzzle, encode_puzzle
from puzzles.models import Asset, Puzzle, ReplayCheck
from puzzles.registry import type_names
from puzzles.workers import batched, in_workers

BATCH = 200


@dataclass
class GenerateResult:
    created: int
    skipped: int


def _store(batch: list[EncodedPuzzle], dataset: str) -> None:
    with transaction.atomic():
        puzzles = Puzzle.objects.bulk_create(
            [
                Puzzle(
                    type=p.type,
                    split=p.split,
                    dataset=dataset,
                    source_id=f"{p.index:05d}",
                    index=p.index,
                    public=p.public,
                    truth=p.truth,
                    masks=p.masks,
                )
                for p in batch
            ]
        )
        assets = []
        for puzzle, encoded in zip(puzzles, batch):
            for image in encoded.images:
                asset = Asset(puzzle=puzzle, key=image.key, width=image.width, height=image.height)
                asset.file.save(f"x{image.ext}", ContentFile(image.data), save=False)
                assets.append(asset)
        Asset.objects.bulk_create(assets)


def bank_generate(
    *,
    split: str,
    per_type: int | None = None,
    types: list[str] | None = None,
    bank_seed: int | None = None,
    start: int = 0,
    workers: int | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> GenerateResult:
    """Generate and store puzzles [start, start + per_type) of each type; existing ones are skipped.

    Without bank_seed, the deployment's bank; an explicit seed selects another bank of this
    deployment (tests, benches), still keyed by its secret (puzzles.bank)."""
    split_code(split)  # fail early on an unknown split
    bank = bank_key(bank_seed)
    per_type = SPLIT_SIZES[split] if per_type is None else per_type
    names = type_names(types)
    dataset = bank.label
    existing = set(Puzzle.objects.filter(dataset=dataset, split=split, type__in=names).values_list("type", "index"))
    jobs = [
        (name, split, i, bank) for name in names for i in range(start, start + per_type) if (name, i) not in existing
    ]
    skipped = len(names) * per_type - len(jobs)
    if on_progress and skipped:
        on_progress(skipped)
    workers = workers or min(os.cpu_count() or 1, 8)
    for batch in batched(in_workers(encode_puzzle, jobs, workers=workers, chunksize=8), BATCH):
        _store(batch, dataset)
        if on_progress:
            on_progress(len(batch))
    return GenerateResult(created=len(jobs), skipped=skipped)


def replay_record(
    *, puzzle: Puzzle, verified: bool, reason: str, attempt_uid: str, seconds: float, screenshot: bytes | None = None
) -> ReplayCheck:
    """Record a replay's verdict; the puzzle is publishable only while its last replay verified."""
    check = ReplayCheck(puzzle=puzzle, verified=verified, reason=reason[:300], attempt_uid=attempt_uid, seconds=seconds)
    if screenshot:
        check.screenshot.save(f"{puzzle.uid}.png", ContentFile(screenshot), save=False)
    with transaction.atomic():
        check.save()
        if puzzle.status != Puzzle.Status.RETIRED:
            puzzle.status = Puzzle.Status.VERIFIED if verified else Puzzle.Status.FAILED
            puzzle.save(update_fields=["status"])
    return check
