"""Click_Order: icons are scattered over the picture; click them in the order the reference shows.

The reference strip shows the target icons upright, numbered 1..n. On the main picture the
same icons appear turned and rescaled a little, with up to two decoy icons that are not in the
reference. Icons are far apart (centres >= 100 px) and at least 52 px across, so a click within
the 20 px tolerance of a centre lands on its icon and never near another.
"""

import math

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas, emoji, text
from puzzles.types.base import Generated
from puzzles.types.kinds import PointSequenceType

SIZE = (600, 400)
TOLERANCE = 20
MIN_APART = 100
EDGE = 48  # icon centres stay this far from the border

# Visually distinct icons (no two cats, no two balls, ...), by emoji name.
ICONS = [
    "rooster",
    "dog",
    "pig",
    "elephant",
    "giraffe",
    "lion",
    "panda",
    "monkey",
    "frog",
    "turtle",
    "snail",
    "octopus",
    "crab",
    "butterfly",
    "bee",
    "ladybug",
    "penguin",
    "owl",
    "whale",
    "snake",
    "bicycle",
    "car",
    "airplane",
    "boat",
    "umbrella",
    "key",
    "bell",
    "hammer",
    "scissors",
    "pencil",
    "lamp",
    "clock",
    "camera",
    "guitar",
    "ball",
    "balloon",
    "gift",
    "crown",
    "glasses",
    "anchor",
    "rocket",
    "banana",
    "grapes",
    "pineapple",
    "carrot",
    "mushroom",
    "cactus",
    "cake",
    "magnet",
    "house",
]


def _char(name: str) -> str:
    return emoji.ANIMALS.get(name) or emoji.OBJECTS[name]


def _centres(rng, count):
    w, h = SIZE
    while True:
        spots: list[tuple[float, float]] = []
        for _ in range(400):
            p = (float(rng.uniform(EDGE, w - EDGE)), float(rng.uniform(EDGE, h - EDGE)))
            if all(math.hypot(p[0] - q[0], p[1] - q[1]) >= MIN_APART for q in spots):
                spots.append(p)
                if len(spots) == count:
                    return spots


def _reference(names, rng) -> Image.Image:
    n = len(names)
    slot, icon = 92, 58
    w, h = n * slot + 28, 170
    paper = canvas.random_color(rng, 225, 256)
    image = Image.new("RGB", (w, h), paper)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((3, 3, w - 4, h - 4), radius=14, outline=(90, 90, 100), width=3)
    text.centered_text(draw, (w / 2, 26), "Click in this order", 19, fill=(40, 40, 50))
    badge = canvas.random_color(rng, 20, 120)
    for i, name in enumerate(names):
        cx = 14 + slot * i + slot / 2
        sprite = emoji.emoji_image(_char(name), icon)
        canvas.paste_rgba(image, sprite, (int(cx - sprite.width / 2), int(88 - sprite.height / 2)))
        draw.ellipse((cx - 16, 126, cx + 16, 158), fill=badge)
        text.centered_text(draw, (cx, 142), str(i + 1), 20, fill=(255, 255, 255))
        if i < n - 1:
            ax = cx + slot / 2
            draw.polygon([(ax - 6, 80), (ax + 6, 88), (ax - 6, 96)], fill=(120, 120, 130))
    return image


class ClickOrder(PointSequenceType):
    name = "Click_Order"
    steps = 5  # the published page's "Action Steps" stars
    guess_points = (3, 5)  # generate() draws 3 to 5 icons
    instruction = "Click the icons in order as shown in the reference image."

    def generate(self, rng: np.random.Generator) -> Generated:
        count = int(rng.integers(3, 6))
        decoys = int(rng.integers(0, 3))
        picks = rng.choice(len(ICONS), size=count + decoys, replace=False)
        names = [ICONS[i] for i in picks]
        centres = _centres(rng, count + decoys)

        image = canvas.background(rng, SIZE, clutter=int(rng.integers(12, 24)))
        draw = ImageDraw.Draw(image, "RGBA")
        for _ in range(int(rng.integers(3, 7))):  # faint scribbles, as on real click-order captchas
            points = [(float(rng.uniform(0, SIZE[0])), float(rng.uniform(0, SIZE[1]))) for _ in range(3)]
            draw.line(points, fill=canvas.random_color(rng) + (70,), width=int(rng.integers(2, 5)), joint="curve")
        answer = []
        for k, (name, (cx, cy)) in enumerate(zip(names, centres)):
            size = 4 * int(rng.integers(13, 18))  # 52..68 px
            sprite = emoji.emoji_image(_char(name), size)
            angle = float(rng.uniform(-28, 28))
            sprite = sprite.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
            x, y = int(round(cx - sprite.width / 2)), int(round(cy - sprite.height / 2))
            canvas.paste_rgba(image, sprite, (x, y))
            if k < count:
                answer.append([x + sprite.width // 2, y + sprite.height // 2])

        reference = _reference(names[:count], rng)
        return Generated(
            public={
                "instruction": self.instruction,
                "image": "image",
                "image_size": list(SIZE),
                "reference": "reference",
                "reference_size": list(reference.size),
            },
            truth={
                "answer": answer,
                "tolerance": TOLERANCE,
                "image_size": list(SIZE),
                "order_image": "reference",
                "icons": names[:count],
                "decoys": names[count:],
            },
            images={"image": image, "reference": reference},
        )
