"""Slide_Puzzle: drag a jigsaw piece from the left edge into the matching hole of a picture."""

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageFilter

from puzzles.drawing import canvas
from puzzles.drawing.emoji import ANIMALS, OBJECTS, emoji_image
from puzzles.types.base import Generated
from puzzles.types.kinds import DragPositionType

SIZE = (620, 360)
TOLERANCE = 10
SUPER = 4  # the piece outline is drawn at 4x and box-reduced, for a smooth edge

SCENERY = [
    OBJECTS[k]
    for k in (
        "tree",
        "flower",
        "house",
        "tent",
        "cactus",
        "mushroom",
        "balloon",
        "kite",
        "boat",
        "car",
        "bicycle",
        "apple",
        "umbrella",
        "rocket",
        "anchor",
        "guitar",
    )
]
SCENERY += [
    ANIMALS[k]
    for k in (
        "cat",
        "dog",
        "fox",
        "owl",
        "frog",
        "turtle",
        "butterfly",
        "panda",
        "lion",
        "penguin",
        "rabbit",
        "elephant",
        "parrot",
        "snail",
        "koala",
        "duck",
    )
]
SCENERY += ["🌲", "🌼", "🏔", "🏰", "⭐", "🌊", "🏡", "⛪"]


def _piece_mask(rng: np.random.Generator, side: int) -> Image.Image:
    """The piece outline as an 'L' alpha: a rounded square with jigsaw knobs and dents, or a plain notch."""
    knob = side * 0.2
    out = knob * 1.5  # how far a knob reaches beyond the square
    style = int(rng.integers(0, 4))
    right_knob = style in (0, 1, 2)
    top_knob = style in (1, 2)
    left_dent = style == 2 or (style == 0 and bool(rng.integers(0, 2)))
    bottom_dent = style in (0, 1) and bool(rng.integers(0, 2))
    w = side + (out if right_knob else 0)
    h = side + (out if top_knob else 0)
    top = out if top_knob else 0
    s = SUPER
    image = Image.new("L", (round(w) * s, round(h) * s), 0)
    draw = ImageDraw.Draw(image)
    corner = side * (0.12 if style != 3 else 0.24) * s
    draw.rounded_rectangle((0, top * s, side * s - 1, (top + side) * s - 1), corner, fill=255)

    def disc(cx, cy, r, fill):
        draw.ellipse(((cx - r) * s, (cy - r) * s, (cx + r) * s, (cy + r) * s), fill=fill)

    if right_knob:
        disc(side + knob * 0.5, top + side / 2, knob, 255)
        draw.rectangle(
            (
                (side - 2) * s,
                (top + side / 2 - knob * 0.55) * s,
                (side + knob * 0.3) * s,
                (top + side / 2 + knob * 0.55) * s,
            ),
            fill=255,
        )
    if top_knob:
        disc(side / 2, top - knob * 0.5, knob, 255)
        draw.rectangle(
            ((side / 2 - knob * 0.55) * s, (top - knob * 0.3) * s, (side / 2 + knob * 0.55) * s, (top + 2) * s),
            fill=255,
        )
    if left_dent:
        disc(knob * 0.45, top + side / 2, knob * 0.9, 0)
    if bottom_dent:
        disc(side / 2, top + side - knob * 0.45, knob * 0.9, 0)
    return image.reduce(s)


