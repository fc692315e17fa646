"""The deployment's imprint on every served image: imperceptible keyed noise, so that no served
file is byte-identical to what a public generator or a public dataset produces (a bot that
indexes those by hash finds nothing), while everything a person or a verifier relies on stays.

- lossless images (PNG): ±1 on a keyed half of the samples of each colour channel; never alpha,
  never a fully transparent pixel; a palette image keeps its indices and moves its used colours;
- JPEG: ±1 on all three channels of a keyed half of the 8x8 blocks. A uniform shift of a block
  moves only its luminance DC coefficient (the encoder's colour weights sum to one, its chroma
  weights to zero), so the encoded file changes while every decoded pixel moves by at most 2
  (the DC quantisation step at quality 92 is 3); per-pixel noise would flip AC coefficients and
  move edges by 20 levels and more. An imported JPEG file is imprinted the same way in its own
  coefficients (`jpeg_file`: ±1 DC step of a keyed half of its luminance blocks, nothing decoded
  or encoded again) when its DC step is at most JPEG_DC_STEP_MAX, which keeps the same bound.

Sizes and modes stay; masks and truths are never touched (they are not images we serve). The
randomness comes from the caller's keyed generator, so the same puzzle gives the same bytes.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from puzzles import jpeg_coefficients

BLOCK = 8  # the JPEG block, aligned to the image's top left corner as the encoder's blocks are
LOSSLESS_MODES = ("RGB", "RGBA", "L", "LA", "P")


def _signs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """-1, +1 or 0 per element: a keyed half of them move, either way."""
    draw = rng.integers(0, 4, size=shape, dtype=np.int8)
    return np.where(draw == 0, -1, np.where(draw == 1, 1, 0)).astype(np.int16)


def _kept_in_range(values: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """The signs, turned around where a move would leave 0..255 (so every chosen sample moves)."""
    signs = np.where((values == 255) & (signs > 0), -1, signs)
    return np.where((values == 0) & (signs < 0), 1, signs)


def _at_least_one(signs: np.ndarray, eligible: np.ndarray, values: np.ndarray) -> np.ndarray:
    # A tiny image could draw no move at all and keep its public bytes.
    if signs.any() or not eligible.any():
        return signs
    first = np.argwhere(eligible)[0]
    signs[tuple(first)] = -1 if values[tuple(first)] == 255 else 1
    return signs


def lossless(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """The image with ±1 on a keyed half of its colour samples, in its own mode (see LOSSLESS_MODES)."""
    if image.mode == "P":
        return _palette(image, rng)
    values = np.asarray(image)
    if values.ndim == 2:
        values = values[:, :, None]
    has_alpha = image.mode in ("RGBA", "LA")
    # Contiguous colours: every pass below is then one sweep of memory, not a strided one.
    colours = np.ascontiguousarray(values[:, :, :-1]) if has_alpha else values
    opaque = values[:, :, -1:] > 0 if has_alpha else None  # transparent stays as it is
    up, down = _moves(rng, colours, opaque)
    moved = values.copy()
    # uint8 throughout (an import's cost is in these passes): a move never leaves 0..255.
    moved[:, :, : colours.shape[2]] = colours + up.view(np.uint8) - down.view(np.uint8)
    return _like(image, Image.fromarray(moved[:, :, 0] if moved.shape[2] == 1 else moved, image.mode))


def _moves(rng: np.random.Generator, values: np.ndarray, opaque: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Where a sample goes up and where down: the same keyed half as _signs, turned inwards at 0 and 255."""
    draw = rng.integers(0, 4, size=values.shape, dtype=np.int8)  # _signs' draw: 0 is down, 1 is up
    chosen = draw < 2
    if opaque is not None:
        chosen &= opaque
    up = chosen & ((values == 0) | ((draw == 1) & (values != 255)))
    down = chosen & ~up
    if chosen.any():  # up and down split the chosen samples between them
        return up, down
    eligible = np.ones(values.shape, dtype=bool) if opaque is None else np.broadcast_to(opaque, values.shape)
    signs = _at_least_one(np.zeros(values.shape, dtype=np.int16), eligible, values)
    return signs > 0, signs < 0


