"""Rotation_Match: the left image shows a hand pointing in one of eight directions; rotate the
object in 45-degree steps until it points the same way."""

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas
from puzzles.drawing.arrow_options import background_variants, paste_centered, turned_emoji
from puzzles.drawing.emoji import emoji_image
from puzzles.types.base import Generated
from puzzles.types.contract import PublicData
from puzzles.types.kinds import AngleType

SIZE = (480, 480)
CENTER = (SIZE[0] / 2, SIZE[1] / 2)
# Emoji with an unmistakable pointing/facing direction, with the compass direction they point
# in as drawn (degrees clockwise from straight up; checked by rendering each turned upright).
OBJECTS = {
    "rocket": ("🚀", 45),
    "airplane": ("✈", 45),
    "pencil": ("✏", 135),
    "fountain pen": ("🖋", 225),
    "dagger": ("🗡", 225),
    "carrot": ("🥕", 225),
    "arrow": ("➡", 90),
    "shark": ("🦈", 270),
    "fish": ("🐟", 270),
}
OBJECT_NAMES = sorted(OBJECTS)
HANDS = [("👆", 0), ("👉", 90), ("☝", 0)]
OBJECT_SIZES = (230, 250, 270)
HAND_SIZES = (200, 220, 240)
ANGLES = list(range(0, 360, 45))


# Clockwise quarter turns as exact (and cheap) transposes.
_QUARTER_TURNS = {
    0: None,
    90: Image.Transpose.ROTATE_270,
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_90,
}


def _native(native, flip):
    return (360 - native) % 360 if flip else native  # a mirror image points at the mirrored direction


def _sprite(char, native, size, flip, direction):
    """The emoji (mirrored if `flip`) turned to point at compass `direction`."""
    return turned_emoji(char, size, (direction - _native(native, flip)) % 360, flip)


def _all_directions(char, native, size, flip):
    """The emoji pointing at each of the eight compass directions. Only two bicubic rotations
    (one per 45-degree class); the rest are quarter-turn transposes of those two."""
    emoji = emoji_image(char, size)
    if flip:
        emoji = emoji.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    native = _native(native, flip)
    fine = {}
    out = {}
    for direction in ANGLES:
        turn = (direction - native) % 360
        rest = turn % 90
        if rest not in fine:
            fine[rest] = emoji if rest == 0 else emoji.rotate(-rest, resample=Image.Resampling.BICUBIC, expand=True)
        quarter = _QUARTER_TURNS[turn - rest]
        out[direction] = fine[rest] if quarter is None else fine[rest].transpose(quarter)
    return out


def _dial(base, rng):
    """A soft disc behind the object, so the page reads as a turntable."""
    image = base.copy()
    draw = ImageDraw.Draw(image, "RGBA")
    r = 210
    cx, cy = CENTER
    tone = canvas.random_color(rng, 200, 255)
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=tone + (110,), outline=(255, 255, 255, 160), width=4)
    return image


class RotationMatch(AngleType):
    name = "Rotation_Match"
    steps = 4  # the published page's "Action Steps" stars
    instruction = "Use the arrows to rotate the object so it points in the same direction as the reference hand."

    def generate(self, rng: np.random.Generator) -> Generated:
        name = OBJECT_NAMES[int(rng.integers(len(OBJECT_NAMES)))]
        char, native = OBJECTS[name]
        hand_direction = int(rng.choice(ANGLES))
        correct = int(rng.choice(ANGLES[1:]))  # never 0: some rotation is always needed
        start = (hand_direction - correct) % 360

        reference_bg, object_bg = background_variants(rng, SIZE, 2)
        hand_char, hand_native = HANDS[int(rng.integers(len(HANDS)))]
        hand = _sprite(hand_char, hand_native, int(rng.choice(HAND_SIZES)), bool(rng.integers(2)), hand_direction)
        reference = reference_bg.copy()
        paste_centered(reference, hand, CENTER)

        dial = _dial(object_bg, rng)
        size, flip = int(rng.choice(OBJECT_SIZES)), bool(rng.integers(2))
        images = {"reference": reference}
        rotations = {}
        sprites = _all_directions(char, native, size, flip)
        for angle in ANGLES:
            image = dial.copy()
            paste_centered(image, sprites[(start + angle) % 360], CENTER)
            key = f"object_{angle}"
            images[key] = image
            rotations[str(angle)] = key
        public: PublicData = {
            "instruction": self.instruction,
            "image": rotations["0"],
            "image_size": list(SIZE),
            "rotations": rotations,
            "reference": "reference",
            "reference_size": list(SIZE),
        }
        truth = {
            "correct_angle": correct,
            "reference_image": "reference",
            "object_base_image": "object",  # the images are object_0 ... object_315
            "target_object": name,
            "hand_direction": hand_direction,
            "start_direction": start,
        }
        return Generated(public=public, truth=truth, images=images)
