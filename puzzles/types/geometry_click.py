"""Geometry_Click: click on the named solid among several shaded solids."""

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas, masks
from puzzles.types.base import Generated
from puzzles.types.contract import MaskTruth
from puzzles.types.kinds import MaskPointType

SIZE = (640, 480)
SPRITE = 110


def _shade(color, factor):
    return tuple(max(0, min(255, int(c * factor))) for c in color) + (255,)


def _sphere(draw, color, s):
    for i in range(12):
        inset = i * s // 30
        draw.ellipse((6 + inset // 2, 6 + inset // 2, s - 6 - inset, s - 6 - inset), fill=_shade(color, 0.7 + i * 0.05))


def _cube(draw, color, s):
    a, b, c = s * 0.15, s * 0.5, s * 0.85
    draw.polygon([(a, s * 0.3), (b, s * 0.12), (c, s * 0.3), (b, s * 0.48)], fill=_shade(color, 1.25))
    draw.polygon([(a, s * 0.3), (b, s * 0.48), (b, s * 0.92), (a, s * 0.74)], fill=_shade(color, 0.95))
    draw.polygon([(b, s * 0.48), (c, s * 0.3), (c, s * 0.74), (b, s * 0.92)], fill=_shade(color, 0.7))


def _cone(draw, color, s):
    # Smoothly shaded from the apex down to a round base, so it never reads as a faceted pyramid.
    apex, base_y, left, right, strips = (s * 0.5, s * 0.06), s * 0.83, s * 0.12, s * 0.88, 16
    draw.ellipse((left, s * 0.72, right, s * 0.94), fill=_shade(color, 0.8))
    for i in range(strips):
        x0 = left + (right - left) * i / strips
        x1 = left + (right - left) * (i + 1) / strips
        light = 1.3 - 0.7 * abs(i / (strips - 1) - 0.3)
        draw.polygon([apex, (x0, base_y), (x1 + 1, base_y)], fill=_shade(color, light))
    draw.chord((left, s * 0.72, right, s * 0.94), 0, 180, fill=_shade(color, 0.75))


def _cylinder(draw, color, s):
    draw.rectangle((s * 0.2, s * 0.2, s * 0.8, s * 0.8), fill=_shade(color, 0.85))
    draw.ellipse((s * 0.2, s * 0.7, s * 0.8, s * 0.9), fill=_shade(color, 0.85))
    draw.rectangle((s * 0.5, s * 0.2, s * 0.8, s * 0.8), fill=_shade(color, 0.7))
    draw.ellipse((s * 0.2, s * 0.1, s * 0.8, s * 0.3), fill=_shade(color, 1.25))


def _pyramid(draw, color, s):
    draw.polygon([(s * 0.5, s * 0.08), (s * 0.1, s * 0.86), (s * 0.55, s * 0.94)], fill=_shade(color, 1.1))
    draw.polygon([(s * 0.5, s * 0.08), (s * 0.55, s * 0.94), (s * 0.9, s * 0.78)], fill=_shade(color, 0.7))


def _torus(draw, color, s):
    draw.ellipse((s * 0.06, s * 0.25, s * 0.94, s * 0.8), fill=_shade(color, 0.9))
    draw.ellipse((s * 0.12, s * 0.28, s * 0.88, s * 0.7), fill=_shade(color, 1.15))
    draw.ellipse((s * 0.33, s * 0.42, s * 0.67, s * 0.58), fill=(0, 0, 0, 0))


SOLIDS = {"cone": _cone, "cube": _cube, "sphere": _sphere, "cylinder": _cylinder, "pyramid": _pyramid, "torus": _torus}


def _solid_sprite(kind: str, color, size: int) -> Image.Image:
    sprite = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    SOLIDS[kind](ImageDraw.Draw(sprite), color, size)
    return sprite


def _place(rng, count, size, spacing):
    """Top-left corners of `count` non-overlapping squares of `size` on the canvas."""
    w, h = SIZE
    spots: list[tuple[int, int]] = []
    while len(spots) < count:
        x, y = int(rng.integers(10, w - size - 10)), int(rng.integers(10, h - size - 10))
        if all(abs(x - a) > spacing or abs(y - b) > spacing for a, b in spots):
            spots.append((x, y))
    return spots


class GeometryClick(MaskPointType[MaskTruth]):
    name = "Geometry_Click"
    steps = 1  # the published page's "Action Steps" stars
    instruction = "Click on the cone."

    def generate(self, rng: np.random.Generator) -> Generated:
        kinds = list(SOLIDS)
        count = int(rng.integers(4, 7))
        chosen = [kinds[i] for i in rng.choice(len(kinds), size=count, replace=False)]
        target = chosen[0]
        image = canvas.background(rng, SIZE)
        target_mask = None
        for kind, spot in zip(chosen, _place(rng, count, SPRITE, SPRITE + 4)):
            size = int(rng.integers(SPRITE - 30, SPRITE + 1))
            sprite = _solid_sprite(kind, canvas.random_color(rng, 50, 230), size)
            canvas.paste_rgba(image, sprite, spot)
            if kind == target:
                target_mask = masks.from_alpha(sprite, SIZE, spot)
        assert target_mask is not None  # the target is chosen[0], drawn first
        mask = masks.dilate(target_mask, 3)
        question = f"Click on the {target}."
        return Generated(
            public={"instruction": question, "image": "image", "image_size": list(SIZE)},
            truth={
                "question": question,
                "mask": "target",
                "image_size": list(SIZE),
                "point": masks.interior_point(target_mask),
                "center": masks.centroid(target_mask),
                "bbox": masks.bbox(mask),
            },
            images={"image": image},
            masks={"target": mask},
        )
