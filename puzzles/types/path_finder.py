"""Path_Finder: pick the option where the object stands on the map spot marked by the X.

The reference is a small tiled map (terrain, a winding road, landmarks) with an X on one
empty tile. Every option shows the same map, without the X, and the object on a different
empty tile; near misses sit on a tile next to the X, so the landmarks must be used.
"""

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas
from puzzles.drawing.emoji import ANIMALS, OBJECTS, emoji_image
from puzzles.types.base import Generated
from puzzles.types.kinds import OptionType

# Every published Path_Finder image is 540x360 (its page lays out by that natural size); the maps
# cut it into (columns, rows) tiles of whole pixels, near square.
SIZE = (540, 360)
GRIDS = [(6, 4), (5, 4), (6, 5), (5, 3), (9, 6)]

# Terrain: (tile colour A, tile colour B, road colour, road edge).
TERRAINS = [
    ((118, 176, 86), (108, 166, 78), (196, 170, 120), (160, 135, 90)),  # meadow, dirt road
    ((150, 190, 100), (140, 182, 92), (120, 120, 126), (90, 90, 96)),  # field, paved road
    ((226, 204, 150), (216, 194, 140), (170, 130, 90), (140, 100, 65)),  # desert
    ((232, 238, 244), (220, 228, 236), (150, 160, 175), (120, 130, 145)),  # snow
    ((96, 150, 110), (88, 140, 102), (210, 190, 150), (170, 150, 110)),  # forest
]

LANDMARKS = [
    "🌳",
    "🌲",
    "🏠",
    "🏡",
    "⛪",
    "🏰",
    "⛺",
    "🌵",
    "🍄",
    "🌻",
    "🌼",
    "🪨",
    "⛰",
    "🌊",
    "🏔",
    "🌴",
    "🎪",
    "🗼",
    "⛲",
    "🌷",
]
MOVERS = {
    "car": OBJECTS["car"],
    "bus": OBJECTS["bus"],
    "truck": OBJECTS["truck"],
    "bicycle": OBJECTS["bicycle"],
    "tractor": "🚜",
    "motorcycle": OBJECTS["motorcycle"],
    "dog": ANIMALS["dog"],
    "cat": ANIMALS["cat"],
    "rabbit": ANIMALS["rabbit"],
    "horse": ANIMALS["horse"],
    "pig": ANIMALS["pig"],
    "duck": ANIMALS["duck"],
    "turtle": ANIMALS["turtle"],
    "penguin": ANIMALS["penguin"],
    "fox": ANIMALS["fox"],
    "sheep": ANIMALS["sheep"],
}


def _road(rng, cols, rows):
    """Tiles of a winding road from the left edge to the right edge (a random monotone walk)."""
    r = int(rng.integers(0, rows))
    tiles = []
    for c in range(cols):
        tiles.append((c, r))
        if c < cols - 1 and rng.random() < 0.55:
            nr = int(np.clip(r + rng.choice([-1, 1]) * int(rng.integers(1, 3)), 0, rows - 1))
            step = 1 if nr > r else -1
            while r != nr:
                r += step
                tiles.append((c, r))
    return tiles


