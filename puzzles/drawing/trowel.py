"""A garden trowel drawn as a sprite (the emoji font has no trowel or shovel glyph)."""

import numpy as np
from PIL import Image, ImageDraw

HANDLE_COLORS = [
    (150, 95, 50),
    (120, 75, 40),
    (190, 130, 70),
    (200, 40, 40),
    (40, 120, 60),
    (40, 90, 170),
    (230, 150, 30),
]


def trowel(length: int, rng: np.random.Generator) -> Image.Image:
    """An RGBA trowel, handle up and blade tip down, `length` px tall (drawn at 2x, then reduced)."""
    s = 2
    L = length * s
    W = int(L * 0.36)
    image = Image.new("RGBA", (W, L), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    cx = W / 2
    handle = HANDLE_COLORS[int(rng.integers(len(HANDLE_COLORS)))]
    dark = tuple(int(c * 0.7) for c in handle)
    hw = L * 0.065
    draw.rounded_rectangle(
        (cx - hw, L * 0.01, cx + hw, L * 0.37), radius=int(hw * 0.9), fill=handle, outline=dark, width=s * 2
    )
    draw.rounded_rectangle(
        (cx - hw * 0.45, L * 0.04, cx - hw * 0.1, L * 0.33),
        radius=int(hw * 0.3),
        fill=tuple(min(255, int(c * 1.25) + 20) for c in handle),
    )
    draw.ellipse((cx - hw * 0.3, L * 0.04, cx + hw * 0.3, L * 0.04 + hw * 0.6), fill=(40, 30, 25))  # hanging hole
    draw.rectangle(
        (cx - hw * 0.8, L * 0.36, cx + hw * 0.8, L * 0.41), fill=(170, 170, 178), outline=(110, 110, 118), width=s
    )
    draw.polygon(
        [(cx - L * 0.02, L * 0.41), (cx + L * 0.02, L * 0.41), (cx + L * 0.015, L * 0.5), (cx - L * 0.015, L * 0.5)],
        fill=(120, 120, 128),
    )
    # Blade: a pointed scoop, wide at the shoulders; the left half lit, the right half in shade.
    t = np.linspace(0.0, 1.0, 40)
    half = W * 0.48 * np.clip(1 - t**1.25, 0, 1) ** 0.85 * (0.72 + 0.28 * np.sin(np.pi * np.minimum(t * 4, 1) / 2))
    ys = L * (0.48 + 0.51 * t)
    left = list(zip(cx - half, ys))
    right = list(zip(cx + half, ys))[::-1]
    steel = int(rng.integers(150, 200))
    draw.polygon(left + right, fill=(steel, steel, steel + 8), outline=(90, 90, 98))
    draw.polygon(left + [(cx, L * 0.99), (cx, L * 0.48)], fill=(min(255, steel + 45),) * 2 + (min(255, steel + 52),))
    draw.line([(cx, L * 0.5), (cx, L * 0.97)], fill=(100, 100, 110), width=s * 2)
    if rng.random() < 0.6:  # soil on the tip
        soil = (110, 80, 50)
        start = int(rng.integers(27, 33))
        tip = [(cx - half[k], ys[k]) for k in range(start, 40)] + [
            (cx + half[k], ys[k] - L * 0.015 * np.sin(k)) for k in range(39, start - 1, -1)
        ]
        draw.polygon(tip, fill=soil)
    return image.resize((max(1, W // s), length), Image.Resampling.LANCZOS)
