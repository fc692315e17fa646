"""Unusual_Detection: a 2x3 grid of scenes; select the one or two that are unusual.

Each puzzle has one theme, so the normal cells show what "usual" means and the odd ones stand out
to a person at once, yet by nothing colour can tell (same sprites, same backdrops, only turned or
moved): things upside down; creatures and vehicles in the wrong place (a fish in the sky, a car
under the sea); shop signs whose lettering is mirrored.
"""

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import grid_cells
from puzzles.drawing.fonts import text_font
from puzzles.types.base import Generated
from puzzles.types.kinds import CellSetType

ROWS, COLS = 2, 3
CELL = 200
INNER = CELL - 2 * 3

# Things with an obvious "up" that are never normally seen upside down.
UPRIGHT = {
    "horse": "🐎",
    "cow": "🐄",
    "pig": "🐖",
    "sheep": "🐑",
    "goat": "🐐",
    "elephant": "🐘",
    "camel": "🐪",
    "giraffe": "🦒",
    "zebra": "🦓",
    "deer": "🦌",
    "kangaroo": "🦘",
    "rooster": "🐓",
    "penguin": "🐧",
    "flamingo": "🦩",
    "dog": "🐕",
    "tiger": "🐅",
    "car": "🚗",
    "bus": "🚌",
    "truck": "🚚",
    "tractor": "🚜",
    "house": "🏠",
    "tree": "🌳",
    "tent": "⛺",
    "cactus": "🌵",
    "sunflower": "🌻",
    "cake": "🎂",
    "rabbit": "🐇",
}
# Where things belong: sky, sea (under water) or land; an unusual cell puts one where it never is.
HABITATS = {
    "sky": {
        "airplane": "✈",
        "balloon": "🎈",
        "kite": "🪁",
        "helicopter": "🚁",
        "eagle": "🦅",
        "parrot": "🦜",
        "butterfly": "🦋",
        "dove": "🕊",
    },
    "sea": {
        "fish": "🐟",
        "tropical fish": "🐠",
        "blowfish": "🐡",
        "whale": "🐳",
        "dolphin": "🐬",
        "octopus": "🐙",
        "shark": "🦈",
        "jellyfish": "🪼",
    },
    "land": {
        "cow": "🐄",
        "horse": "🐎",
        "pig": "🐖",
        "sheep": "🐑",
        "elephant": "🐘",
        "giraffe": "🦒",
        "camel": "🐪",
        "dog": "🐕",
        "car": "🚗",
        "bus": "🚌",
        "truck": "🚚",
        "tractor": "🚜",
        "house": "🏠",
        "tree": "🌳",
        "tent": "⛺",
    },
}
# Where each group looks plainly wrong (a bird standing on grass is not unusual, so sky -> sea only).
WRONG_PLACES = {"sky": ["sea"], "sea": ["sky", "land"], "land": ["sky", "sea"]}
# Sign words with several letters that change when mirrored (no word reads the same in a mirror).
WORDS = [
    "STOP",
    "EXIT",
    "OPEN",
    "CAFE",
    "BAKERY",
    "PARK",
    "HOTEL",
    "SCHOOL",
    "BANK",
    "PIZZA",
    "SALE",
    "POLICE",
    "BOOKS",
    "FRESH",
    "GARDEN",
    "MARKET",
    "BEACH",
    "DANGER",
    "SLOW",
    "TICKETS",
    "GIFTS",
    "MUSIC",
    "DINER",
    "PETS",
    "FRUIT",
    "BREAD",
    "CINEMA",
    "LIBRARY",
    "GARAGE",
    "FLORIST",
    "SNACKS",
    "PHARMACY",
    "BIKES",
    "TAXI",
]
THEMES = ("upside_down", "habitat", "mirrored_text")


