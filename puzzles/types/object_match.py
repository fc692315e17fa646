"""Object_Match: the left image shows N copies of an object; page through images with other
counts of the same object until the count matches."""

import numpy as np

from puzzles.drawing import canvas
from puzzles.drawing.arrow_options import background_variants, jittered_spots, option_puzzle, rotated_emoji
from puzzles.drawing.emoji import ANIMALS, OBJECTS
from puzzles.types.base import Generated
from puzzles.types.kinds import OptionType

SIZE = (480, 480)
GRID = (4, 4)  # scatter cells: 16 spots for at most 10 objects
SPRITE_SIZES = (58, 66, 74, 82)  # a few sizes only, so the emoji cache stays small
MAX_COUNT = 10
# Compact, recognisable objects and animals (the trowel glyph is missing from the font).
CHOICES = {
    **{k: v for k, v in OBJECTS.items() if k != "trowel"},
    **{
        k: ANIMALS[k]
        for k in (
            "duck",
            "fish",
            "ladybug",
            "turtle",
            "frog",
            "snail",
            "bee",
            "penguin",
            "octopus",
            "crab",
            "butterfly",
            "owl",
        )
    },
}
NAMES = sorted(CHOICES)


def _variants(rng, char):
    """A few sizes/tilts/mirrorings of the object for this puzzle (rotating is the costly part)."""
    out = []
    for _ in range(5):
        size = int(SPRITE_SIZES[int(rng.integers(len(SPRITE_SIZES)))])
        tilt = int(rng.choice((-20, -10, 0, 0, 10, 20)))
        out.append(rotated_emoji(char, size, tilt, bool(rng.integers(2))))
    return out


def _scene(rng, base, variants, count):
    image = base.copy()
    for x, y in jittered_spots(rng, count, SIZE, GRID, max(SPRITE_SIZES)):
        sprite = variants[int(rng.integers(len(variants)))]
        canvas.paste_rgba(
            image, sprite, (x + (max(SPRITE_SIZES) - sprite.width) // 2, y + (max(SPRITE_SIZES) - sprite.height) // 2)
        )
    return image


class ObjectMatch(OptionType):
    name = "Object_Match"
    steps = 3  # the published page's "Action Steps" stars
    column_labels = ("Match This!", "")
    instruction = "Use the arrows to change the number of objects until it matches the left image."

    def generate(self, rng: np.random.Generator) -> Generated:
        option_count = int(rng.integers(4, 9))
        correct = int(rng.integers(option_count))
        target_name = NAMES[int(rng.integers(len(NAMES)))]
        char = CHOICES[target_name]
        number = int(rng.integers(2, 10))
        # The options show consecutive counts (the arrows add or remove one object, wrapping
        # around), a window of the range 1..MAX_COUNT that contains the reference's count.
        low = int(rng.integers(max(1, number - option_count + 1), min(number, MAX_COUNT - option_count + 1) + 1))
        window = list(range(low, low + option_count))
        at = window.index(number)
        counts = [window[(at - correct + i) % option_count] for i in range(option_count)]
        assert counts[correct] == number and len(set(counts)) == option_count

        reference_bg, option_bg = background_variants(rng, SIZE, 2)
        variants = _variants(rng, char)
        reference = _scene(rng, reference_bg, variants, number)
        options = [_scene(rng, option_bg, variants, n) for n in counts]
        return option_puzzle(
            self.instruction,
            reference,
            options,
            correct,
            extra_truth={"target_object": target_name, "reference_count": number, "option_counts": counts},
        )