def _picture(rng: np.random.Generator) -> Image.Image:
    """A busy scene, so the hole's content is distinctive: soft shapes and scattered emoji."""
    image = canvas.background(rng, SIZE, clutter=8)
    w, h = SIZE
    draw = ImageDraw.Draw(image, "RGBA")
    # A couple of rolling hills or bands across the picture.
    for _ in range(int(rng.integers(1, 3))):
        base = float(rng.uniform(h * 0.45, h * 0.85))
        amplitude, phase, freq = rng.uniform(10, 40), rng.uniform(0, 6.3), rng.uniform(0.006, 0.018)
        xs = np.linspace(0, w, 24)
        ys = base + amplitude * np.sin(xs * freq + phase)
        draw.polygon(
            [(0, h)] + list(zip(xs.tolist(), ys.tolist())) + [(w, h)], fill=canvas.random_color(rng, 30, 230) + (110,)
        )
    count = int(rng.integers(10, 15))
    picks = rng.choice(len(SCENERY), size=count, replace=False)
    for i in picks:
        size = 45 + 5 * int(rng.integers(0, 15))  # few distinct sizes: emoji_image caches each one
        sprite = emoji_image(SCENERY[int(i)], size)
        x = int(rng.integers(-size // 4, w - size * 3 // 4))
        y = int(rng.integers(-size // 4, h - size * 3 // 4))
        canvas.paste_rgba(image, sprite, (x, y))
    return image


class SlidePuzzle(DragPositionType):
    name = "Slide_Puzzle"
    steps = 3  # the published page's "Action Steps" stars
    instruction = "Drag the slider component to the correct position"

    def generate(self, rng: np.random.Generator) -> Generated:
        w, h = SIZE
        picture = _picture(rng)
        alpha = _piece_mask(rng, int(rng.integers(58, 72)))
        pw, ph = alpha.size
        # The hole sits clear of the piece's starting place (far more than 3x tolerance away). Of a few
        # random spots, take the busiest, so the cut-out shows something to match, as in real ones.
        pixels = np.asarray(picture.convert("L"), dtype=np.float32)
        xs = rng.integers(pw + 3 * TOLERANCE + 30, w - pw - 12, size=6)
        ys = rng.integers(12, h - ph - 12, size=6)
        busiest = int(np.argmax([pixels[y : y + ph, x : x + pw].std() for x, y in zip(xs, ys)]))
        tx, ty = int(xs[busiest]), int(ys[busiest])
        start: list[float] = [0, ty]
        target = [tx, ty]
        box = (tx, target[1], tx + pw, target[1] + ph)

        # Rims along the outline (padded first, so edges touching the box border count too).
        padded = Image.new("L", (pw + 8, ph + 8), 0)
        padded.paste(alpha, (4, 4))
        inner1 = padded.filter(ImageFilter.MinFilter(3))
        inner3 = padded.filter(ImageFilter.MinFilter(7))
        crop = (4, 4, pw + 4, ph + 4)
        outer = ImageChops.subtract(padded, inner1).crop(crop)  # the outermost pixel
        rim = ImageChops.subtract(inner1, inner3).crop(crop)  # the next 2-3 pixels in

        # The piece: the hole's original content, cut to the outline, with a dark edge and a light rim,
        # so it stands out wherever it is dragged.
        piece = picture.crop(box).convert("RGBA")
        piece = Image.composite(
            Image.new("RGBA", (pw, ph), (255, 255, 255, 255)), piece, rim.point(lambda a: a * 230 // 255)
        )
        piece = Image.composite(Image.new("RGBA", (pw, ph), (40, 40, 48, 255)), piece, outer)
        piece.putalpha(alpha)
        rim = ImageChops.add(rim, outer)

        # The hole: the same area shaded dark, with a faint light rim.
        region = picture.crop(box)
        dark = Image.blend(region, Image.new("RGB", (pw, ph), (20, 20, 28)), 0.62)
        region = Image.composite(dark, region, alpha)
        region = Image.composite(
            Image.new("RGB", (pw, ph), (235, 235, 235)), region, rim.point(lambda a: a * 150 // 255)
        )
        picture.paste(region, box[:2])

        return Generated(
            public={
                "instruction": self.instruction,
                "image": "image",
                "image_size": [w, h],
                "piece": "piece",
                "piece_size": [pw, ph],
                "start_position": start,
                "hole_size": [pw, ph],
            },
            truth={
                "target_position": target,
                "tolerance": TOLERANCE,
                "image_size": [w, h],
                "start_position": start,
                "piece_size": [pw, ph],
                "hole_size": [pw, ph],
                "component_image": "piece",
            },
            images={"image": picture, "piece": piece},
        )
