"""Patch_Select: one scene cut into square patches; select every patch the named object covers."""

from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas, grid_cells
from puzzles.drawing.trowel import trowel
from puzzles.types.base import Generated
from puzzles.types.kinds import CellSetType

CELL_PX = {4: 130, 5: 110, 6: 96}  # patches per side -> patch size; images 520-576 px square
SPANS = {4: (2.0, 2.8), 5: (2.2, 3.3), 6: (2.5, 3.8)}  # target length in patches
COVERED = 0.08  # a patch counts when the object covers at least this share of it...
UNTOUCHED = 0.005  # ...and every other patch must be (almost) empty, so no patch is a judgement call
ALPHA = 40  # the opacity above which a sprite pixel is part of the object (as masks.from_alpha)

TARGETS = {  # name -> emoji; "garden trowel" is drawn (the font has no glyph for it)
    "garden trowel": None,
    "bicycle": "🚲",
    "car": "🚗",
    "bus": "🚌",
    "airplane": "✈",
    "sailboat": "⛵",
    "motorcycle": "🏍",
    "truck": "🚚",
    "umbrella": "☂",
    "key": "🔑",
    "hammer": "🔨",
    "wrench": "🔧",
    "scissors": "✂",
    "guitar": "🎸",
    "axe": "🪓",
    "anchor": "⚓",
    "rocket": "🚀",
    "kite": "🪁",
    "backpack": "🎒",
    "chair": "🪑",
    "bucket": "🪣",
    "toolbox": "🧰",
    "trumpet": "🎺",
    "broom": "🧹",
    "ladder": "🪜",
    "saw": "🪚",
    "pick": "⛏",
    "screwdriver": "🪛",
    "kick scooter": "🛴",
    "tractor": "🚜",
}
LOOKALIKES = [
    {"garden trowel", "pick", "axe", "broom", "saw", "screwdriver"},
    {"hammer", "axe", "wrench", "pick"},
    {"car", "truck", "bus", "tractor"},
    {"bicycle", "motorcycle", "kick scooter"},
    {"airplane", "rocket"},
    {"backpack", "toolbox", "bucket"},
]
CLUTTER = [
    "🌱",
    "🌿",
    "🪴",
    "🌷",
    "🌼",
    "🍄",
    "🪨",
    "🍂",
    "🐌",
    "🐞",
    "🥕",
    "🧤",
    "🪵",
    "🌻",
    "🐝",
    "🦋",
    "🧺",
    "⚽",
    "🎈",
    "📕",
    "☕",
    "🔑",
    "🔨",
    "🚲",
    "🪣",
    "🧰",
    "🎒",
    "✂",
    "🪑",
    "🚗",
    "🐈",
    "🐕",
    "🐓",
]
CLUTTER_NAMES = {
    "🔑": "key",
    "🔨": "hammer",
    "🚲": "bicycle",
    "🪣": "bucket",
    "🧰": "toolbox",
    "🎒": "backpack",
    "✂": "scissors",
    "🪑": "chair",
    "🚗": "car",
}


def _banned(target: str) -> set[str]:
    out = {target}
    for g in LOOKALIKES:
        if target in g:
            out |= g
    return out