def _palette(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """A palette image: the indices stay, each used opaque colour of the palette moves by ±1."""
    palette = np.array(image.getpalette("RGB") or [], dtype=np.int16).reshape(-1, 3)
    used = np.unique(np.asarray(image))
    used = used[used < len(palette)]
    opaque = np.setdiff1d(used, _transparent_entries(image))
    eligible = np.zeros(palette.shape, dtype=bool)
    eligible[opaque] = True
    signs = np.where(eligible, _kept_in_range(palette, _signs(rng, palette.shape)), 0)
    signs = _at_least_one(signs, eligible, palette)
    out = image.copy()  # keeps info, the transparency among it
    out.putpalette((palette + signs).astype(np.uint8).flatten().tolist(), "RGB")
    return out


def _transparent_entries(image: Image.Image) -> list[int]:
    transparency = image.info.get("transparency")
    if isinstance(transparency, int):
        return [transparency]
    if isinstance(transparency, bytes):
        return [i for i, alpha in enumerate(transparency) if alpha == 0]
    return []


def jpeg_blocks(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """An RGB image with a keyed half of its 8x8 blocks one level lighter or darker, all channels alike."""
    values = np.array(image if image.mode == "RGB" else image.convert("RGB"))  # our own copy, shifted in place
    height, width = values.shape[:2]
    highest, lowest = _block_extremes(values.reshape(height, width * 3), width)
    signs = _signs(rng, highest.shape)
    signs = np.where((highest == 255) & (signs > 0), -1, signs)
    signs = np.where((lowest == 0) & (signs < 0), 1, signs)
    fits = (highest < 255) | (lowest > 0)  # a block holding both 0 and 255 cannot shift whole
    signs = _at_least_one(np.where(fits, signs, 0), fits, np.where(highest == 255, 255, 0))
    # uint8 arithmetic: -1 is 255 and wraps, which never crosses 0..255 after the turns above.
    _shift_blocks(values, (signs % 256).astype(np.uint8))
    return Image.fromarray(values, "RGB")


def _shift_blocks(values: np.ndarray, shift: np.ndarray) -> None:
    """Adds each block's shift to its samples, in place: the whole blocks through a broadcast view
    (no full-size shift array is made), then the partial blocks at the right and bottom edges."""
    height, width = values.shape[:2]
    rows, columns = height // BLOCK, width // BLOCK
    whole = values[: rows * BLOCK, : columns * BLOCK].reshape(rows, BLOCK, columns, BLOCK, 3)
    whole += shift[:rows, None, :columns, None, None]
    if columns * BLOCK < width:
        values[:, columns * BLOCK :] += np.repeat(shift[:, -1], BLOCK)[:height, None, None]
    if rows * BLOCK < height:
        values[rows * BLOCK :, : columns * BLOCK] += np.repeat(shift[-1, :columns], BLOCK)[None, :, None]


def _block_extremes(flat: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Each block's highest and lowest sample, partial blocks at the right and bottom edges included
    (the encoder pads those by repeating their edge pixels, so shifting the visible part shifts it all).

    Rows first, eight at a time as whole contiguous rows, then across: far faster than reducing
    across every row first."""
    full = flat.shape[0] // BLOCK * BLOCK
    bands = flat[:full].reshape(-1, BLOCK, flat.shape[1])
    high, low = [bands.max(axis=1)], [bands.min(axis=1)]
    if full < flat.shape[0]:
        high.append(flat[full:].max(axis=0, keepdims=True))
        low.append(flat[full:].min(axis=0, keepdims=True))
    across = np.arange(0, width * 3, BLOCK * 3)
    return np.maximum.reduceat(np.concatenate(high), across, axis=1), np.minimum.reduceat(
        np.concatenate(low), across, axis=1
    )


def servable(image: Image.Image) -> Image.Image:
    """An imported image in a mode `lossless` handles, looking the same: bilevel becomes grey,
    anything else RGB or RGBA, and a single transparent colour (tRNS) becomes an alpha channel,
    so that noise can neither make a transparent pixel show nor hide an opaque one."""
    if image.mode == "1":
        return image.convert("L")
    if image.mode in ("RGB", "L") and "transparency" in image.info:
        return image.convert("RGBA" if image.mode == "RGB" else "LA")
    if image.mode in LOSSLESS_MODES:
        return image
    if "A" in image.mode or "transparency" in image.info:
        return image.convert("RGBA")
    return image.convert("RGB")


def _like(original: Image.Image, made: Image.Image) -> Image.Image:
    made.info.update({k: v for k, v in original.info.items() if k in ("icc_profile", "dpi", "gamma")})
    return made


# A DC step of q moves every pixel of its block by q/8 levels: 16 (quality 50 and better) keeps the
# move within 2 levels, as the pixel imprint; a coarser file is decoded and imprinted in its pixels.
JPEG_DC_STEP_MAX = 16
# The luminance DC of a black and of a white block, dequantized: 8 x (level - 128).
DC_RANGE = (-1024, 1016)


def jpeg_file(data: bytes, dc_step: int, rng: np.random.Generator) -> bytes:
    """A YCbCr JPEG file with a keyed half of its 8x8 luminance blocks one DC step lighter or darker,
    every other coefficient kept (no decode, no re-encode: jpeg_coefficients). A DC step of q moves
    each pixel of its block by q/8 levels (0.375 at quality 92, 1 at quality 75); a move past a
    black or a white block's DC goes the other way. The same key and file give the same bytes."""
    lowest, highest = (round(bound / dc_step) for bound in DC_RANGE)
    signs: list[np.ndarray] = []

    def shift(dc: np.ndarray, row: int, rows: int) -> None:
        if not signs:
            drawn = _signs(rng, (rows, len(dc)))
            if not drawn.any():  # a tiny image could draw no move at all and keep its public bytes
                drawn[0, 0] = 1
            signs.append(drawn)
        if row >= rows:  # the padding row of a last MCU two blocks high: never shown
            return
        step = signs[0][row]
        moved = dc + step
        outside = (moved > highest) | (moved < lowest)
        dc += np.where(outside, -step, step) if outside.any() else step

    return jpeg_coefficients.edit_luma_dc(data, shift)
