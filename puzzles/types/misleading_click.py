"""Misleading_Click: "Click the image to continue." -- anywhere except the figure that says not to.

The picture is a small scene of emoji. One figure stands out and asks not to be clicked: a
character holding a sign, a character with a speech bubble, or a warning sign with a banner.
The mask is that whole figure (character, sign, post, bubble, banner), dilated a little; every
other pixel of the picture is a correct click.
"""

import math

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas, emoji, masks
from puzzles.drawing.fonts import text_font
from puzzles.types.base import Generated
from puzzles.types.kinds import AvoidMaskPointType

SIZE = (640, 480)
DILATE = 6

CHARACTERS = ["🙅", "🤖", "👻", "🐵", "🧸", "🤡", "👾", "🐼", "🐧", "🦉", "🐸", "🐻", "🦊", "🐨", "🐱", "🐶"]
WARNINGS = ["🛑", "⛔", "🚫", "⚠"]
MESSAGES = [
    ("DON'T", "CLICK ME!"),
    ("Don't click", "me!"),
    ("Do NOT", "click me"),
    ("Please don't", "click me"),
    ("NO CLICKING", "ON ME!"),
    ("Don't click", "here!"),
    ("Hands off!", "Don't click me"),
    ("Not me!", "Don't click"),
]
SCENE = [
    "tree",
    "house",
    "tent",
    "flower",
    "cactus",
    "mushroom",
    "cow",
    "sheep",
    "horse",
    "rabbit",
    "duck",
    "balloon",
    "kite",
    "apple",
    "deer",
    "butterfly",
    "snail",
    "bicycle",
    "car",
    "boat",
    "umbrella",
    "cake",
    "gift",
    "guitar",
    "ball",
    "pizza",
    "grapes",
    "bell",
    "book",
    "cup",
]
BOARDS = [
    ((255, 255, 255), (200, 30, 30)),
    ((255, 220, 60), (30, 30, 30)),
    ((220, 40, 40), (255, 255, 255)),
    ((255, 245, 225), (30, 30, 30)),
    ((40, 40, 50), (255, 230, 80)),
]


def _text_block(lines, size):
    font = text_font(size, True)
    widths = [font.getlength(line) for line in lines]
    return font, int(max(widths)), int(size * 1.25 * len(lines))


def _draw_lines(draw, center, lines, font, size, fill):
    cx, cy = center
    top = cy - size * 1.25 * len(lines) / 2 + size * 0.625
    for i, line in enumerate(lines):
        draw.text((cx, top + i * size * 1.25), line, font=font, fill=fill, anchor="mm")


