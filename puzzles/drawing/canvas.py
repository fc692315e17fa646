"""Backgrounds and texture, so puzzles are not solvable by flat colour alone."""

import numpy as np
from PIL import Image, ImageDraw, ImageFilter


def random_color(rng: np.random.Generator, low: int = 40, high: int = 220) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in rng.integers(low, high, size=3))
    return (r, g, b)


def gradient(size: tuple[int, int], top: tuple[int, int, int], bottom: tuple[int, int, int]) -> Image.Image:
    w, h = size
    t = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None, None]
    rows = (1 - t) * np.array(top, np.float32) + t * np.array(bottom, np.float32)
    return Image.fromarray(np.broadcast_to(rows, (h, w, 3)).astype(np.uint8), "RGB")


def add_noise(image: Image.Image, rng: np.random.Generator, amount: int = 12) -> Image.Image:
    pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
    grain = rng.integers(-amount, amount + 1, size=pixels.shape[:2] + (1,), dtype=np.int16)
    noisy = pixels + grain
    return Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8), "RGB")


def background(rng: np.random.Generator, size: tuple[int, int], clutter: int = 14) -> Image.Image:
    """A soft gradient with faint blurred blobs and grain."""
    light = int(rng.integers(0, 2))
    low, high = (150, 245) if light else (60, 150)
    # Drawn at half size and scaled up: the blobs are meant to be soft anyway, and it is 4x cheaper.
    w, h = size[0] // 2, size[1] // 2
    image = gradient((w, h), random_color(rng, low, high), random_color(rng, low, high))
    draw = ImageDraw.Draw(image, "RGBA")
    for _ in range(clutter):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        r = int(rng.integers(min(w, h) // 20, min(w, h) // 6))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=random_color(rng) + (40,))
    image = image.filter(ImageFilter.GaussianBlur(2)).resize(size, Image.Resampling.BILINEAR)
    return add_noise(image, rng, 8)


def paste_rgba(base: Image.Image, sprite: Image.Image, xy: tuple[int, int]) -> None:
    """Paste an RGBA sprite by its alpha, top-left at xy."""
    base.paste(sprite, (int(xy[0]), int(xy[1])), sprite)
