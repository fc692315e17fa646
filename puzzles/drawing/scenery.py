"""Faded emoji scattered over a background, so a puzzle looks like a scene and not a diagram."""

from functools import cache

import numpy as np
from PIL import Image

from . import canvas, emoji

# No vehicles and nothing that reads as a sign: scenery must never look like part of a puzzle.
SCENERY = [
    "tree",
    "house",
    "tent",
    "flower",
    "cactus",
    "mushroom",
    "cow",
    "sheep",
    "horse",
    "rabbit",
    "duck",
    "balloon",
    "kite",
    "apple",
    "fox",
    "deer",
    "butterfly",
    "snail",
    "owl",
    "frog",
]


def _char(name: str) -> str:
    return emoji.ANIMALS.get(name) or emoji.OBJECTS[name]


@cache
def faded(char: str, size: int, opacity_percent: int) -> Image.Image:
    """A cached emoji sprite with its alpha scaled; shared, do not mutate."""
    sprite = emoji.emoji_image(char, size).copy()
    sprite.putalpha(sprite.getchannel("A").point(lambda a: a * opacity_percent // 100))
    return sprite


def scatter(
    image: Image.Image,
    rng: np.random.Generator,
    count: tuple[int, int] = (4, 9),
    opacity: tuple[int, int] = (35, 60),
    sizes: tuple[int, int] = (36, 72),
    names=SCENERY,
) -> None:
    """Paste a few faded emoji at random places (sizes and opacities quantised: small caches)."""
    w, h = image.size
    for k in rng.choice(len(names), size=int(rng.integers(*count)), replace=False):
        size = 4 * int(rng.integers(sizes[0] // 4, sizes[1] // 4 + 1))
        alpha = 5 * int(rng.integers(opacity[0] // 5, opacity[1] // 5 + 1))
        sprite = faded(_char(names[k]), size, alpha)
        canvas.paste_rgba(image, sprite, (int(rng.integers(0, w - size)), int(rng.integers(0, h - size))))
