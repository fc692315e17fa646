"""Smooth curves drawn as dashed or dotted lines, and deep points of large masks.

Helpers for Pick_Area, Place_Dot, Misleading_Click and Click_Order (numpy + PIL only).
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from puzzles.drawing import masks


def catmull_rom(points, samples: int = 24) -> np.ndarray:
    """A smooth curve through `points` (N x 2), sampled `samples` times per segment; ends kept."""
    p = np.asarray(points, dtype=np.float64)
    padded = np.vstack([2 * p[0] - p[1], p, 2 * p[-1] - p[-2]])
    t = np.linspace(0.0, 1.0, samples, endpoint=False)[:, None]
    t2, t3 = t * t, t * t * t
    pieces = []
    for i in range(1, len(padded) - 2):
        p0, p1, p2, p3 = padded[i - 1], padded[i], padded[i + 1], padded[i + 2]
        pieces.append(
            0.5 * ((2 * p1) + (-p0 + p2) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t2 + (-p0 + 3 * p1 - 3 * p2 + p3) * t3)
        )
    pieces.append(p[-1:])
    return np.vstack(pieces)


def arc_lengths(line: np.ndarray) -> np.ndarray:
    """Cumulative length along a polyline, starting at 0."""
    steps = np.hypot(*np.diff(line, axis=0).T)
    return np.concatenate([[0.0], np.cumsum(steps)])


def point_at(line: np.ndarray, lengths: np.ndarray, s) -> np.ndarray:
    """Points at arc lengths `s` along the polyline."""
    s = np.clip(np.asarray(s, dtype=np.float64), 0, lengths[-1])
    return np.stack([np.interp(s, lengths, line[:, 0]), np.interp(s, lengths, line[:, 1])], axis=-1)


def resample(line: np.ndarray, spacing: float) -> np.ndarray:
    """Points evenly spaced along the polyline (both ends included)."""
    lengths = arc_lengths(line)
    count = max(2, int(round(lengths[-1] / spacing)) + 1)
    return point_at(line, lengths, np.linspace(0.0, lengths[-1], count))


def draw_dots(
    draw: ImageDraw.ImageDraw,
    line: np.ndarray,
    spacing: float,
    radius: float,
    fill,
    halo=None,
    halo_width: float = 1.5,
    closed: bool = False,
) -> None:
    """A dotted line: round dots every `spacing` px, optionally ringed by a contrasting halo."""
    if closed:
        line = np.vstack([line, line[:1]])
    dots = resample(line, spacing)
    if closed:
        dots = dots[:-1]
    if halo is not None:
        r = radius + halo_width
        for x, y in dots:
            draw.ellipse((x - r, y - r, x + r, y + r), fill=halo)
    for x, y in dots:
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=fill)


def draw_dashes(
    draw: ImageDraw.ImageDraw,
    line: np.ndarray,
    dash: float,
    gap: float,
    width: int,
    fill,
    halo=None,
    halo_width: int = 2,
) -> None:
    """A dashed line laid from the END backwards, so the last dash ends exactly at the line's end."""
    lengths = arc_lengths(line)
    ends = lengths[-1] - np.arange(0.0, lengths[-1], dash + gap)
    starts = np.maximum(0.0, ends - dash)
    keep = ends - starts > 1.5
    ends, starts = ends[keep], starts[keep]
    first, last = point_at(line, lengths, starts), point_at(line, lengths, ends)
    lo = np.searchsorted(lengths, starts, side="right")
    hi = np.searchsorted(lengths, ends, side="left")
    segments = []
    for k in range(len(ends)):
        piece = np.vstack([first[k : k + 1], line[lo[k] : hi[k]], last[k : k + 1]])
        segments.append(list(map(tuple, piece.tolist())))
    for layer, extra in ((halo, halo_width), (fill, 0)):
        if layer is None:
            continue
        w = width + 2 * extra
        r = w / 2 - 0.5
        for segment in segments:
            draw.line(segment, fill=layer, width=w, joint="curve")
            for x, y in (segment[0], segment[-1]):  # round caps
                draw.ellipse((x - r, y - r, x + r, y + r), fill=layer)


def deep_point(mask: np.ndarray, scale: int = 8, depth_share: float = 0.6) -> list[int]:
    """A pixel well inside a (large) mask and near its middle, cheap for masks of any size.

    On a grid of `scale`-px blocks, each fully covered block gets its distance to the nearest
    block that is not; among blocks at least `depth_share` of the deepest depth, the one
    nearest the mask's centroid wins (so the point is both deep and central)."""
    h, w = mask.shape
    small = Image.fromarray(mask.astype(np.uint8) * 255, "L").resize((w // scale, h // scale), Image.Resampling.BOX)
    inside = np.pad(np.asarray(small) > 250, 1)
    cx, cy = masks.centroid(mask)
    if not inside.any():
        ys, xs = np.nonzero(mask)
        i = int(np.argmin((ys - cy) ** 2 + (xs - cx) ** 2))
        return [int(xs[i]), int(ys[i])]
    iy, ix = np.nonzero(inside)
    # outside blocks that touch an inside block are enough to measure depth
    grown = inside.copy()
    grown[1:] |= inside[:-1]
    grown[:-1] |= inside[1:]
    grown[:, 1:] |= inside[:, :-1]
    grown[:, :-1] |= inside[:, 1:]
    oy, ox = np.nonzero(grown & ~inside)
    depth = np.sqrt(((iy[:, None] - oy[None, :]) ** 2 + (ix[:, None] - ox[None, :]) ** 2).min(axis=1))
    keep = depth >= depth_share * depth.max()
    px, py = (ix[keep] - 1) * scale + scale / 2, (iy[keep] - 1) * scale + scale / 2
    i = int(np.argmin((px - cx) ** 2 + (py - cy) ** 2))
    x, y = int(px[i]), int(py[i])
    if not mask[y, x]:  # cannot happen for a fully covered block, but stay safe
        ys, xs = np.nonzero(mask)
        i = int(np.argmin((ys - y) ** 2 + (xs - x) ** 2))
        x, y = int(xs[i]), int(ys[i])
    return [x, y]


def luminance(image: Image.Image, box=None) -> float:
    """Mean luminance (0..255) of an image or a region of it."""
    region = image.crop(box) if box else image
    return float(np.asarray(region.convert("L").resize((32, 32), Image.Resampling.BOX)).mean())