def _sign_figure(rng, lines):
    """A character holding up a board on a post."""
    char = CHARACTERS[int(rng.integers(len(CHARACTERS)))]
    body = emoji.emoji_image(char, 4 * int(rng.integers(20, 29)))
    size = int(rng.integers(20, 27))
    font, tw, th = _text_block(lines, size)
    bw, bh = tw + 30, th + 22
    post = int(rng.integers(24, 40))
    w = max(bw, body.width) + 8
    h = bh + post + body.height
    sprite = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(sprite)
    fill, ink = BOARDS[int(rng.integers(len(BOARDS)))]
    bx = (w - bw) // 2
    draw.rectangle((w // 2 - 4, bh - 4, w // 2 + 4, bh + post + body.height // 2), fill=(120, 80, 40, 255))
    draw.rounded_rectangle(
        (bx, 0, bx + bw - 1, bh - 1), radius=10, fill=fill + (255,), outline=(40, 30, 20, 255), width=3
    )
    _draw_lines(draw, (w / 2, bh / 2), lines, font, size, ink)
    sprite.alpha_composite(body, ((w - body.width) // 2, bh + post))
    return sprite, char


def _bubble_figure(rng, lines):
    """A character with a speech bubble above, to one side."""
    char = CHARACTERS[int(rng.integers(len(CHARACTERS)))]
    body = emoji.emoji_image(char, 4 * int(rng.integers(22, 31)))
    size = int(rng.integers(19, 25))
    font, tw, th = _text_block(lines, size)
    bw, bh = tw + 36, th + 26
    tail = 26
    w = max(bw + body.width // 2, body.width) + 4
    h = bh + tail + body.height - 10
    sprite = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(sprite)
    left = rng.random() < 0.5  # character on the left, bubble to its right (or mirrored)
    body_x = 0 if left else w - body.width
    bubble_x = w - bw if left else 0
    head_x = body_x + body.width // 2
    base_x = bubble_x + (bw * 0.3 if left else bw * 0.7)
    outline = (40, 40, 50, 255)
    fill = (255, 255, 255, 255) if rng.random() < 0.7 else (255, 240, 170, 255)
    draw.polygon([(base_x - 12, bh - 4), (base_x + 12, bh - 4), (head_x, bh + tail)], fill=fill, outline=outline)
    draw.rounded_rectangle((bubble_x, 0, bubble_x + bw - 1, bh - 1), radius=18, fill=fill, outline=outline, width=3)
    draw.polygon([(base_x - 9, bh - 6), (base_x + 9, bh - 6), (head_x, bh + tail - 5)], fill=fill)
    ink = (200, 30, 30) if rng.random() < 0.5 else (30, 30, 40)
    _draw_lines(draw, (bubble_x + bw / 2, bh / 2), lines, font, size, ink)
    sprite.alpha_composite(body, (body_x, h - body.height))
    return sprite, char


def _warning_figure(rng, lines):
    """A big warning sign with a banner across its foot."""
    char = WARNINGS[int(rng.integers(len(WARNINGS)))]
    sign = emoji.emoji_image(char, 4 * int(rng.integers(26, 36)))
    size = int(rng.integers(20, 26))
    font, tw, th = _text_block(lines, size)
    bw, bh = tw + 28, th + 18
    w = max(bw, sign.width) + 4
    h = sign.height + bh - 24
    sprite = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    sprite.alpha_composite(sign, ((w - sign.width) // 2, 0))
    draw = ImageDraw.Draw(sprite)
    bx, by = (w - bw) // 2, h - bh
    fill, ink = BOARDS[int(rng.integers(len(BOARDS)))]
    draw.rounded_rectangle(
        (bx, by, bx + bw - 1, h - 1), radius=8, fill=fill + (255,), outline=(30, 30, 30, 255), width=3
    )
    _draw_lines(draw, (w / 2, by + bh / 2), lines, font, size, ink)
    return sprite, char


FIGURES = [_sign_figure, _bubble_figure, _warning_figure]


def _overlaps(box, boxes, pad):
    return any(
        box[0] < b[2] + pad and b[0] < box[2] + pad and box[1] < b[3] + pad and b[1] < box[3] + pad for b in boxes
    )


class MisleadingClick(AvoidMaskPointType):
    name = "Misleading_Click"
    steps = 1  # the published page's "Action Steps" stars
    instruction = "Click the image to continue."

    def generate(self, rng: np.random.Generator) -> Generated:
        w, h = SIZE
        lines = MESSAGES[int(rng.integers(len(MESSAGES)))]
        style = int(rng.integers(len(FIGURES)))
        figure, char = FIGURES[style](rng, lines)
        fw, fh = figure.size
        # the figure sits near the middle, where a hasty click would land
        fx = int(np.clip(rng.normal(w / 2, w / 7) - fw / 2, 10, w - fw - 10))
        fy = int(np.clip(rng.normal(h / 2, h / 7) - fh / 2, 10, h - fh - 10))
        figure_box = (fx, fy, fx + fw, fy + fh)

        image = canvas.background(rng, SIZE, clutter=int(rng.integers(10, 20)))
        boxes = [figure_box]
        for k in rng.choice(len(SCENE), size=int(rng.integers(5, 11)), replace=False):
            name = SCENE[k]
            sprite = emoji.emoji_image(emoji.ANIMALS.get(name) or emoji.OBJECTS[name], 4 * int(rng.integers(10, 19)))
            for _ in range(20):
                x, y = int(rng.integers(6, w - sprite.width - 6)), int(rng.integers(6, h - sprite.height - 6))
                box = (x, y, x + sprite.width, y + sprite.height)
                if not _overlaps(box, boxes, 14):
                    canvas.paste_rgba(image, sprite, (x, y))
                    boxes.append(box)
                    break
        canvas.paste_rgba(image, figure, (fx, fy))

        figure_mask = masks.from_alpha(figure, SIZE, (fx, fy))
        mask = masks.dilate(figure_mask, DILATE)
        x1, y1, x2, y2 = masks.bbox(mask)
        return Generated(
            public={"instruction": self.instruction, "image": "image", "image_size": list(SIZE)},
            truth={
                "mask": "avoid",
                "image_size": list(SIZE),
                "point": _safe_point(rng, (x1, y1, x2, y2), boxes[1:]),
                "center": masks.centroid(mask),
                "radius": round(math.hypot(x2 - x1, y2 - y1) / 2, 1),
                "bbox": [x1, y1, x2, y2],
                "avoid_area": {"x": x1, "y": y1, "width": x2 - x1 + 1, "height": y2 - y1 + 1},
                "figure": {"style": ["sign", "bubble", "warning"][style], "emoji": char, "text": " ".join(lines)},
            },
            images={"image": image},
            masks={"avoid": mask},
        )


def _safe_point(rng, box, scenery):
    """A point on open ground well away from the figure's box (at least 60 px when the picture
    allows), preferably not on a scenery emoji either (those are fine to click, but plainer)."""
    w, h = SIZE
    grid_x, grid_y = np.meshgrid(np.arange(30, w - 29, 10), np.arange(30, h - 29, 10))
    xs, ys = grid_x.ravel(), grid_y.ravel()
    dx = np.maximum(np.maximum(box[0] - xs, xs - box[2]), 0)
    dy = np.maximum(np.maximum(box[1] - ys, ys - box[3]), 0)
    distance = np.hypot(dx, dy)
    good = distance >= min(60.0, distance.max() * 0.8)
    clear = good.copy()
    for bx1, by1, bx2, by2 in scenery:
        clear &= ~((xs > bx1 - 10) & (xs < bx2 + 10) & (ys > by1 - 10) & (ys < by2 + 10))
    choices = np.flatnonzero(clear if clear.any() else good)
    i = int(choices[int(rng.integers(len(choices)))])
    return [int(xs[i]), int(ys[i])]
