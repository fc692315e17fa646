"""Image_Matching: the left image shows an animal; page through images of different animals
until the right image shows the same animal."""

import numpy as np

from puzzles.drawing import canvas
from puzzles.drawing.arrow_options import background_variants, option_puzzle, turned_emoji
from puzzles.drawing.emoji import ANIMALS
from puzzles.types.base import Generated
from puzzles.types.kinds import OptionType

SIZE = (480, 480)
SPRITE_SIZES = (150, 175, 200, 225)
# Animals that look alike as emoji: at most one of each group appears in a puzzle, so the match
# is never a judgement call between two similar glyphs.
LOOKALIKES = [
    {"cat", "tiger", "leopard", "lion"},
    {"dog", "wolf", "fox"},
    {"cow", "bison", "goat", "sheep"},
    {"horse", "zebra", "deer", "kangaroo", "camel", "giraffe"},
    {"duck", "swan", "rooster", "turkey", "dodo"},
    {"eagle", "owl", "parrot", "peacock"},
    {"whale", "dolphin", "fish"},
    {"elephant", "rhinoceros", "hippopotamus"},
    {"monkey", "gorilla"},
    {"crocodile", "lizard", "snake"},
    {"rabbit", "mouse"},
    {"otter", "squirrel", "sloth"},
    {"bear", "panda", "koala"},
    {"bee", "ladybug", "spider"},
]
GROUP = {animal: i for i, group in enumerate(LOOKALIKES) for animal in group}
NAMES = sorted(ANIMALS)


def _pick_animals(rng, count):
    """`count` animals, no two from the same look-alike group."""
    chosen, groups = [], set()
    for i in rng.permutation(len(NAMES)):
        name = NAMES[int(i)]
        group = GROUP.get(name, name)
        if group not in groups:
            chosen.append(name)
            groups.add(group)
            if len(chosen) == count:
                return chosen
    raise AssertionError("not enough distinct animals")


def _scene(rng, base, animal, tilt=0):
    """The animal at a random size, mirroring and position on the background."""
    image = base.copy()
    size = int(SPRITE_SIZES[int(rng.integers(len(SPRITE_SIZES)))])
    sprite = turned_emoji(ANIMALS[animal], size, tilt, bool(rng.integers(2)))
    w, h = SIZE
    x = int(rng.integers(20, w - sprite.width - 20))
    y = int(rng.integers(20, h - sprite.height - 20))
    canvas.paste_rgba(image, sprite, (x, y))
    return image


class ImageMatching(OptionType):
    name = "Image_Matching"
    steps = 3  # the published page's "Action Steps" stars
    instruction = "Using the arrows, match the animal in the left and right image."

    def generate(self, rng: np.random.Generator) -> Generated:
        option_count = int(rng.integers(4, 9))
        correct = int(rng.integers(option_count))
        animals = _pick_animals(rng, option_count)
        target = animals[0]
        animals = animals[1:]
        animals.insert(correct, target)
        # Every image gets its own variant (flip/turn and colour order) of one background, and
        # only the reference is tilted (rotating a large sprite costs ~2 ms): never a pixel match.
        backgrounds = background_variants(rng, SIZE, option_count + 1)
        reference = _scene(rng, backgrounds[0], target, int(rng.choice((-12, 12))))
        options = [_scene(rng, bg, animal) for bg, animal in zip(backgrounds[1:], animals)]
        return option_puzzle(
            self.instruction,
            reference,
            options,
            correct,
            extra_truth={"target_object": target, "option_animals": animals},
        )
