"""Place_Dot: a car drives along a curvy dashed path; click where the path ends.

Other vehicles (never cars) may have dashed paths of their own that cross the car's, drawn in
other colours; colours are random, so only following the line from the car finds the end. The
car's path ends well clear of every other line, sprite and of its own earlier stretch, so a
click within the tolerance of the end is unambiguous.
"""

import math

import numpy as np
from PIL import ImageDraw

from puzzles.drawing import canvas, emoji, scenery, strokes
from puzzles.types.base import Generated
from puzzles.types.contract import ToleranceTruth
from puzzles.types.kinds import TolerancePointType

SIZE = (640, 480)
MARGIN = 34  # path ends stay this far inside the image
TOLERANCE = 15
CARS = ["🚗", "🚕", "🚙"]
OTHERS = ["🚌", "🚚", "🚲", "🛵", "🚜", "🏍", "⛵", "🚀", "🚁"]
# Distinct inks: where lines cross, colour keeps them apart (black only on light, white only on dark).
INKS = [(220, 40, 40), (30, 90, 220), (20, 150, 60), (240, 150, 0), (150, 50, 200), (40, 40, 40), (255, 255, 255)]
CLEAR_END = 48  # px from the car path's end to anything else drawn


def _path(rng, start_box, avoid_boxes):
    """A smooth path leaving the sprite box `start_box`, or None when it would not fit."""
    w, h = SIZE
    x1, y1, x2, y2 = start_box
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    heading = math.atan2(h / 2 - cy, w / 2 - cx) + rng.uniform(-1.1, 1.1)
    # leave from the sprite's edge in that direction
    reach = min(abs((x2 - x1) / 2 / (math.cos(heading) or 1e-9)), abs((y2 - y1) / 2 / (math.sin(heading) or 1e-9)))
    points = [(cx + (reach + 2) * math.cos(heading), cy + (reach + 2) * math.sin(heading))]
    for _ in range(int(rng.integers(3, 6))):
        for _attempt in range(12):
            turn = heading + rng.uniform(-1.2, 1.2)
            step = rng.uniform(80, 170)
            x, y = points[-1][0] + step * math.cos(turn), points[-1][1] + step * math.sin(turn)
            if MARGIN <= x <= w - MARGIN and MARGIN <= y <= h - MARGIN:
                heading = turn
                points.append((x, y))
                break
        else:
            return None
    line = strokes.catmull_rom(points, 20)
    if line[:, 0].min() < 12 or line[:, 0].max() > w - 12 or line[:, 1].min() < 12 or line[:, 1].max() > h - 12:
        return None
    for (bx1, by1, bx2, by2), pad, skip in [(b, 25, 0) for b in avoid_boxes] + [(start_box, 4, 3)]:
        inside = (
            (line[:, 0] > bx1 - pad) & (line[:, 0] < bx2 + pad) & (line[:, 1] > by1 - pad) & (line[:, 1] < by2 + pad)
        )
        if inside[skip:].any():
            return None
    return line


def _distance(points: np.ndarray, xy) -> np.ndarray:
    return np.hypot(points[:, 0] - xy[0], points[:, 1] - xy[1])


def _box_distance(box, xy) -> float:
    x1, y1, x2, y2 = box
    dx = max(x1 - xy[0], 0, xy[0] - x2)
    dy = max(y1 - xy[1], 0, xy[1] - y2)
    return math.hypot(dx, dy)


def _gap(a, b) -> float:
    dx = max(a[0] - b[2], b[0] - a[2], 0)
    dy = max(a[1] - b[3], b[1] - a[3], 0)
    return math.hypot(dx, dy)


def _spot(rng, dims, boxes):
    """A box of the sprite's size, well clear of the other sprites' boxes."""
    w, h = SIZE
    sw, sh = dims
    for _ in range(50):
        x, y = int(rng.integers(16, w - sw - 16)), int(rng.integers(16, h - sh - 16))
        box = (x, y, x + sw, y + sh)
        if all(_gap(b, box) > 70 for b in boxes):
            return box
    return None


def _car(rng, dims):
    """The car's box and path, or None."""
    box = _spot(rng, dims, [])
    line = _path(rng, box, [])
    if line is None:
        return None
    end = line[-1]
    lengths = strokes.arc_lengths(line)
    if lengths[-1] < 280 or math.hypot(end[0] - line[0][0], end[1] - line[0][1]) < 140:
        return None
    if (_distance(line[lengths < lengths[-1] - 90], end) < CLEAR_END).any():
        return None  # the path comes back close to its own end
    if _box_distance(box, end) < CLEAR_END:
        return None
    return box, line