def _stand(rng, image, char, ground, *, upside_down=False, mirror=False):
    """A sprite standing on the ground line (on its head when upside down), with a shadow."""
    size = int(INNER * rng.uniform(0.5, 0.68))
    item = grid_cells.sprite(char, size, upside_down=upside_down, mirror=mirror)
    x = int(rng.integers(6, max(7, INNER - item.width - 6)))
    foot = min(INNER - 6, ground + int(rng.uniform(0.15, 0.45) * (INNER - ground)))
    y = max(4, foot - item.height)
    grid_cells.shadow(ImageDraw.Draw(image, "RGBA"), x + item.width / 2, y + item.height - 2, item.width * 0.8)
    image.paste(item, (x, y), item)


def _float(rng, image, char, top, bottom, *, mirror=False, tilt=0.0):
    """A sprite somewhere between heights `top` and `bottom` (fractions of the cell)."""
    size = int(INNER * rng.uniform(0.45, 0.62))
    item = grid_cells.sprite(char, size, mirror=mirror, angle=tilt)
    x = int(rng.integers(6, max(7, INNER - item.width - 6)))
    lo, hi = int(top * INNER), int(bottom * INNER) - item.height
    y = int(rng.integers(max(4, lo), max(5, hi)))
    image.paste(item, (x, min(y, INNER - item.height - 4)), item)


def upside_down_cell(rng, name, unusual):
    image, ground = grid_cells.land(rng, (INNER, INNER), horizon=rng.uniform(0.45, 0.58))
    _stand(rng, image, UPRIGHT[name], ground, upside_down=unusual, mirror=bool(rng.random() < 0.5))
    return image


def habitat_cell(rng, char, place, home):
    """`char` (which lives in `home`) drawn in `place`."""
    mirror = bool(rng.random() < 0.5)
    if place == "land":
        image, ground = grid_cells.land(
            rng,
            (INNER, INNER),
            horizon=rng.uniform(0.45, 0.58),
            ground=["grass", "meadow", "sand", "dirt"][int(rng.integers(4))],
        )
        _stand(rng, image, char, ground, mirror=mirror)
    elif place == "sky":
        image = grid_cells.sky(rng, (INNER, INNER))
        _float(rng, image, char, 0.08, 0.95, mirror=mirror, tilt=float(rng.uniform(-12, 12)))
    else:
        image = grid_cells.underwater(rng, (INNER, INNER))
        if home == "sea":
            _float(rng, image, char, 0.05, 0.85, mirror=mirror)
        else:  # sunk to the sea floor
            _float(rng, image, char, 0.35, 0.97, mirror=mirror)
    return image


def _word_layer(word, color, board_w, board_h):
    size = int(board_h * 0.55)
    font = text_font(size, True)
    while size > 10 and font.getlength(word) > board_w * 0.86:
        size -= 2
        font = text_font(size, True)
    layer = Image.new("RGBA", (board_w, board_h), (0, 0, 0, 0))
    ImageDraw.Draw(layer).text((board_w / 2, board_h / 2), word, font=font, fill=color, anchor="mm")
    return layer