def ground_texture(rng, size) -> Image.Image:
    """Ground seen from above (soil, lawn, gravel, deck): soft blotches, pebbles and grain."""
    w, h = size
    base = np.array(
        [(110, 80, 55), (80, 135, 60), (150, 145, 135), (160, 120, 80), (190, 170, 130)][int(rng.integers(5))],
        np.float32,
    ) + rng.integers(-15, 16, 3)
    coarse = rng.integers(0, 256, (h // 24 + 2, w // 24 + 2), dtype=np.uint8)
    blotch = Image.fromarray(coarse, "L").resize((w, h), Image.Resampling.BILINEAR)
    light = Image.new("RGB", (w, h), tuple(int(v) for v in np.clip(base * 1.1, 0, 255)))
    image = Image.composite(light, Image.new("RGB", (w, h), tuple(int(v) for v in base * 0.9)), blotch)
    draw = ImageDraw.Draw(image, "RGBA")
    for _ in range(int(rng.integers(12, 30))):  # pebbles, crumbs, tufts
        x, y, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(2, 8)
        shade = tuple(int(v) for v in np.clip(base * rng.uniform(0.6, 1.3), 0, 255))
        draw.ellipse((x - r, y - r * 0.7, x + r, y + r * 0.7), fill=shade + (200,))
    return canvas.add_noise(image, rng, 9)


def _sprite(rng, target: str, length: int) -> Image.Image:
    char = TARGETS[target]
    if char is None:
        angle = float(rng.uniform(0, 360))
        item = trowel(length, rng).rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
        return item.crop(item.getbbox())
    return grid_cells.sprite(
        char,
        length,
        mirror=bool(rng.random() < 0.5),
        angle=float(rng.uniform(-25, 25)) if rng.random() < 0.5 else 0.0,
    )


def _cell_coverage(table: np.ndarray, ox: int, oy: int, n: int, cell: int) -> np.ndarray:
    """Share of each patch covered by a sprite at (ox, oy), from the summed-area table of its mask."""
    h, w = table.shape[0] - 1, table.shape[1] - 1
    xe = np.clip(np.arange(n + 1) * cell - ox, 0, w)
    ye = np.clip(np.arange(n + 1) * cell - oy, 0, h)
    d = table[np.ix_(ye, xe)]
    return (d[1:, 1:] - d[:-1, 1:] - d[1:, :-1] + d[:-1, :-1]) / float(cell * cell)


def place_target(rng, target: str, n: int, cell: int):
    """Sprite, top-left and per-patch coverage such that every patch is clearly in or clearly out."""
    side = n * cell
    while True:
        low, high = SPANS[n]
        if TARGETS[target] is None:  # the trowel is slim: longer, to cover as many patches
            low, high = low + 0.4, high + 0.4
        item = _sprite(rng, target, int(min(cell * rng.uniform(low, high), 400)))
        if max(item.size) > side - 12:
            continue
        alpha = np.asarray(item.getchannel("A")) > ALPHA
        table = np.zeros((alpha.shape[0] + 1, alpha.shape[1] + 1), np.int32)
        table[1:, 1:] = alpha.cumsum(0).cumsum(1)
        for _ in range(40):
            ox = int(rng.integers(6, side - item.width - 6))
            oy = int(rng.integers(6, side - item.height - 6))
            cover = _cell_coverage(table, ox, oy, n, cell)
            if np.all((cover < UNTOUCHED) | (cover >= COVERED)):
                return item, (ox, oy), cover


def instruction_for(target: str) -> str:
    """As the published page writes it from target_object: no article ("with guitar")."""
    return f"Select all squares with {target}"


class PatchSelect(CellSetType):
    name = "Patch_Select"
    steps = 5  # the published page's "Action Steps" stars
    cell_page = "patch"
    instruction = "Select all squares with garden trowel"
    published_grid = (5, 5)

    def published_instruction(self, entry: dict[str, Any]) -> str | None:
        """The published page writes "Select all squares with <target_object>" whatever the prompt says."""
        target = entry.get("target_object")
        return instruction_for(target) if isinstance(target, str) and target.strip() else None

    def generate(self, rng: np.random.Generator) -> Generated:
        n = int(rng.choice([4, 5, 5, 6]))  # published grids are most often 5x5
        cell = CELL_PX[n]
        side = n * cell
        names = list(TARGETS)
        target = "garden trowel" if rng.random() < 0.3 else names[int(rng.integers(len(names)))]
        horizon = 0
        if rng.random() < 0.5:
            image = ground_texture(rng, (side, side))
        else:
            image, horizon = grid_cells.land(rng, (side, side), horizon=rng.uniform(0.12, 0.3), hills=False)
        item, (ox, oy), cover = place_target(rng, target, n, cell)
        occupied = np.zeros((side, side), bool)
        occupied[oy : oy + item.height, ox : ox + item.width] = np.asarray(item.getchannel("A")) > ALPHA
        self._clutter(rng, image, occupied, target, cell, horizon)
        image.paste(item, (ox, oy), item)
        grid_cells.grid_lines(image, n, n, width=3)
        correct = [int(i) for i in np.flatnonzero(cover.ravel() >= COVERED)]
        question = instruction_for(target)
        return Generated(
            public={"instruction": question, "image": "image", "image_size": [side, side], "grid_size": [n, n]},
            truth={
                "correct_patches": correct,
                "grid_size": [n, n],
                "image_size": [side, side],
                "target_object": target,
                "question": question,
                "coverage": [round(float(c), 4) for c in cover.ravel()],
            },
            images={"image": image},
        )

    @staticmethod
    def _clutter(rng, image, occupied, target, cell, horizon):
        """Other things lying around, kept clear of the target (and its look-alikes left out)."""
        banned = _banned(target)
        pool = [c for c in CLUTTER if CLUTTER_NAMES.get(c) not in banned]
        side = image.width
        keepout = occupied.copy()
        ys, xs = np.nonzero(occupied)
        pad = cell // 5
        x1, y1, x2, y2 = max(0, xs.min() - pad), max(0, ys.min() - pad), xs.max() + pad, ys.max() + pad
        keepout[y1:y2, x1:x2] |= True  # a margin of air around the target's box
        placed, wanted = 0, int(rng.integers(5, 10))
        order = rng.permutation(len(pool))  # distinct things, not the same one thrice
        for _ in range(60):
            if placed >= wanted:
                break
            size = int(cell * rng.uniform(0.45, 0.95))
            box = int(size * 1.42) + 1  # room for any tilt up to 45 degrees
            top = max(0, horizon - box // 3)  # things lie on the ground, not in the sky
            x, y = int(rng.integers(0, side - box)), int(rng.integers(top, side - box))
            if keepout[y : y + box, x : x + box].any():
                continue
            item = grid_cells.sprite(
                pool[int(order[placed % len(pool)])],
                size,
                mirror=bool(rng.random() < 0.5),
                angle=float(rng.uniform(-30, 30)),
            )
            image.paste(item, (x + (box - item.width) // 2, y + (box - item.height) // 2), item)
            keepout[y : y + box, x : x + box] = True
            placed += 1