def _tangents(line: np.ndarray) -> np.ndarray:
    step = np.gradient(line, axis=0)
    return step / np.maximum(np.hypot(step[:, 0], step[:, 1]), 1e-9)[:, None]


def _crosses_cleanly(a: np.ndarray, b: np.ndarray) -> bool:
    """Where two lines meet they must cross at a clear angle, never run along each other."""
    near = np.hypot(a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1]) < 16
    if not near.any():
        return True
    i, j = np.nonzero(near)
    ta, tb = _tangents(a)[i], _tangents(b)[j]
    sine = np.abs(ta[:, 0] * tb[:, 1] - ta[:, 1] * tb[:, 0])
    return bool(sine.min() > 0.6)


def _other(rng, dims, boxes, lines):
    """Another vehicle's box and path that keep clear of the car path's end, or None."""
    box = _spot(rng, dims, boxes)
    if box is None:
        return None
    car_line = lines[0]
    end = car_line[-1]
    if _box_distance(box, end) < CLEAR_END or any(
        (
            (ln[:, 0] > box[0] - 12) & (ln[:, 0] < box[2] + 12) & (ln[:, 1] > box[1] - 12) & (ln[:, 1] < box[3] + 12)
        ).any()
        for ln in lines
    ):
        return None
    line = _path(rng, box, boxes)
    if line is None or _distance(line, end).min() < CLEAR_END:
        return None
    if _distance(car_line, line[-1]).min() < 30:
        return None  # it must not seem to end on the car's path
    if any(_box_distance(b, line[-1]) < 60 for b in boxes + [box]):
        return None  # nor seem to lead to a vehicle
    if _box_distance(boxes[0], line[0]) < 45:
        return None  # nor seem to leave from the car
    if strokes.arc_lengths(line)[-1] < 200 or not all(_crosses_cleanly(other, line) for other in lines):
        return None
    return box, line


def _scene(rng, sprites):
    """Boxes and paths for the sprites, the car's first."""
    others = len(sprites) - 1
    while True:
        car = None
        while car is None:
            car = _car(rng, sprites[0].size)
        boxes, lines = [car[0]], [car[1]]
        for sprite in sprites[1:]:
            found = None
            for _attempt in range(40):
                found = _other(rng, sprite.size, boxes, lines)
                if found is not None:
                    break
            if found is None:
                break
            boxes.append(found[0])
            lines.append(found[1])
        if len(boxes) == others + 1:
            return boxes, lines


class PlaceDot(TolerancePointType[ToleranceTruth]):
    name = "Place_Dot"
    steps = 2  # the published page's "Action Steps" stars
    instruction = "Click to place a Dot at the end of the car's path"

    def generate(self, rng: np.random.Generator) -> Generated:
        others = int(rng.choice([0, 1, 1, 2, 2]))  # vehicles with paths of their own
        size = int(rng.choice([56, 60, 64, 68]))
        chars = [CARS[int(rng.integers(len(CARS)))]] + [
            OTHERS[i] for i in rng.choice(len(OTHERS), size=others, replace=False)
        ]
        sprites = [emoji.emoji_image(char, size) for char in chars]
        boxes, lines = _scene(rng, sprites)

        image = canvas.background(rng, SIZE, clutter=int(rng.integers(8, 18)))
        scenery.scatter(image, rng, count=(2, 6))
        light = strokes.luminance(image) > 128
        halo = (255, 255, 255) if light else (15, 15, 20)
        inks = [c for c in INKS if (c != (255, 255, 255) or not light) and (c != (40, 40, 40) or light)]
        order = rng.permutation(len(inks))
        draw = ImageDraw.Draw(image)
        dash, gap = float(rng.uniform(10, 15)), float(rng.uniform(6, 9))
        width = int(rng.integers(4, 6))
        # draw the car's path at a random depth among the others so overlaps tell nothing
        depth = rng.permutation(len(lines))
        for k in depth:
            strokes.draw_dashes(draw, lines[k], dash, gap, width, inks[order[k]], halo, 1)
        for sprite, box in zip(sprites, boxes):
            canvas.paste_rgba(image, sprite, box[:2])

        end = [round(float(v), 1) for v in lines[0][-1]]
        start = [round(float(v), 1) for v in lines[0][0]]
        return Generated(
            public={"instruction": self.instruction, "image": "image", "image_size": list(SIZE)},
            truth={
                "target_position": end,
                "tolerance": TOLERANCE,
                "image_size": list(SIZE),
                "start_position": start,
                "path_count": len(lines),
            },
            images={"image": image},
        )
