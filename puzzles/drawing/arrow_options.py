"""Helpers for the arrow-cycling types (Object_Match, Image_Matching, Coordinates, Dart_Count,
Rotation_Match): option bookkeeping, cheap background variants, scattering and rotated sprites."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image

from puzzles.types.base import Generated
from puzzles.types.contract import PublicData

from . import canvas
from .emoji import emoji_image

# The eight flips/quarter turns of a square image: cheap, visibly different background variants.
_DIHEDRAL = [
    None,
    Image.Transpose.FLIP_LEFT_RIGHT,
    Image.Transpose.FLIP_TOP_BOTTOM,
    Image.Transpose.ROTATE_90,
    Image.Transpose.ROTATE_180,
    Image.Transpose.ROTATE_270,
    Image.Transpose.TRANSPOSE,
    Image.Transpose.TRANSVERSE,
]


_CHANNEL_ORDERS = [(0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2)]


def background_variants(rng: np.random.Generator, size: tuple[int, int], count: int) -> list[Image.Image]:
    """`count` distinct backgrounds of a square `size` from ONE rendered background (which costs
    ~8 ms): each is flipped or turned (8 ways) and has its colour channels reordered (6 ways),
    at ~0.3 ms a variant."""
    base = canvas.background(rng, size)
    bands = base.split()
    out = []
    for pick in rng.choice(len(_DIHEDRAL) * len(_CHANNEL_ORDERS), size=count, replace=False):
        op, channels = divmod(int(pick), len(_CHANNEL_ORDERS))
        order = _CHANNEL_ORDERS[channels]
        image = Image.merge("RGB", [bands[i] for i in order])
        turn = _DIHEDRAL[op]
        out.append(image if turn is None else image.transpose(turn))
    return out


def jittered_spots(
    rng: np.random.Generator, count: int, size: tuple[int, int], grid: tuple[int, int], sprite: int, margin: int = 8
) -> list[tuple[int, int]]:
    """Top-left corners for `count` sprites of at most `sprite` px that never overlap: pick `count`
    distinct cells of a rows x cols grid over the canvas and jitter each sprite inside its cell."""
    rows, cols = grid
    w, h = size
    cw, ch = (w - 2 * margin) / cols, (h - 2 * margin) / rows
    cells = rng.choice(rows * cols, size=count, replace=False)
    spots = []
    for cell in cells:
        r, c = divmod(int(cell), cols)
        x0, y0 = margin + c * cw, margin + r * ch
        jx = int(rng.integers(0, max(1, int(cw - sprite) + 1)))
        jy = int(rng.integers(0, max(1, int(ch - sprite) + 1)))
        spots.append((int(x0 + jx), int(y0 + jy)))
    return spots


@lru_cache(maxsize=512)
def rotated_emoji(char: str, size: int, angle: int, flip: bool = False) -> Image.Image:
    """turned_emoji, cached: for small sprites that recur (do not mutate the result)."""
    return turned_emoji(char, size, angle, flip)


def turned_emoji(char: str, size: int, angle: int, flip: bool = False) -> Image.Image:
    """The emoji (longer side `size`), optionally mirrored, turned `angle` degrees CLOCKWISE, on a
    transparent canvas just large enough. Uncached: large sprites would make a cache huge."""
    sprite = emoji_image(char, size)
    if flip:
        sprite = sprite.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    if angle % 360 == 0:
        return sprite
    return sprite.rotate(-angle, resample=Image.Resampling.BICUBIC, expand=True)


def paste_centered(base: Image.Image, sprite: Image.Image, center: tuple[float, float]) -> None:
    canvas.paste_rgba(base, sprite, (round(center[0] - sprite.width / 2), round(center[1] - sprite.height / 2)))


def _rgb(image: Image.Image) -> Image.Image:
    return image if image.mode == "RGB" else image.convert("RGB")


def option_puzzle(
    instruction: str,
    reference: Image.Image,
    options: list[Image.Image],
    correct: int,
    extra_truth: dict[str, Any] | None = None,
) -> Generated:
    """Package an arrow-cycling puzzle: the page starts at option 0, which is the main image."""
    sizes = {o.size for o in options}
    assert len(sizes) == 1, "all option images must have the same size"
    assert 0 <= correct < len(options)
    keys = [f"option_{i}" for i in range(len(options))]
    images = {"reference": _rgb(reference)}
    images.update({k: _rgb(o) for k, o in zip(keys, options)})
    public: PublicData = {
        "instruction": instruction,
        "image": keys[0],
        "image_size": list(options[0].size),
        "options": keys,
        "option_count": len(options),
        "reference": "reference",
        "reference_size": list(reference.size),
    }
    truth = {
        "correct_option_index": int(correct),
        "option_count": len(options),
        "reference_image": "reference",
        "option_images": keys,
        **(extra_truth or {}),
    }
    return Generated(public=public, truth=truth, images=images)