def _draw_x(draw, cx, cy, half):
    for width, colour in ((max(14, half * 2 // 3), (255, 255, 255)), (max(9, half * 2 // 5), (215, 25, 30))):
        draw.line((cx - half, cy - half, cx + half, cy + half), fill=colour, width=width)
        draw.line((cx - half, cy + half, cx + half, cy - half), fill=colour, width=width)


class PathFinder(OptionType):
    name = "Path_Finder"
    steps = 4  # the published page's "Action Steps" stars
    instruction = "Use the arrows to select the image where the object is on the spot marked by the X."
    published_answer_key = "correct_option"

    def generate(self, rng: np.random.Generator) -> Generated:
        cols, rows = GRIDS[int(rng.integers(len(GRIDS)))]
        size = SIZE
        tile_w, tile_h = SIZE[0] // cols, SIZE[1] // rows
        tile = min(tile_w, tile_h)  # what is drawn on a tile is sized to fit it
        light, dark, road_colour, road_edge = TERRAINS[int(rng.integers(len(TERRAINS)))]

        # Checkered terrain with grain, so each tile reads as a square of the map.
        cells = np.indices((rows, cols)).sum(axis=0) % 2
        board = np.where(cells[..., None] == 0, np.array(light), np.array(dark)).astype(np.uint8)
        base = Image.fromarray(board, "RGB").resize(size, Image.Resampling.NEAREST)
        draw = ImageDraw.Draw(base, "RGBA")

        road = _road(rng, cols, rows)
        road_set = set(road)
        centre = lambda c, r: (c * tile_w + tile_w / 2, r * tile_h + tile_h / 2)  # noqa: E731
        # The road runs in from the left edge and out at the right edge.
        points = [centre(-1, road[0][1])] + [centre(c, r) for c, r in road] + [centre(cols, road[-1][1])]
        draw.line(points, fill=road_edge, width=int(tile * 0.42), joint="curve")
        draw.line(points, fill=road_colour, width=int(tile * 0.34), joint="curve")
        for p in points:  # round the bends and ends
            rr = tile * 0.17
            draw.ellipse((p[0] - rr, p[1] - rr, p[0] + rr, p[1] + rr), fill=road_colour)
        base = canvas.add_noise(base, rng, 7)
        draw = ImageDraw.Draw(base, "RGBA")

        # Landmarks on about a third of the off-road tiles, drawn from a per-puzzle set of kinds.
        off_road = [(c, r) for r in range(rows) for c in range(cols) if (c, r) not in road_set]
        kinds = [LANDMARKS[i] for i in rng.choice(len(LANDMARKS), size=int(rng.integers(4, 7)), replace=False)]
        # At least 4, but never more than there are: a 5x3 road can leave fewer than 4 tiles off
        # it (about 1 puzzle in 8,000), which made the draw below fail.
        landmark_count = min(len(off_road), max(4, round(len(off_road) * float(rng.uniform(0.42, 0.55)))))
        landmark_tiles = [off_road[i] for i in rng.choice(len(off_road), size=landmark_count, replace=False)]
        for c, r in landmark_tiles:
            # Sizes in steps of 4 px: emoji_image caches every size it is asked for.
            glyph = emoji_image(
                kinds[int(rng.integers(len(kinds)))], 4 * round(tile * float(rng.uniform(0.62, 0.78)) / 4)
            )
            x, y = centre(c, r)
            x += float(rng.uniform(-0.08, 0.08)) * tile
            y += float(rng.uniform(-0.08, 0.08)) * tile
            canvas.paste_rgba(base, glyph, (round(x - glyph.width / 2), round(y - glyph.height / 2)))

        # Faint tile borders.
        for c in range(1, cols):
            draw.line((c * tile_w, 0, c * tile_w, size[1]), fill=(255, 255, 255, 70), width=1)
        for r in range(1, rows):
            draw.line((0, r * tile_h, size[0], r * tile_h), fill=(255, 255, 255, 70), width=1)

        # The X and the option spots: free tiles only (road tiles or empty ground).
        free = [(c, r) for r in range(rows) for c in range(cols) if (c, r) not in set(landmark_tiles)]
        target = free[int(rng.integers(len(free)))]
        option_count = int(rng.integers(4, 9))
        others = [t for t in free if t != target]
        near = [t for t in others if max(abs(t[0] - target[0]), abs(t[1] - target[1])) == 1]
        far = [t for t in others if t not in near]
        rng.shuffle(near)
        rng.shuffle(far)
        near_count = min(len(near), int(rng.integers(1, 4)), option_count - 1)
        wrong = near[:near_count] + far[: option_count - 1 - near_count]
        wrong += near[near_count:][: option_count - 1 - len(wrong)]
        correct_index = int(rng.integers(option_count))
        spots = [wrong[i] for i in rng.permutation(len(wrong))]
        spots.insert(correct_index, target)

        mover = sorted(MOVERS)[int(rng.integers(len(MOVERS)))]
        glyph = emoji_image(MOVERS[mover], int(tile * 0.8))
        if bool(rng.integers(0, 2)):
            glyph = glyph.transpose(Image.Transpose.FLIP_LEFT_RIGHT)

        images = {}
        keys = []
        for index, (c, r) in enumerate(spots):
            image = base.copy()
            x, y = centre(c, r)
            odraw = ImageDraw.Draw(image, "RGBA")
            odraw.ellipse((x - tile * 0.36, y + tile * 0.2, x + tile * 0.36, y + tile * 0.36), fill=(0, 0, 0, 70))
            canvas.paste_rgba(image, glyph, (round(x - glyph.width / 2), round(y - glyph.height / 2)))
            key = f"option_{index}"
            images[key] = image
            keys.append(key)

        reference = base.copy()
        x, y = centre(*target)
        _draw_x(ImageDraw.Draw(reference), x, y, int(tile * 0.3))
        images["reference"] = reference

        instruction = f"Use the arrows to select the image where the {mover} is on the spot marked by the X."
        return Generated(
            public={
                "instruction": instruction,
                "image": keys[0],
                "image_size": list(size),
                "options": keys,
                "option_count": option_count,
                "reference": "reference",
                "reference_size": list(size),
            },
            truth={
                "correct_option_index": correct_index,
                "option_count": option_count,
                "correct_option": correct_index,
                "reference_image": "reference",
                "options": keys,
                "object": mover,
                "grid": [cols, rows],
                "target_cell": list(target),
                "option_cells": [list(s) for s in spots],
            },
            images=images,
        )
