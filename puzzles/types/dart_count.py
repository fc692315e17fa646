"""Dart_Count: the left image shows a number; each option shows a target board with numbered
rings and 2-4 darts stuck in it; pick the board whose darts add up to the number."""

import math
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas
from puzzles.drawing.arrow_options import background_variants, option_puzzle
from puzzles.drawing.text import centered_text
from puzzles.types.base import Generated
from puzzles.types.kinds import OptionType

SIZE = (480, 480)
CENTER = (240.0, 240.0)
RADIUS = 214  # outer edge of the scoring rings
DART = 74  # dart length, tip to the end of the flights
RING_COLORS = [
    ((200, 40, 45), (245, 240, 225)),
    ((25, 120, 70), (240, 230, 200)),
    ((30, 30, 35), (235, 230, 215)),
    ((30, 80, 170), (250, 215, 70)),
    ((120, 50, 140), (235, 235, 240)),
    ((210, 110, 30), (40, 60, 90)),
]
DART_COLORS = [(230, 40, 40), (30, 110, 230), (40, 170, 70), (250, 190, 20), (200, 60, 200), (20, 190, 200)]
TARGET_RANGE = (20, 60)


@lru_cache(maxsize=8)
def _dart_base(color_index: int) -> Image.Image:
    """A dart pointing right with its tip at the centre of a (2*DART)^2 canvas, drawn at 2x."""
    s = 2
    side = 2 * DART * s
    image = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    d = ImageDraw.Draw(image)
    cx = cy = DART * s
    color = DART_COLORS[color_index]
    dark = tuple(int(c * 0.55) for c in color)

    def x(v):
        return cx + v * s

    d.line((x(0), cy, x(17), cy), fill=(70, 70, 75), width=3 * s)  # needle
    d.rounded_rectangle(
        (x(15), cy - 4.5 * s, x(42), cy + 4.5 * s), 3 * s, fill=(175, 178, 188), outline=(70, 70, 80), width=s
    )
    for band in (22, 28, 34):  # grip rings on the barrel
        d.line((x(band), cy - 4 * s, x(band), cy + 4 * s), fill=(95, 95, 105), width=s)
    d.line((x(42), cy, x(60), cy), fill=dark, width=4 * s)  # shaft
    for sign in (-1, 1):  # flights, seen from the side
        d.polygon(
            [
                (x(52), cy + sign * 2 * s),
                (x(64), cy + sign * 13 * s),
                (x(DART), cy + sign * 13 * s),
                (x(DART - 2), cy + sign * 2 * s),
            ],
            fill=color,
            outline=dark,
        )
    d.ellipse((cx - 3.5 * s, cy - 3.5 * s, cx + 3.5 * s, cy + 3.5 * s), fill=(25, 25, 25))  # the hole
    return image.resize((2 * DART, 2 * DART), Image.Resampling.LANCZOS)


@lru_cache(maxsize=256)
def _dart(color_index: int, angle: int) -> Image.Image:
    """The dart with its body pointing at screen angle `angle` (degrees, y down) from its tip."""
    return _dart_base(color_index).rotate(-angle, resample=Image.Resampling.BICUBIC)


def _ring_edges(rings):
    bull = RADIUS * (1.35 / (rings + 0.35))
    band = (RADIUS - bull) / (rings - 1)
    return [bull + i * band for i in range(rings)], band  # outer edge of ring i (0 = bullseye)


def _ring_mid(i, edges):
    return edges[0] * 0.55 if i == 0 else (edges[i - 1] + edges[i]) / 2