def sign_cell(rng, word, unusual):
    """A shop or street sign on a wall or on posts; an unusual one has mirror-image lettering."""
    outdoors = rng.random() < 0.5
    if outdoors:
        image, ground = grid_cells.land(rng, (INNER, INNER), horizon=rng.uniform(0.5, 0.65))
    else:
        image, ground = grid_cells.indoor(rng, (INNER, INNER))
    draw = ImageDraw.Draw(image, "RGBA")
    board_w = int(INNER * rng.uniform(0.74, 0.9))
    board_h = int(board_w * rng.uniform(0.36, 0.48))
    x0 = int(rng.integers(4, INNER - board_w - 3))
    y0 = int(rng.integers(int(INNER * 0.12), max(int(INNER * 0.12) + 1, int(ground - board_h - INNER * 0.12))))
    if outdoors:
        for px in (x0 + board_w * 0.2, x0 + board_w * 0.8):
            draw.rectangle((px - 3, y0 + board_h, px + 3, ground + INNER * 0.18), fill=(90, 90, 96, 255))
    else:
        draw.rectangle((x0 + 5, y0 + 5, x0 + board_w + 5, y0 + board_h + 5), fill=(0, 0, 0, 60))  # wall shadow
    dark = rng.random() < 0.5
    fill = tuple(int(v) for v in rng.integers(20, 110, 3)) if dark else tuple(int(v) for v in rng.integers(200, 256, 3))
    ink = tuple(int(v) for v in rng.integers(225, 256, 3)) if dark else tuple(int(v) for v in rng.integers(0, 70, 3))
    edge = tuple(int(v) for v in rng.integers(0, 256, 3))
    draw.rounded_rectangle(
        (x0, y0, x0 + board_w, y0 + board_h),
        radius=board_h // 6,
        fill=fill + (255,),
        outline=edge + (255,),
        width=max(3, board_h // 12),
    )
    layer = _word_layer(word, ink + (255,), board_w, board_h)
    if unusual:
        layer = layer.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    image.paste(layer, (x0, y0), layer)
    return image


class UnusualDetection(CellSetType):
    name = "Unusual_Detection"
    steps = 4  # the published page's "Action Steps" stars
    instruction = "Select all the unusual images"
    published_answer_key = "answer"

    def generate(self, rng: np.random.Generator) -> Generated:
        cells = ROWS * COLS
        unusual = sorted(int(i) for i in rng.choice(cells, size=int(rng.integers(1, 3)), replace=False))
        theme = THEMES[int(rng.integers(len(THEMES)))]
        images, notes = getattr(self, f"_{theme}")(rng, [i in unusual for i in range(cells)])
        image = grid_cells.compose(images, ROWS, COLS, CELL)
        size = list(image.size)
        return Generated(
            public={"instruction": self.instruction, "image": "image", "image_size": size, "grid_size": [ROWS, COLS]},
            truth={
                "correct_patches": unusual,
                "answer": unusual,
                "grid_size": [ROWS, COLS],
                "image_size": size,
                "theme": theme,
                "cells": notes,
            },
            images={"image": image},
        )

    @staticmethod
    def _upside_down(rng, odd):
        names = [list(UPRIGHT)[i] for i in rng.choice(len(UPRIGHT), size=len(odd), replace=False)]
        images = [upside_down_cell(rng, n, o) for n, o in zip(names, odd)]
        return images, [f"{n} upside down" if o else n for n, o in zip(names, odd)]

    @staticmethod
    def _habitat(rng, odd):
        # Every place that holds an odd cell also holds a normal one, so no backdrop is the tell.
        kinds = list(HABITATS)
        odd_pairs = []
        for _ in range(sum(odd)):
            home = kinds[int(rng.integers(3))]
            wrong_places = WRONG_PLACES[home]
            odd_pairs.append((home, wrong_places[int(rng.integers(len(wrong_places)))]))
        normal_homes = sorted({place for _, place in odd_pairs})
        while len(normal_homes) < len(odd) - sum(odd):
            normal_homes.append(kinds[int(rng.integers(3))])
        normal_homes = [normal_homes[i] for i in rng.permutation(len(normal_homes))]
        odd_iter, normal_iter = iter(odd_pairs), iter(normal_homes)
        homes, places = [], []
        for o in odd:
            home, place = next(odd_iter) if o else (lambda h: (h, h))(next(normal_iter))
            homes.append(home)
            places.append(place)
        used: dict[str, set] = {h: set() for h in HABITATS}
        images, notes = [], []
        for home, place, o in zip(homes, places, odd):
            pool = [n for n in HABITATS[home] if n not in used[home]]
            name = pool[int(rng.integers(len(pool)))]
            used[home].add(name)
            images.append(habitat_cell(rng, HABITATS[home][name], place, home))
            notes.append(f"{name} in {place}" + (" (belongs in " + home + ")" if o else ""))
        return images, notes

    @staticmethod
    def _mirrored_text(rng, odd):
        words = [WORDS[i] for i in rng.choice(len(WORDS), size=len(odd), replace=False)]
        images = [sign_cell(rng, w, o) for w, o in zip(words, odd)]
        return images, [f"{w} mirrored" if o else w for w, o in zip(words, odd)]
