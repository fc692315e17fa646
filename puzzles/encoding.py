"""Turning generated puzzles into bytes, in worker processes (pure: no database).

Every image is stored as served, with the deployment's imprint (puzzles/imprint.py): keyed by the
bank and the image, so a puzzle's bytes are the same on every run and unlike any public copy.
"""

import io
import json
from dataclasses import dataclass

import numpy as np
from PIL import Image

from puzzles import imprint
from puzzles.bank import BankKey, generate_puzzle
from puzzles.models import masks_to_bytes


@dataclass
class EncodedImage:
    key: str
    data: bytes
    ext: str
    width: int
    height: int


@dataclass
class EncodedPuzzle:
    type: str
    split: str
    index: int
    public: dict
    truth: dict
    masks: bytes
    images: list[EncodedImage]


def encode_image(key: str, image: Image.Image, noise: np.random.Generator | None) -> EncodedImage:
    """The image as stored and served; noise None gives the plain encoding (what the public code
    makes of the same picture: the tests compare the two)."""
    buffer = io.BytesIO()
    if image.mode in ("RGBA", "LA", "P"):
        (image if noise is None else imprint.lossless(image, noise)).save(buffer, "PNG", compress_level=3)
        ext = ".png"
    else:
        # JPEG at high quality without chroma subsampling: crisp enough for pips and digits,
        # and 10-20x faster to encode than PNG on noisy backgrounds. The DC step at quality 92
        # is what bounds the imprint's block shift to 2 levels (puzzles/imprint.py).
        rgb = image.convert("RGB")
        (rgb if noise is None else imprint.jpeg_blocks(rgb, noise)).save(buffer, "JPEG", quality=92, subsampling=0)
        ext = ".jpg"
    return EncodedImage(key, buffer.getvalue(), ext, image.width, image.height)


class GenerationFailed(RuntimeError):
    """A type's generator raised: the message names the puzzle (type, split, index, bank), so the
    failure can be replayed with the same secret (`puzzles generate` says it, not a traceback)."""


def encode_puzzle(job: tuple[str, str, int, BankKey]) -> EncodedPuzzle:
    type_name, split, index, bank = job
    try:
        generated = generate_puzzle(type_name, split, index, bank)
    except Exception as error:
        where = f"{type_name} {split} #{index} of {bank.label}"
        raise GenerationFailed(f"generating {where} failed: {type(error).__name__}: {error}") from error
    # A JSON round trip here catches non-serialisable truth at generation time, not at save time.
    public, truth = json.loads(json.dumps(generated.public)), json.loads(json.dumps(generated.truth))
    images = [
        encode_image(key, image, bank.rng("image", type_name, split, index, key))
        for key, image in generated.images.items()
    ]
    return EncodedPuzzle(type_name, split, index, public, truth, masks_to_bytes(generated.masks), images)
