"""Pick_Area: the picture is cut into irregular regions by dotted lines; click the centre of the largest.

The regions are the Voronoi cells of a few random seeds inside a dotted frame, with every shared
edge bent into a gentle wave (the same wave for both neighbours, so the cells still tile the
frame). Layouts are redrawn until the largest region is clearly (>= 50 %) bigger than the next.
"""

import math

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import canvas, masks, scenery, strokes
from puzzles.types.base import Generated
from puzzles.types.contract import MaskTruth
from puzzles.types.kinds import MaskPointType

SIZE = (640, 480)
FRAME = 12  # inset of the dotted frame from the image border
MIN_RATIO = 1.5  # largest area / second largest area
DOT_SPACING = 11.0
MAX_FILL = 0.72  # largest region's area / its bounding box's area


def _clip(poly, a, b, c):
    """Sutherland-Hodgman: keep the part of `poly` where a*x + b*y <= c."""
    out = []
    n = len(poly)
    for k in range(n):
        p, q = poly[k], poly[(k + 1) % n]
        fp, fq = a * p[0] + b * p[1] - c, a * q[0] + b * q[1] - c
        if fp <= 0:
            out.append(p)
        if (fp < 0 < fq) or (fq < 0 < fp):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _voronoi(seeds, box):
    x1, y1, x2, y2 = box
    cells = []
    for i, (sx, sy) in enumerate(seeds):
        poly = [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
        for j, (tx, ty) in enumerate(seeds):
            if i != j:
                # |p - s|^2 <= |p - t|^2  <=>  2 (t - s) . p <= |t|^2 - |s|^2
                poly = _clip(poly, 2 * (tx - sx), 2 * (ty - sy), tx * tx + ty * ty - sx * sx - sy * sy)
        cells.append(poly)
    return cells


def _neighbour(i, mid, seeds):
    d = [math.hypot(mid[0] - sx, mid[1] - sy) for sx, sy in seeds]
    best = min((j for j in range(len(seeds)) if j != i), key=lambda j: abs(d[j] - d[i]))
    return best


def _wave(a, b, coeffs):
    """Points from a to b, displaced sideways by a smooth wave that vanishes (flat) at both ends."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    length = float(np.hypot(*(b - a)))
    steps = max(2, int(length / 4))
    t = np.linspace(0.0, 1.0, steps)[:, None]
    if length < 8:
        return a + t * (b - a)
    normal = np.array([-(b - a)[1], (b - a)[0]]) / length
    amplitude = min(0.16 * length, 38.0)
    shape = sum(c * np.sin((k + 1) * math.pi * t) for k, c in enumerate(coeffs)) * np.sin(math.pi * t)
    return a + t * (b - a) + normal * amplitude * shape


def _shoelace(points) -> float:
    x, y = points[:, 0], points[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _layout(rng, box):
    """Cell outlines, the regions (lists of cells), the edges to draw and the target region.

    Voronoi cells are merged in a pair or two across a shared edge (that edge is then not drawn),
    which gives the non-convex, irregular regions of the published puzzles. None if unsuitable.
    """
    x1, y1, x2, y2 = box
    count = int(rng.integers(5, 9))
    seeds: list[tuple[float, float]] = []
    for _ in range(200):
        p = (float(rng.uniform(x1 + 30, x2 - 30)), float(rng.uniform(y1 + 30, y2 - 30)))
        if all(math.hypot(p[0] - q[0], p[1] - q[1]) > 95 for q in seeds):
            seeds.append(p)
            if len(seeds) == count:
                break
    if len(seeds) < 5:
        return None
    cells = _voronoi(seeds, box)
    waves = {}
    outlines = []
    eps = 0.5
    for i, cell in enumerate(cells):
        parts = []
        for k in range(len(cell)):
            a, b = cell[k], cell[(k + 1) % len(cell)]
            if math.hypot(b[0] - a[0], b[1] - a[1]) < 0.5:
                continue
            mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
            on_frame = (abs(a[0] - b[0]) < eps and (abs(mid[0] - x1) < eps or abs(mid[0] - x2) < eps)) or (
                abs(a[1] - b[1]) < eps and (abs(mid[1] - y1) < eps or abs(mid[1] - y2) < eps)
            )
            if on_frame:
                parts.append(np.array([a, b], float))
                continue
            j = _neighbour(i, mid, seeds)
            key = (min(i, j), max(i, j))
            if key not in waves:
                coeffs = rng.uniform(-1, 1, size=3) * np.array([1.0, 0.55, 0.35])
                first, second = sorted([a, b])
                waves[key] = _wave(first, second, coeffs)
            line = waves[key]
            forward = math.hypot(line[0][0] - a[0], line[0][1] - a[1]) < 1.0
            parts.append(line if forward else line[::-1])
        outlines.append(np.vstack(parts))

    # merge a pair or two of neighbouring cells into one region
    region_of = list(range(len(cells)))
    keys = sorted(waves)
    merges = int(rng.integers(1, 3)) if len(cells) >= 6 else 1
    for index in rng.permutation(len(keys))[:merges]:
        i, j = keys[index]
        old, new = region_of[j], region_of[i]
        region_of = [new if r == old else r for r in region_of]
    labels = sorted(set(region_of))
    regions = [[c for c in range(len(cells)) if region_of[c] == label] for label in labels]
    if not 4 <= len(regions) <= 6:
        return None

    cell_areas = [_shoelace(o) for o in outlines]
    areas = np.array([sum(cell_areas[c] for c in region) for region in regions])
    order = np.argsort(areas)[::-1]
    frame_area = (x2 - x1) * (y2 - y1)
    largest, second = areas[order[0]], areas[order[1]]
    if largest < MIN_RATIO * second or not 0.25 <= largest / frame_area <= 0.55:
        return None
    if areas.min() < 0.05 * frame_area:
        return None
    target = regions[int(order[0])]
    points = np.vstack([outlines[c] for c in target])
    bbox_area = np.ptp(points[:, 0]) * np.ptp(points[:, 1])
    if largest / bbox_area > MAX_FILL:
        return None  # too box-like: the published regions fill about 60 % of their bounding box
    edges = [line for (i, j), line in waves.items() if region_of[i] != region_of[j]]
    return outlines, edges, target, len(regions)


class PickArea(MaskPointType[MaskTruth]):
    name = "Pick_Area"
    steps = 1  # the published page's "Action Steps" stars
    instruction = "Click on the center of the largest area outlined by the dotted line"

    def generate(self, rng: np.random.Generator) -> Generated:
        w, h = SIZE
        box = (FRAME, FRAME, w - 1 - FRAME, h - 1 - FRAME)
        found = None
        while found is None:
            found = _layout(rng, box)
        outlines, edges, target, region_count = found

        image = canvas.background(rng, SIZE, clutter=int(rng.integers(10, 22)))
        scenery.scatter(image, rng)
        light = strokes.luminance(image) > 128
        ink, halo = ((25, 25, 30), (250, 250, 250)) if light else ((250, 250, 250), (20, 20, 25))
        if rng.random() < 0.35:  # a coloured ink now and then
            ink = canvas.random_color(rng, 0, 90) if light else canvas.random_color(rng, 190, 256)
        draw = ImageDraw.Draw(image)
        frame = np.array([(box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])], float)
        radius = float(rng.uniform(2.4, 3.2))
        strokes.draw_dots(draw, frame, DOT_SPACING, radius, ink, halo, 1.0, closed=True)
        for edge in edges:
            strokes.draw_dots(draw, edge, DOT_SPACING, radius, ink, halo, 1.0)

        layer = Image.new("L", SIZE, 0)
        pen = ImageDraw.Draw(layer)
        for cell in target:  # a merged region is the union of its cells, which share an edge exactly
            pen.polygon([tuple(p) for p in outlines[cell]], fill=255, outline=255)
        mask = masks.to_mask(layer)
        return Generated(
            public={"instruction": self.instruction, "image": "image", "image_size": list(SIZE)},
            truth={
                "mask": "area",
                "image_size": list(SIZE),
                "point": strokes.deep_point(mask),
                "center": masks.centroid(mask),
                "bbox": masks.bbox(mask),
                "area": int(mask.sum()),
                "region_count": region_count,
            },
            images={"image": image},
            masks={"area": mask},
        )