@lru_cache(maxsize=16)
def _rings_layer(rings: int, colors: int) -> Image.Image:
    """The target's rings, drawn at 2x for smooth edges and scaled down; cached (few variants)."""
    edges, _ = _ring_edges(rings)
    s = 2
    size = int(2 * (RADIUS + 18)) * s
    layer = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(layer)
    c = size / 2
    first, second = RING_COLORS[colors]
    d.ellipse(
        (c - (RADIUS + 16) * s, c - (RADIUS + 16) * s, c + (RADIUS + 16) * s, c + (RADIUS + 16) * s),
        fill=(35, 30, 30),
        outline=(15, 15, 15),
        width=2 * s,
    )
    for i in range(rings - 1, -1, -1):
        r = edges[i] * s
        d.ellipse((c - r, c - r, c + r, c + r), fill=first if i % 2 == 0 else second, outline=(60, 60, 60), width=s)
    return layer.resize((size // s, size // s), Image.Resampling.LANCZOS)


def _board(base, rng, values, label_angle):
    """The target pasted on `base`, with a value label in every ring along one radius. Returns
    the board and the label centres (darts keep clear of them)."""
    edges, _ = _ring_edges(len(values))
    layer = _rings_layer(len(values), int(rng.integers(len(RING_COLORS))))
    board = base.copy()
    canvas.paste_rgba(board, layer, (int(CENTER[0] - layer.width / 2), int(CENTER[1] - layer.height / 2)))
    draw = ImageDraw.Draw(board)
    labels = []
    ux, uy = np.cos(np.radians(label_angle)), np.sin(np.radians(label_angle))
    for i, value in enumerate(values):
        r = 0 if i == 0 else _ring_mid(i, edges)
        lx, ly = CENTER[0] + r * ux, CENTER[1] + r * uy
        half_w = 16 if value >= 10 else 12
        draw.rounded_rectangle(
            (lx - half_w, ly - 13, lx + half_w, ly + 13), 6, fill=(255, 255, 255), outline=(20, 20, 20), width=2
        )
        centered_text(draw, (lx, ly + 1), str(value), 20, fill=(10, 10, 10))
        labels.append((lx, ly))
    return board, labels


def _segment_distance(p, a, b):
    """Distance from point p to segment ab (plain floats: far cheaper than numpy for 2-vectors)."""
    abx, aby = b[0] - a[0], b[1] - a[1]
    t = ((p[0] - a[0]) * abx + (p[1] - a[1]) * aby) / (abx * abx + aby * aby)
    t = min(1.0, max(0.0, t))
    return math.hypot(p[0] - a[0] - t * abx, p[1] - a[1] - t * aby)


def _body(tip, angle):
    ux, uy = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return (tip[0] + 6 * ux, tip[1] + 6 * uy), (tip[0] + DART * ux, tip[1] + DART * uy)


def _place_darts(rng, rings_hit, edges, band, labels, throw):
    """Tip positions and body angles so every tip is plainly inside its ring, clear of the labels
    and of the other darts' bodies, and every dart fits in the image."""
    w, h = SIZE
    for attempt in range(400):
        # Bodies lean within 25 degrees of the throw; when 200 tries at that fail (four darts in the
        # bullseye of a 5-ring board, about one such board in 2,500), they may lean any way.
        lean = 25 if attempt < 200 else 180
        # (tip, body start, body end, angle)
        placed: list[tuple[tuple[float, float], tuple[float, float], tuple[float, float], int]] = []
        for ring in rings_hit:
            for _ in range(60):
                if ring == 0:
                    r = edges[0] * rng.uniform(0.5, 0.68)
                else:
                    r = _ring_mid(ring, edges) + band * rng.uniform(-0.14, 0.14)
                theta = rng.uniform(0, 2 * math.pi)
                tip = (CENTER[0] + r * math.cos(theta), CENTER[1] + r * math.sin(theta))
                angle = int(round((throw + rng.uniform(-lean, lean)) / 10) * 10)
                start, end = _body(tip, angle)
                if not (6 <= end[0] <= w - 6 and 6 <= end[1] <= h - 6):
                    continue
                if any(math.dist(tip, p) < 28 or _segment_distance(p, start, end) < 24 for p in labels):
                    continue
                if any(
                    math.dist(tip, t) < 30 or _segment_distance(t, start, end) < 16 or _segment_distance(tip, a, b) < 16
                    for t, a, b, _ in placed
                ):
                    continue
                placed.append((tip, start, end, angle))
                break
            else:
                break
        if len(placed) == len(rings_hit):
            return [(t[0], t[1], angle) for t, _, _, angle in placed]
    raise AssertionError("could not place the darts")


class DartCount(OptionType):
    name = "Dart_Count"
    steps = 4  # the published page's "Action Steps" stars
    column_labels = ("Find sum of darts equal to this", "")
    instruction = "Use the arrows to pick the image where all the darts add up to the number in the left image."

    def generate(self, rng: np.random.Generator) -> Generated:
        option_count = int(rng.integers(4, 9))
        correct = int(rng.integers(option_count))
        rings = int(rng.integers(4, 6))
        # The target is uniform over TARGET_RANGE. Ring values (1..20, distinct) rise towards the
        # bullseye (index 0); throw all darts but the last at random and keep the throw when the
        # remainder is exactly some ring's value.
        target = int(rng.integers(TARGET_RANGE[0], TARGET_RANGE[1] + 1))
        while True:
            values = sorted((int(v) for v in rng.choice(np.arange(1, 21), size=rings, replace=False)), reverse=True)
            hits = [int(h) for h in rng.integers(0, rings, size=int(rng.integers(1, 4)))]
            remainder = target - sum(values[h] for h in hits)
            if remainder in values:
                hits.insert(int(rng.integers(len(hits) + 1)), values.index(remainder))
                break
        # Wrong boards: half are near misses (one dart moved to another ring), half random throws.
        option_hits = []
        for _ in range(option_count - 1):
            while True:
                if rng.random() < 0.5:
                    other = list(hits)
                    k = int(rng.integers(len(other)))
                    other[k] = int(rng.choice([r for r in range(rings) if r != other[k]]))
                else:
                    other = [int(h) for h in rng.integers(0, rings, size=int(rng.integers(2, 5)))]
                if sum(values[h] for h in other) != target:
                    break
            option_hits.append(other)
        option_hits.insert(correct, hits)

        reference_bg, option_bg = background_variants(rng, SIZE, 2)
        reference = self._reference(reference_bg, target)
        label_angle = float(rng.uniform(0, 360))
        board, labels = _board(option_bg, rng, values, label_angle)
        edges, band = _ring_edges(rings)
        throw = float(rng.uniform(220, 320))  # the darts' bodies lean upwards, as if thrown from below
        color = int(rng.integers(len(DART_COLORS)))
        options = []
        for hit_rings in option_hits:
            image = board.copy()
            order = [hit_rings[int(i)] for i in rng.permutation(len(hit_rings))]
            for x, y, angle in _place_darts(rng, order, edges, band, labels, throw):
                canvas.paste_rgba(image, _dart(color, angle), (round(x) - DART, round(y) - DART))
            options.append(image)
        return option_puzzle(
            self.instruction,
            reference,
            options,
            correct,
            extra_truth={
                "reference_number": target,
                "ring_values": values,
                "option_sums": [sum(values[h] for h in o) for o in option_hits],
            },
        )

    @staticmethod
    def _reference(base, number):
        image = base.copy()
        draw = ImageDraw.Draw(image)
        cx, cy = SIZE[0] / 2, SIZE[1] / 2
        draw.rounded_rectangle(
            (cx - 150, cy - 120, cx + 150, cy + 120), 28, fill=(255, 255, 255), outline=(30, 30, 30), width=4
        )
        centered_text(draw, (cx, cy + 6), str(number), 150, fill=(20, 20, 20))
        return image
