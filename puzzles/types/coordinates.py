"""Coordinates: a seat map with lettered rows and numbered columns; the left image marks one seat
with a red X, the options show Jerry (a mouse) on different seats."""

import numpy as np
from PIL import ImageDraw

from puzzles.drawing import canvas
from puzzles.drawing.arrow_options import option_puzzle, paste_centered, rotated_emoji
from puzzles.drawing.emoji import ANIMALS
from puzzles.drawing.text import centered_text
from puzzles.types.base import Generated
from puzzles.types.kinds import OptionType

SIZE = (480, 480)
LEFT, TOP, RIGHT, BOTTOM = 58, 58, 14, 14  # margins; the axis labels live in the left and top ones
JERRY = ANIMALS["mouse"]
ROW_NAMES = "ABCDEF"
SEAT_COLORS = [
    (178, 34, 52),
    (30, 90, 170),
    (40, 130, 80),
    (120, 60, 150),
    (200, 110, 20),
    (20, 120, 130),
    (150, 40, 100),
    (60, 70, 150),
]


def _shade(color, factor):
    return tuple(max(0, min(255, int(c * factor))) for c in color)


def _cells(rows, cols):
    w, h = SIZE
    cw, ch = (w - LEFT - RIGHT) / cols, (h - TOP - BOTTOM) / rows
    return cw, ch


def _seat_center(row, col, rows, cols):
    cw, ch = _cells(rows, cols)
    return LEFT + (col + 0.5) * cw, TOP + (row + 0.5) * ch


def _board(rng, rows, cols):
    """The seat map: floor, axis labels, seats."""
    floor = canvas.gradient(SIZE, canvas.random_color(rng, 200, 250), canvas.random_color(rng, 190, 245))
    image = canvas.add_noise(floor, rng, 6)
    draw = ImageDraw.Draw(image)
    w, h = SIZE
    cw, ch = _cells(rows, cols)
    axis = (35, 35, 45)
    # Axis strips and lines
    draw.rectangle((0, 0, w, TOP - 8), fill=(245, 245, 240))
    draw.rectangle((0, 0, LEFT - 8, h), fill=(245, 245, 240))
    draw.line((LEFT - 8, TOP - 8, w - 4, TOP - 8), fill=axis, width=3)
    draw.line((LEFT - 8, TOP - 8, LEFT - 8, h - 4), fill=axis, width=3)
    for c in range(cols):
        x = LEFT + (c + 0.5) * cw
        draw.line((x, TOP - 14, x, TOP - 8), fill=axis, width=2)
        centered_text(draw, (x, (TOP - 14) / 2 + 1), str(c + 1), 24, fill=axis)
    for r in range(rows):
        y = TOP + (r + 0.5) * ch
        draw.line((LEFT - 14, y, LEFT - 8, y), fill=axis, width=2)
        centered_text(draw, ((LEFT - 14) / 2 + 1, y), ROW_NAMES[r], 24, fill=axis)
    # Faint guide lines between seats
    guide = _shade(floor.getpixel((w // 2, h // 2)), 0.85)
    for c in range(1, cols):
        x = LEFT + c * cw
        draw.line((x, TOP, x, h - BOTTOM), fill=guide, width=1)
    for r in range(1, rows):
        y = TOP + r * ch
        draw.line((LEFT, y, w - RIGHT, y), fill=guide, width=1)
    # Cinema seats: backrest, cushion, armrests
    color = SEAT_COLORS[int(rng.integers(len(SEAT_COLORS)))]
    dark, light = _shade(color, 0.7), _shade(color, 1.25)
    for r in range(rows):
        for c in range(cols):
            x0, y0 = LEFT + c * cw, TOP + r * ch
            sw, sh = cw * 0.74, ch * 0.74
            x1, y1 = x0 + (cw - sw) / 2, y0 + (ch - sh) / 2
            rad = int(min(sw, sh) * 0.18)
            draw.rounded_rectangle(
                (x1 + sw * 0.12, y1, x1 + sw * 0.88, y1 + sh * 0.62), rad, fill=color, outline=dark, width=2
            )
            draw.rounded_rectangle(
                (x1 + sw * 0.08, y1 + sh * 0.55, x1 + sw * 0.92, y1 + sh), rad, fill=light, outline=dark, width=2
            )
            draw.rounded_rectangle((x1, y1 + sh * 0.4, x1 + sw * 0.14, y1 + sh), rad // 2, fill=dark)
            draw.rounded_rectangle((x1 + sw * 0.86, y1 + sh * 0.4, x1 + sw, y1 + sh), rad // 2, fill=dark)
    return image


def _mark(board, center, size):
    image = board.copy()
    draw = ImageDraw.Draw(image)
    x, y = center
    s = size / 2
    for width, fill in ((13, (255, 255, 255)), (8, (220, 20, 30))):
        draw.line((x - s, y - s, x + s, y + s), fill=fill, width=width)
        draw.line((x - s, y + s, x + s, y - s), fill=fill, width=width)
    return image


def _seat_name(seat, cols):
    r, c = divmod(seat, cols)
    return f"{ROW_NAMES[r]}{c + 1}"


class Coordinates(OptionType):
    name = "Coordinates"
    steps = 3  # the published page's "Action Steps" stars
    instruction = "Using the arrows, move Jerry to the indicated seat"

    def generate(self, rng: np.random.Generator) -> Generated:
        rows, cols = int(rng.integers(4, 6)), int(rng.integers(4, 6))
        option_count = int(rng.integers(4, 9))
        correct = int(rng.integers(option_count))
        target = int(rng.integers(rows * cols))
        tr, tc = divmod(target, cols)
        # Wrong seats: one or two neighbours of the marked seat (so a careless glance fails),
        # the rest anywhere else.
        neighbours = [
            r * cols + c
            for r in range(max(0, tr - 1), min(rows, tr + 2))
            for c in range(max(0, tc - 1), min(cols, tc + 2))
            if (r, c) != (tr, tc)
        ]
        near = [int(s) for s in rng.choice(neighbours, size=int(rng.integers(1, 3)), replace=False)]
        rest = [s for s in range(rows * cols) if s != target and s not in near]
        far = [int(s) for s in rng.choice(rest, size=option_count - 1 - len(near), replace=False)]
        wrong = near + far
        wrong = [wrong[int(i)] for i in rng.permutation(len(wrong))]
        seats = wrong[:correct] + [target] + wrong[correct:]

        board = _board(rng, rows, cols)
        cw, ch = _cells(rows, cols)
        reference = _mark(board, _seat_center(tr, tc, rows, cols), min(cw, ch) * 0.55)
        jerry_size = int(min(cw, ch) * 0.78) // 4 * 4
        options = []
        for seat in seats:
            image = board.copy()
            r, c = divmod(seat, cols)
            x, y = _seat_center(r, c, rows, cols)
            sprite = rotated_emoji(JERRY, jerry_size, 0, bool(rng.integers(2)))
            paste_centered(image, sprite, (x, y + ch * 0.04))
            options.append(image)
        return option_puzzle(
            self.instruction,
            reference,
            options,
            correct,
            extra_truth={
                "target_seat": _seat_name(target, cols),
                "seat_grid": [rows, cols],
                "option_seats": [_seat_name(s, cols) for s in seats],
            },
        )
