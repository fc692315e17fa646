"""Image_Recognition: a 3x3 grid of small photos; select every one that contains the named object.

Our page shows the grid as one image with the cells over it; the published page shows nine tile
files side by side (`images` in a `subfolder`). A tile is a cell without its white rim, so the
two convert losslessly: tiles_from_image cuts them out, image_from_tiles puts them back.
"""

import numpy as np
from PIL import Image, ImageDraw, ImageOps

from puzzles.drawing import grid_cells
from puzzles.drawing.emoji import ANIMALS, OBJECTS
from puzzles.types.base import Generated
from puzzles.types.kinds import CellSetType
from puzzles.types.select_animal import LOOKALIKES as ANIMAL_LOOKALIKES

ROWS, COLS = 3, 3
RIM = 3  # white around each photo in the grid image
CELL = 180
INNER = CELL - 2 * RIM
TILE_RANGE = (48, 400)  # a composed grid's photos: the first tile's size, kept within these bounds

SUBJECTS = {**{k: v for k, v in OBJECTS.items() if k != "trowel"}, **ANIMALS}  # no trowel glyph in the font
ANIMAL_NAMES = set(ANIMALS)
# What the prompt calls a subject when its key is not the plain word a person would use.
SPOKEN = {
    "lamp": "light bulb",
    "ball": "soccer ball",
    "cup": "coffee cup",
    "lock": "padlock",
    "telephone": "telephone",
    "shoe": "sneaker",
    "hat": "top hat",
    "book": "book",
    "gift": "gift box",
}
PLURAL = {"grapes", "cherries", "glasses", "scissors"}
# Never asked for: scenery-like (the clutter is scenery) or too small/odd to name at a glance.
NOT_TARGETS = {"tree", "flower", "cactus", "bat", "spider", "dodo", "sloth", "otter", "bison", "candle"}
LOOKALIKES = ANIMAL_LOOKALIKES + [
    {"ball", "basketball"},
    {"hat", "crown"},
    {"car", "truck"},
    {"bus", "train"},
    {"airplane", "rocket"},
    {"lamp", "candle"},
    {"toolbox", "backpack", "gift"},
    {"cup", "bucket"},
    {"tree", "cactus", "flower"},
    {"hammer", "axe", "wrench"},
    {"bicycle", "motorcycle"},
    {"apple", "cherries"},
    {"door", "house"},
]
CLUTTER = "🪨🍂🌿🪵🌾🧱🌱🍃"  # scenery, never a subject


def group(name: str) -> set[str]:
    found = {name}
    for g in LOOKALIKES:
        if name in g:
            found |= g
    return found


def noun_phrase(name: str) -> str:
    spoken = SPOKEN.get(name, name)
    return spoken if name in PLURAL else grid_cells.article(spoken)


def _clutter(rng, image, ground):
    for _ in range(int(rng.integers(0, 3))):
        item = grid_cells.sprite(CLUTTER[int(rng.integers(len(CLUTTER)))], int(INNER * rng.uniform(0.14, 0.24)))
        x = int(rng.integers(0, INNER - item.width))
        low = ground if ground is not None else 0
        y = int(rng.integers(low, max(low + 1, INNER - item.height)))
        image.paste(item, (x, y), item)


def photo_cell(rng, char: str):
    """A backdrop, a little scenery, and the subject in it."""
    image, ground, kind = grid_cells.photo_background(rng, (INNER, INNER))
    if kind != "sky":
        _clutter(rng, image, ground)
    size = int(INNER * rng.uniform(0.42, 0.68))
    subject = grid_cells.sprite(
        char, size, mirror=bool(rng.random() < 0.4), angle=float(rng.uniform(-15, 15)) if rng.random() < 0.3 else 0.0
    )
    x = int(rng.integers(3, max(4, INNER - subject.width - 3)))
    y = int(rng.integers(3, max(4, INNER - subject.height - 3)))
    if ground is not None and y + subject.height < ground + 8:
        y = min(INNER - subject.height - 3, ground + 8 - subject.height + int(rng.integers(0, 20)))
    if ground is not None:
        grid_cells.shadow(
            ImageDraw.Draw(image, "RGBA"), x + subject.width / 2, y + subject.height - 2, subject.width * 0.75
        )
    image.paste(subject, (x, y), subject)
    return image


