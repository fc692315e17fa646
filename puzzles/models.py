"""The puzzle bank. Truth (answer data and masks) lives only in Puzzle.truth and Puzzle.masks."""

import io
import secrets
from functools import lru_cache

import numpy as np
from django.core.exceptions import ValidationError
from django.db import models


def new_uid() -> str:
    # Hex, not urlsafe base64: an id starting with "-" would read as an option on the command line.
    return secrets.token_hex(10)


def validate_puzzle_type(value: str) -> None:
    # A plain string checked against the registry (no choices=), so a new type needs no migration.
    # A hosted family (`<benchmark>:<Family>`, docs/hosted.md) is checked by its form only.
    from puzzles.hosted_names import split_hosted_type
    from puzzles.registry import registry

    if value not in registry() and split_hosted_type(value) is None:
        raise ValidationError(f"unknown puzzle type {value!r}")


def asset_upload_to(instance, filename: str) -> str:
    # Random names: nothing about the puzzle, its type or its answer can be read from a URL.
    token = secrets.token_hex(16)
    return f"a/{token[:2]}/{token}{filename[filename.rfind('.') :]}"


class Puzzle(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "draft"  # generated or imported, not yet replay-verified
        VERIFIED = "verified", "verified"  # its reference answer replayed correct on the live page
        FAILED = "failed", "failed"  # replay did not verify
        RETIRED = "retired", "retired"  # withdrawn (e.g. wrong truth); kept for the record

    uid = models.CharField(max_length=32, unique=True, default=new_uid, editable=False)
    type = models.CharField(max_length=64, db_index=True, validators=[validate_puzzle_type])
    split = models.CharField(max_length=16, db_index=True)
    dataset = models.CharField(
        max_length=128,
        help_text="generated:key-<fingerprint> (the deployment's bank), generated:<seed> or import:<name>",
    )
    source_id = models.CharField(max_length=255, help_text="index for generated puzzles, file id for imports")
    index = models.PositiveIntegerField(null=True, blank=True)
    # Provenance, not a secret: a published dataset's answers are a lookup away for any bot, so a
    # study on such puzzles says so (set up, listed, reported). Generated puzzles are private.
    truth_public = models.BooleanField(
        "truth is public",
        default=False,
        help_text="its answer is published (e.g. an imported public dataset): anyone can look it up",
    )
    public = models.JSONField()
    truth = models.JSONField()
    masks = models.BinaryField(default=b"", blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Worked out from the truth and masks on first use and kept (puzzles/chance.py): never sent to a
    # page (a mask's share of the image is a hint), and reset when the truth is corrected.
    chance_rate = models.FloatField(
        null=True, blank=True, help_text="a blind guess's chance of passing; null: not worked out yet; -1: none"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "type", "split", "source_id"], name="puzzle_unique_in_dataset"),
        ]
        indexes = [models.Index(fields=["type", "split", "status"])]
        ordering = ["type", "split", "index", "source_id"]

    def __str__(self) -> str:
        return f"{self.type} {self.split}/{self.source_id} ({self.dataset})"

    def load_masks(self) -> dict[str, np.ndarray]:
        return _masks_from_bytes(self.pk, bytes(self.masks))


def masks_to_bytes(masks: dict[str, np.ndarray]) -> bytes:
    if not masks:
        return b""
    buffer = io.BytesIO()
    arrays: dict[str, np.ndarray] = {name: np.packbits(mask, axis=None) for name, mask in masks.items()}
    arrays.update({f"{name}__shape": np.array(mask.shape) for name, mask in masks.items()})
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]  # numpy's stub: **arrays could name allow_pickle
    return buffer.getvalue()


@lru_cache(maxsize=2048)
def _masks_from_bytes(puzzle_pk: int | None, data: bytes) -> dict[str, np.ndarray]:
    """Masks of a puzzle, decoded once per process (verifying is then one array lookup)."""
    return masks_from_bytes(data)


def masks_from_bytes(data: bytes) -> dict[str, np.ndarray]:
    """Masks as masks_to_bytes stored them, decoded afresh (no cache: for one pass over many puzzles)."""
    if not data:
        return {}
    archive = np.load(io.BytesIO(data))
    names = [n for n in archive.files if not n.endswith("__shape")]
    out = {}
    for name in names:
        shape = tuple(archive[f"{name}__shape"])
        mask = np.unpackbits(archive[name], count=int(np.prod(shape))).reshape(shape).astype(bool)
        mask.setflags(write=False)
        out[name] = mask
    return out


class Asset(models.Model):
    """A public image of a puzzle (main image, options, reference...). Never a mask."""

    puzzle = models.ForeignKey(Puzzle, on_delete=models.CASCADE, related_name="assets")
    key = models.CharField(max_length=64)
    file = models.FileField(upload_to=asset_upload_to)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["puzzle", "key"], name="asset_unique_key")]

    def __str__(self) -> str:
        return f"{self.puzzle_id}:{self.key}"


def private_storage():
    # Replay screenshots show a solved page: kept outside MEDIA_ROOT, never served.
    from django.conf import settings
    from django.core.files.storage import FileSystemStorage

    return FileSystemStorage(location=settings.PRIVATE_ROOT)


class ReplayCheck(models.Model):
    """One replay of a puzzle's reference answer on the live page, and the server's verdict on it."""

    puzzle = models.ForeignKey(Puzzle, on_delete=models.CASCADE, related_name="replay_checks")
    verified = models.BooleanField()
    reason = models.CharField(max_length=300, blank=True)
    attempt_uid = models.CharField(max_length=32, blank=True, help_text="the replay's attempt on the live page")
    screenshot = models.FileField(storage=private_storage, upload_to="replay/", blank=True)
    seconds = models.FloatField(help_text="page load to verdict")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"replay of {self.puzzle_id}: {'verified' if self.verified else 'failed'}"
