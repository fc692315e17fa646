"""Bingo: a 3x3 grid of picture tiles; swap two so three identical pictures form a line."""

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas, grid_cells
from puzzles.drawing.emoji import ANIMALS, OBJECTS
from puzzles.types.base import Generated
from puzzles.types.image_recognition import group
from puzzles.types.kinds import SwapType

N = 3
CELL = 160
INNER = CELL - 2 * 3
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
PAIRS = [(i, j) for i in range(N * N) for j in range(i + 1, N * N)]
# How many tiles of each picture: one picture thrice, the rest as pairs and singles, so several
# lines look nearly done but only one or two swaps finish one.
COUNTS = [(3, 2, 2, 1, 1), (3, 3, 2, 1), (3, 2, 2, 2), (3, 2, 1, 1, 1, 1), (3, 3, 1, 1, 1)]
PICTURES = {k: v for k, v in {**ANIMALS, **OBJECTS}.items() if k != "trowel"}


def line_of(tiles) -> tuple[int, int, int] | None:
    return next((line for line in LINES if tiles[line[0]] == tiles[line[1]] == tiles[line[2]]), None)


def swapped(tiles, i, j):
    out = list(tiles)
    out[i], out[j] = out[j], out[i]
    return out


def valid_swaps(tiles) -> list[list[int]]:
    """Every pair whose swap makes a line (checked by brute force over all 36 pairs)."""
    return [[i, j] for i, j in PAIRS if tiles[i] != tiles[j] and line_of(swapped(tiles, i, j))]


def _tile_backdrop(rng) -> Image.Image:
    """One backdrop for every tile of the puzzle, so identical pictures are identical tiles."""
    top = canvas.random_color(rng, 170, 250)
    shade = [max(0, c - int(rng.integers(15, 45))) for c in top]
    bottom = (shade[0], shade[1], shade[2])
    image = canvas.gradient((INNER, INNER), top, bottom)
    draw = ImageDraw.Draw(image, "RGBA")
    r = INNER * 0.42
    draw.ellipse((INNER / 2 - r, INNER / 2 - r, INNER / 2 + r, INNER / 2 + r), fill=(255, 255, 255, 70))
    return image


class Bingo(SwapType):
    name = "Bingo"
    steps = 3  # the published page's "Action Steps" stars
    instruction = "Click two images to exchange their position to line up the same images to a line"

    def generate(self, rng: np.random.Generator) -> Generated:
        counts = COUNTS[int(rng.integers(len(COUNTS)))]
        names = self._pictures(rng, len(counts))
        pool = [name for name, count in zip(names, counts) for _ in range(count)]
        while True:
            tiles = [pool[i] for i in rng.permutation(len(pool))]
            if line_of(tiles):
                continue
            answer = valid_swaps(tiles)
            if len(answer) == 1 or (len(answer) == 2 and rng.random() < 0.3):
                break
        backdrop = _tile_backdrop(rng)
        faces = {}
        for name in names:
            face = backdrop.copy()
            pic = grid_cells.sprite(PICTURES[name], int(INNER * 0.7))
            face.paste(pic, ((INNER - pic.width) // 2, (INNER - pic.height) // 2), pic)
            faces[name] = canvas.add_noise(face, rng, 4)
        image = grid_cells.compose([faces[t] for t in tiles], N, N, CELL, color=(70, 70, 80))
        i, j = answer[0]
        line = line_of(swapped(tiles, i, j))
        assert line is not None  # answer holds only swaps that make a line
        size = list(image.size)
        return Generated(
            public={"instruction": self.instruction, "image": "image", "image_size": size, "grid_size": [N, N]},
            truth={
                "answer": answer,
                "grid_size": [N, N],
                "image_size": size,
                "solution_line": list(line),
                "tiles": tiles,
            },
            images={"image": image},
        )

    @staticmethod
    def _pictures(rng, count: int) -> list[str]:
        """`count` distinct pictures, no two look-alikes."""
        names = list(PICTURES)
        chosen: list[str] = []
        for k in rng.permutation(len(names)):
            name = names[k]
            if not any(name in group(c) for c in chosen):
                chosen.append(name)
                if len(chosen) == count:
                    return chosen
        raise AssertionError("not enough distinct pictures")
