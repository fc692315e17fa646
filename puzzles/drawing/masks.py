"""Pixel masks: boolean arrays of the image's natural size, True = target."""

import io

import numpy as np
from PIL import Image, ImageFilter


def to_mask(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("L")) > 127


def from_alpha(sprite: Image.Image, size: tuple[int, int], xy: tuple[int, int], threshold: int = 40) -> np.ndarray:
    """The mask of an RGBA sprite's opaque pixels, placed at xy on an image of `size`."""
    layer = Image.new("L", size, 0)
    alpha = sprite.getchannel("A").point(lambda a: 255 if a > threshold else 0)
    layer.paste(alpha, (int(xy[0]), int(xy[1])))
    return to_mask(layer)


def interior_point(mask: np.ndarray) -> list[int]:
    """A pixel deep inside the mask: erode until little is left, then take the pixel nearest the rest's centre."""
    x1, y1, x2, y2 = bbox(mask)
    # Work on the target's box (plus a margin so erosion starts from the outside edge): far cheaper.
    x1, y1 = max(0, x1 - 1), max(0, y1 - 1)
    crop = mask[y1 : y2 + 2, x1 : x2 + 2]
    core = crop
    image = Image.fromarray(crop.astype(np.uint8) * 255, "L")
    while True:
        image = image.filter(ImageFilter.MinFilter(3))
        eroded = to_mask(image)
        if eroded.sum() < 4:
            break
        core = eroded
    ys, xs = np.nonzero(core)
    cy, cx = ys.mean(), xs.mean()
    nearest = int(np.argmin((ys - cy) ** 2 + (xs - cx) ** 2))
    return [int(xs[nearest]) + x1, int(ys[nearest]) + y1]


def centroid(mask: np.ndarray) -> list[float]:
    """[x, y] centroid, from row and column sums (much cheaper than np.nonzero on big masks)."""
    total = float(mask.sum())
    cols, rows = mask.sum(axis=0), mask.sum(axis=1)
    return [float(np.dot(cols, np.arange(len(cols))) / total), float(np.dot(rows, np.arange(len(rows))) / total)]


def bbox(mask: np.ndarray) -> list[int]:
    """[x1, y1, x2, y2] inclusive, without np.nonzero."""
    cols, rows = np.flatnonzero(mask.any(axis=0)), np.flatnonzero(mask.any(axis=1))
    return [int(cols[0]), int(rows[0]), int(cols[-1]), int(rows[-1])]


def dilate(mask: np.ndarray, pixels: int) -> np.ndarray:
    """Grow the mask by `pixels` in every direction (a (2p+1)-square max filter; published masks
    are pre-dilated). Separable in numpy over the target's box: far faster than PIL's rank filter."""
    if pixels <= 0 or not mask.any():
        return mask
    h, w = mask.shape
    x1, y1, x2, y2 = bbox(mask)
    x1, y1 = max(0, x1 - pixels), max(0, y1 - pixels)
    x2, y2 = min(w, x2 + pixels + 1), min(h, y2 + pixels + 1)
    cw, ch = x2 - x1, y2 - y1
    padded = np.pad(mask[y1:y2, x1:x2], pixels)
    rows = padded[:, :cw].copy()
    for b in range(1, 2 * pixels + 1):
        rows |= padded[:, b : b + cw]
    out = rows[:ch].copy()
    for a in range(1, 2 * pixels + 1):
        out |= rows[a : a + ch]
    grown = mask.copy()
    grown[y1:y2, x1:x2] = out
    return grown


def to_png(mask: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask.astype(np.uint8) * 255, "L").save(buffer, "PNG", optimize=False, compress_level=6)
    return buffer.getvalue()
