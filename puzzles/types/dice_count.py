"""Dice_Count: type the sum of the pips on 3 to 6 scattered dice."""

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from puzzles.drawing import canvas
from puzzles.types.base import Generated
from puzzles.types.kinds import IntegerTextType

SIZE = (640, 400)
SUPER = 3  # dice are drawn at 3x and scaled down, for smooth edges and round pips

# (body, pips, edge) colour schemes: pips always contrast strongly with the body.
SCHEMES = [
    ((245, 245, 240), (25, 25, 25)),
    ((250, 238, 205), (30, 30, 30)),
    ((205, 40, 45), (255, 255, 255)),
    ((35, 85, 190), (255, 255, 255)),
    ((30, 140, 70), (255, 255, 255)),
    ((250, 205, 40), (30, 30, 30)),
    ((35, 35, 40), (255, 255, 255)),
    ((125, 55, 170), (255, 255, 255)),
    ((245, 130, 30), (25, 25, 25)),
    ((0, 150, 160), (255, 255, 255)),
    ((240, 150, 190), (40, 20, 40)),
]

# Pip centres on a 3x3 lattice (column, row), each in {0, 1, 2}.
PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)],
    5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
    6: [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)],
}


_SHADOW_LUT = [a * 90 // 255 for a in range(256)]


def _shade(color, factor):
    return tuple(max(0, min(255, int(c * factor))) for c in color)


def _die_sprite(value: int, size: int, body, pip, flip: bool, angle: float) -> Image.Image:
    """One die face as an RGBA sprite with a soft shadow, rotated by `angle` degrees."""
    s = size * SUPER
    pad = s // 6
    full = s + 2 * pad
    sprite = Image.new("RGBA", (full, full), (0, 0, 0, 0))
    draw = ImageDraw.Draw(sprite)
    radius = s // 6
    # A darker rim offset down-right gives the face some thickness.
    depth = s // 16
    draw.rounded_rectangle((pad + depth, pad + depth, pad + s, pad + s), radius, fill=_shade(body, 0.62) + (255,))
    box = (pad, pad, pad + s - depth, pad + s - depth)
    draw.rounded_rectangle(box, radius, fill=body + (255,), outline=_shade(body, 0.55) + (255,), width=max(2, s // 45))
    face = s - depth
    step = face / 4
    r = face * 0.095
    for col, row in PIPS[value]:
        if flip:  # rotate the layout of 2, 3 and 6 by 90 degrees, as real dice vary
            col, row = row, 2 - col
        cx, cy = pad + step * (col + 1), pad + step * (row + 1)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=pip + (255,))
    sprite = sprite.reduce(SUPER)  # box-filtered downscale: smooth and much cheaper than LANCZOS
    # Soft drop shadow under the die, shifted down-right, so it separates from any background.
    alpha = Image.new("L", sprite.size, 0)
    alpha.paste(sprite.getchannel("A").point(_SHADOW_LUT), (3, 4))
    shadow = Image.new("RGBA", sprite.size, (0, 0, 0, 0))
    shadow.putalpha(alpha.filter(ImageFilter.GaussianBlur(3)))
    combined = Image.alpha_composite(shadow, sprite)
    return combined.rotate(angle, Image.Resampling.BICUBIC, expand=True)


def _place(rng, radii, size, margin=6):
    """Centres for circles of the given radii, without overlap, or None if they do not fit."""
    w, h = size
    centres: list[tuple[float, float]] = []
    for r in radii:
        for _ in range(200):
            x = float(rng.uniform(r + margin, w - r - margin))
            y = float(rng.uniform(r + margin, h - r - margin))
            if all((x - a) ** 2 + (y - b) ** 2 > (r + rb + margin) ** 2 for (a, b), rb in zip(centres, radii)):
                centres.append((x, y))
                break
        else:
            return None
    return centres


class DiceCount(IntegerTextType):
    name = "Dice_Count"
    steps = 3  # the published page's "Action Steps" stars
    guess_range = (3, 36)  # generate() throws 3 to 6 dice
    instruction = "Sum up the numbers on all the dice"

    def generate(self, rng: np.random.Generator) -> Generated:
        count = int(rng.integers(3, 7))
        image = canvas.background(rng, SIZE, clutter=10)
        base = int(rng.integers(74, 96)) if count <= 4 else int(rng.integers(66, 84))
        while True:
            sizes = [int(base + rng.integers(-6, 7)) for _ in range(count)]
            # Half the diagonal of the face plus the shadow: the die never leaves this circle.
            radii = [s * 0.78 + 4 for s in sizes]
            centres = _place(rng, radii, SIZE)
            if centres is not None:
                break
            base -= 4
        values = [int(v) for v in rng.integers(1, 7, size=count)]
        schemes = rng.choice(len(SCHEMES), size=count, replace=count > len(SCHEMES))
        for value, size, (cx, cy), scheme in zip(values, sizes, centres, schemes):
            body, pip = SCHEMES[int(scheme)]
            angle = float(rng.uniform(-35, 35))
            sprite = _die_sprite(value, size, body, pip, bool(rng.integers(0, 2)), angle)
            canvas.paste_rgba(image, sprite, (round(cx - sprite.width / 2), round(cy - sprite.height / 2)))
        return Generated(
            public={"instruction": self.instruction, "image": "image", "image_size": list(SIZE)},
            truth={"sum": int(sum(values)), "dice": values},
            images={"image": image},
        )