class ImageRecognition(CellSetType):
    name = "Image_Recognition"
    steps = 4  # the published page's "Action Steps" stars
    cell_page = "tiles"
    instruction = "Select all images containing a bicycle, then click submit"
    published_answer_key = "correct_selections"
    published_grid = (ROWS, COLS)
    published_grid_fixed = True  # the published page always lays out 3x3, whatever grid_size says

    def tiles_from_image(self, image: Image.Image) -> list[Image.Image]:
        cell_w, cell_h = image.width / COLS, image.height / ROWS
        return [
            image.crop(
                (
                    round(c * cell_w) + RIM,
                    round(r * cell_h) + RIM,
                    round((c + 1) * cell_w) - RIM,
                    round((r + 1) * cell_h) - RIM,
                )
            )
            for r in range(ROWS)
            for c in range(COLS)
        ]

    def image_from_tiles(self, tiles: list[Image.Image]) -> Image.Image:
        """The grid image: each tile filling a square photo (cropped to cover, as the published
        page shows it), in its white rim."""
        if len(tiles) != ROWS * COLS:
            raise ValueError(f"expected {ROWS * COLS} tiles, got {len(tiles)}")
        side = max(TILE_RANGE[0], min(TILE_RANGE[1], min(tiles[0].size)))
        photos = [ImageOps.fit(_on_white(tile), (side, side), Image.Resampling.LANCZOS) for tile in tiles]
        return grid_cells.compose(photos, ROWS, COLS, side + 2 * RIM, gap=RIM)

    def generate(self, rng: np.random.Generator) -> Generated:
        names = list(SUBJECTS)
        candidates = [n for n in names if n not in NOT_TARGETS]
        target = candidates[int(rng.integers(len(candidates)))]
        cells = ROWS * COLS
        correct = sorted(int(i) for i in rng.choice(cells, size=int(rng.integers(2, 5)), replace=False))
        distractors = self._distractors(rng, target, cells - len(correct))
        contents, it = [], iter(distractors)
        for i in range(cells):
            contents.append(target if i in correct else next(it))
        image = grid_cells.compose([photo_cell(rng, SUBJECTS[n]) for n in contents], ROWS, COLS, CELL)
        question = f"Select all images containing {noun_phrase(target)}, then click submit"
        size = list(image.size)
        return Generated(
            public={"instruction": question, "image": "image", "image_size": size, "grid_size": [ROWS, COLS]},
            truth={
                "correct_patches": correct,
                "correct_selections": correct,
                "grid_size": [ROWS, COLS],
                "image_size": size,
                "target_object": target,
                "question": question,
                "cell_objects": contents,
            },
            images={"image": image},
        )

    @staticmethod
    def _distractors(rng, target: str, count: int) -> list[str]:
        """Distinct subjects unlike the target, about half from the target's own domain (animal or object)."""
        banned = group(target)
        same = [n for n in SUBJECTS if n not in banned and (n in ANIMAL_NAMES) == (target in ANIMAL_NAMES)]
        other = [n for n in SUBJECTS if n not in banned and (n in ANIMAL_NAMES) != (target in ANIMAL_NAMES)]
        n_same = int(rng.integers(count // 2, count - 1))
        chosen = [same[i] for i in rng.choice(len(same), size=n_same, replace=False)]
        chosen += [other[i] for i in rng.choice(len(other), size=count - n_same, replace=False)]
        return [chosen[i] for i in rng.permutation(len(chosen))]


def _on_white(tile: Image.Image) -> Image.Image:
    """A tile as RGB; a transparent part shows white, as on the published page's white cells."""
    if tile.mode in ("RGBA", "LA", "P") or "transparency" in tile.info:
        rgba = tile.convert("RGBA")
        backdrop = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(backdrop, rgba).convert("RGB")
    return tile.convert("RGB")
