"""Select_Animal: a 2x3 grid of animal photos; pick the one named animal."""

from typing import Any

import numpy as np
from PIL import ImageDraw

from puzzles.drawing import grid_cells
from puzzles.drawing.emoji import ANIMALS
from puzzles.types.base import Generated
from puzzles.types.kinds import SINGLE_CHOICE_CHANCE, CellSetType

ROWS, COLS = 2, 3
CELL = 200
INNER = CELL - 2 * 3

# Animals that look alike at a glance never share a grid, so exactly one cell can be the answer.
LOOKALIKES = [
    {"rooster", "turkey", "peacock"},
    {"duck", "swan", "dodo"},
    {"tiger", "leopard", "lion"},
    {"dog", "wolf", "fox"},
    {"whale", "dolphin", "fish"},
    {"hippopotamus", "rhinoceros", "elephant"},
    {"monkey", "gorilla", "sloth"},
    {"lizard", "crocodile", "snake"},
    {"squirrel", "hedgehog", "mouse"},
    {"cow", "bison"},
    {"bear", "panda", "koala"},
    {"eagle", "owl", "parrot"},
    {"horse", "zebra"},
    {"goat", "sheep", "deer"},
    {"bee", "ladybug", "butterfly"},
]
UNFAMILIAR = {"dodo", "otter", "bison"}  # fine as distractors, too little known to be asked for
PROPS = "🌳🌲🌷🌻🪨🌾🍄🌿🪵🌵"  # scenery that is never an animal


def _group(name: str) -> set[str]:
    return next((g for g in LOOKALIKES if name in g), {name})


def pick_animals(rng: np.random.Generator, count: int) -> list[str]:
    """`count` animals, no two from the same look-alike group."""
    names = list(ANIMALS)
    chosen: list[str] = []
    for i in rng.permutation(len(names)):
        name = names[i]
        if not any(name in _group(c) for c in chosen):
            chosen.append(name)
            if len(chosen) == count:
                break
    return chosen


def animal_cell(rng: np.random.Generator, name: str):
    """A small photo: a backdrop, maybe a bit of scenery, and the animal standing or hovering in it."""
    image, ground, kind = grid_cells.photo_background(rng, (INNER, INNER))
    draw = ImageDraw.Draw(image, "RGBA")
    if kind != "sky" and rng.random() < 0.45:
        prop = grid_cells.sprite(PROPS[int(rng.integers(len(PROPS)))], int(INNER * rng.uniform(0.2, 0.3)))
        side = rng.random() < 0.5
        x = int(rng.uniform(0, 0.12) * INNER) if side else int(INNER - prop.width - rng.uniform(0, 0.12) * INNER)
        y = (
            ground + int(rng.uniform(0.02, 0.1) * INNER) if ground else int(rng.uniform(0.55, 0.75) * INNER)
        ) - prop.height
        image.paste(prop, (x, max(0, y)), prop)
    size = int(INNER * rng.uniform(0.5, 0.74))
    animal = grid_cells.sprite(
        ANIMALS[name],
        size,
        mirror=bool(rng.random() < 0.5),
        angle=float(rng.uniform(-8, 8)) if rng.random() < 0.3 else 0.0,
    )
    x = int(rng.integers(4, max(5, INNER - animal.width - 4)))
    if ground is not None:
        foot = min(INNER - 4, ground + int(rng.uniform(0.12, 0.3) * (INNER - ground)) + animal.height // 6)
        y = max(4, foot - animal.height)
        grid_cells.shadow(draw, x + animal.width / 2, y + animal.height - 2, animal.width * 0.8)
    else:
        y = int(rng.integers(4, max(5, INNER - animal.height - 4)))
    image.paste(animal, (x, y), animal)
    return image


def instruction_for(target: str) -> str:
    """As the published page writes it from target_object: always "a" ("Pick a owl" too)."""
    return f"Pick a {target}"


class SelectAnimal(CellSetType):
    name = "Select_Animal"
    steps = 2  # the published page's "Action Steps" stars
    single_choice = True
    chance_rule = SINGLE_CHOICE_CHANCE
    instruction = "Pick a rooster"

    def published_instruction(self, entry: dict[str, Any]) -> str | None:
        """The published page writes "Pick a <target_object>" whatever the prompt says."""
        target = entry.get("target_object")
        return instruction_for(target) if isinstance(target, str) and target.strip() else None

    def generate(self, rng: np.random.Generator) -> Generated:
        animals = pick_animals(rng, ROWS * COLS)
        correct = int(rng.choice([i for i, a in enumerate(animals) if a not in UNFAMILIAR]))
        target = animals[correct]
        image = grid_cells.compose([animal_cell(rng, a) for a in animals], ROWS, COLS, CELL)
        question = instruction_for(target)
        size = list(image.size)
        return Generated(
            public={"instruction": question, "image": "image", "image_size": size, "grid_size": [ROWS, COLS]},
            truth={
                "correct_patches": [correct],
                "grid_size": [ROWS, COLS],
                "image_size": size,
                "target_object": target,
                "question": question,
                "cell_objects": animals,
            },
            images={"image": image},
        )
