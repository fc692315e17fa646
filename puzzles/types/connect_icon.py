"""Connect_icon: find the option whose dotted line joins the same two icons as the reference.

Every option shows the same set of 4-6 icons, shuffled to new places, with one dotted line
joining two of them; the wrong options join other pairs, often sharing one icon with the
reference pair, so both ends must be checked.
"""

import math

import numpy as np
from PIL import ImageDraw

from puzzles.drawing import canvas
from puzzles.drawing.emoji import ANIMALS, OBJECTS, emoji_image
from puzzles.types.base import Generated
from puzzles.types.kinds import OptionType

OPTION_SIZE = (520, 360)
REFERENCE_SIZE = (300, 360)

# Visually distinct icons (no two that a glance could confuse, e.g. no car next to a bus).
ICON_NAMES = [
    "apple",
    "banana",
    "grapes",
    "pineapple",
    "carrot",
    "mushroom",
    "cactus",
    "flower",
    "cup",
    "pizza",
    "cake",
    "key",
    "bell",
    "hammer",
    "scissors",
    "book",
    "lamp",
    "clock",
    "camera",
    "guitar",
    "ball",
    "balloon",
    "gift",
    "crown",
    "glasses",
    "shoe",
    "anchor",
    "rocket",
    "umbrella",
    "bicycle",
    "car",
    "boat",
    "airplane",
    "house",
    "tree",
    "magnet",
]
ICONS = {name: OBJECTS[name] for name in ICON_NAMES}
ICONS.update(
    {
        name: ANIMALS[name]
        for name in (
            "cat",
            "dog",
            "frog",
            "penguin",
            "owl",
            "fox",
            "turtle",
            "butterfly",
            "octopus",
            "snail",
            "panda",
            "lion",
            "elephant",
        )
    }
)

DOT_COLOURS = [(25, 25, 30), (200, 30, 40), (20, 70, 200), (120, 30, 160), (10, 110, 60)]


def _segment_distance(p, a, b) -> float:
    """Distance from point p to the segment a-b."""
    ax, ay = a
    bx, by = b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(p[0] - ax - t * dx, p[1] - ay - t * dy)


def _arrange(rng, count, size, radius, pair, min_gap=28, clearance=14, min_link=None):
    """Centres for `count` icons, none overlapping, the `pair` far enough apart and their
    connecting segment clear of every other icon (so it is obvious which two it joins)."""
    w, h = size
    min_link = min_link or 2 * radius + 70
    margin = radius + 8
    for _ in range(400):
        centres: list[tuple[float, float]] = []
        for _ in range(count):
            for _ in range(60):
                p = (float(rng.uniform(margin, w - margin)), float(rng.uniform(margin, h - margin)))
                if all(math.hypot(p[0] - q[0], p[1] - q[1]) >= 2 * radius + min_gap for q in centres):
                    centres.append(p)
                    break
            else:
                break
        if len(centres) < count:
            continue
        a, b = centres[pair[0]], centres[pair[1]]
        if math.hypot(a[0] - b[0], a[1] - b[1]) < min_link:
            continue
        if all(_segment_distance(c, a, b) > radius + clearance for k, c in enumerate(centres) if k not in pair):
            return centres
    raise RuntimeError("could not arrange the icons")  # not reached at these sizes


def _dotted_line(draw, a, b, radius, colour):
    """Round dots from the rim of one icon to the rim of the other, with a light halo."""
    length = math.hypot(b[0] - a[0], b[1] - a[1])
    ux, uy = (b[0] - a[0]) / length, (b[1] - a[1]) / length
    start, end = radius + 7, length - radius - 7
    steps = max(2, int((end - start) // 14))
    for i in range(steps + 1):
        d = start + (end - start) * i / steps
        x, y = a[0] + ux * d, a[1] + uy * d
        draw.ellipse((x - 6, y - 6, x + 6, y + 6), fill=(255, 255, 255, 170))
    for i in range(steps + 1):
        d = start + (end - start) * i / steps
        x, y = a[0] + ux * d, a[1] + uy * d
        draw.ellipse((x - 4, y - 4, x + 4, y + 4), fill=colour + (255,))


def _draw_icons(image, centres, glyphs, radius, disc, ring):
    draw = ImageDraw.Draw(image, "RGBA")
    for (x, y), glyph in zip(centres, glyphs):
        draw.ellipse((x - radius + 2, y - radius + 4, x + radius + 2, y + radius + 4), fill=(0, 0, 0, 60))
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=disc, outline=ring, width=3)
        canvas.paste_rgba(image, glyph, (round(x - glyph.width / 2), round(y - glyph.height / 2)))


class ConnectIcon(OptionType):
    name = "Connect_icon"
    steps = 4  # the published page's "Action Steps" stars
    dot_pitch = 29
    instruction = "Using the arrows, connect the same two icons with the dotted line as shown on the left."
    published_answer_key = "correct_option"

    def generate(self, rng: np.random.Generator) -> Generated:
        option_count = int(rng.integers(4, 9))
        # Enough icons that every option can join a different pair.
        icon_count = int(rng.integers(5 if option_count > 6 else 4, 7))
        names = sorted(ICONS)
        chosen = [names[i] for i in rng.choice(len(names), size=icon_count, replace=False)]
        radius = int(rng.integers(32, 39))
        glyphs = [emoji_image(ICONS[n], int(radius * 1.3)) for n in chosen]
        disc = tuple(int(v) for v in rng.integers(225, 256, size=3)) + (235,)
        ring = canvas.random_color(rng, 60, 200) + (255,)
        dots = DOT_COLOURS[int(rng.integers(len(DOT_COLOURS)))]

        # The reference pair is icons 0 and 1 (the icons were drawn in random order already).
        target = (0, 1)
        sharing = [
            (i, j)
            for i in range(icon_count)
            for j in range(i + 1, icon_count)
            if (i, j) != target and ({i, j} & {0, 1})
        ]
        disjoint = [(i, j) for i in range(icon_count) for j in range(i + 1, icon_count) if not ({i, j} & {0, 1})]
        rng.shuffle(sharing)
        rng.shuffle(disjoint)
        # Mostly near misses (one icon right, one wrong), some with neither icon.
        wanted_sharing = min(len(sharing), max(1, round((option_count - 1) * 0.65)))
        wrong = sharing[:wanted_sharing] + disjoint[: option_count - 1 - wanted_sharing]
        wrong += sharing[wanted_sharing:][: option_count - 1 - len(wrong)]
        correct_index = int(rng.integers(option_count))
        pairs = [tuple(int(v) for v in wrong[i]) for i in rng.permutation(len(wrong))]
        pairs.insert(correct_index, target)

        base = canvas.background(rng, OPTION_SIZE, clutter=12)
        images = {}
        keys = []
        for index, pair in enumerate(pairs):
            image = base.copy()
            centres = _arrange(rng, icon_count, OPTION_SIZE, radius, pair)
            draw = ImageDraw.Draw(image, "RGBA")
            _dotted_line(draw, centres[pair[0]], centres[pair[1]], radius, dots)
            _draw_icons(image, centres, glyphs, radius, disc, ring)
            key = f"option_{index}"
            images[key] = image
            keys.append(key)

        # The reference: the two icons alone, on a slice of the same backdrop.
        left = int(rng.integers(0, OPTION_SIZE[0] - REFERENCE_SIZE[0] + 1))
        reference = base.crop((left, 0, left + REFERENCE_SIZE[0], REFERENCE_SIZE[1]))
        centres = _arrange(rng, 2, REFERENCE_SIZE, radius, target, min_link=2 * radius + 110)
        _dotted_line(ImageDraw.Draw(reference, "RGBA"), centres[0], centres[1], radius, dots)
        _draw_icons(reference, centres, glyphs[:2], radius, disc, ring)
        images["reference"] = reference

        return Generated(
            public={
                "instruction": self.instruction,
                "image": keys[0],
                "image_size": list(OPTION_SIZE),
                "options": keys,
                "option_count": option_count,
                "reference": "reference",
                "reference_size": list(REFERENCE_SIZE),
            },
            truth={
                "correct_option_index": correct_index,
                "option_count": option_count,
                "correct_option": correct_index,
                "reference_image": "reference",
                "options": keys,
                "icons": chosen,
                "reference_pair": [chosen[0], chosen[1]],
                "option_pairs": [[chosen[i], chosen[j]] for i, j in pairs],
            },
            images=images,
        )
