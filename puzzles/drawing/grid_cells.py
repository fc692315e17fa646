"""Helpers for grid puzzles: emoji sprites at any size, small photo-like scenes, grid composites.

Sprites are scaled from one cached base glyph per emoji and are NOT cached per size: emoji_image
caches every (char, size) pair it sees, which over a bank of varied sizes would grow without bound.
"""

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageOps

from . import canvas
from .emoji import emoji_image

_BASE = 136  # the Noto bitmap's own size: scaling from it loses nothing


def sprite(char: str, size: int, *, angle: float = 0.0, mirror: bool = False, upside_down: bool = False) -> Image.Image:
    """A fresh RGBA copy of an emoji whose longer side is `size` px, optionally turned."""
    base = emoji_image(char, _BASE)
    scale = size / max(base.size)
    target = (max(1, round(base.width * scale)), max(1, round(base.height * scale)))
    image = base.resize(target, Image.Resampling.BILINEAR if scale <= 1 else Image.Resampling.BICUBIC)
    if mirror:
        image = ImageOps.mirror(image)
    if upside_down:
        image = image.transpose(Image.Transpose.ROTATE_180)
    if angle:
        image = image.rotate(angle, resample=Image.Resampling.BILINEAR, expand=True)
        box = image.getbbox()
        if box:
            image = image.crop(box)
    return image


def shadow(draw: ImageDraw.ImageDraw, cx: float, y: float, width: float, alpha: int = 70) -> None:
    """A soft ground shadow under a standing sprite (draw must be an RGBA-mode Draw)."""
    h = max(3, width * 0.12)
    draw.ellipse((cx - width / 2, y - h / 2, cx + width / 2, y + h / 2), fill=(0, 0, 0, alpha))


def _rgb(rng, low, high):
    return np.array(canvas.random_color(rng, low, high), np.float32)


def _gradient(size, top, bottom) -> Image.Image:
    """A top-to-bottom colour gradient, built as one column and stretched (cheap at any width)."""
    w, h = size
    t = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None]
    column = (1 - t) * np.asarray(top, np.float32) + t * np.asarray(bottom, np.float32)
    return Image.fromarray(np.clip(column, 0, 255).astype(np.uint8)[:, None, :], "RGB").resize(
        (w, h), Image.Resampling.NEAREST
    )


def _finish(image, rng, grain: int = 7) -> Image.Image:
    """Grain over an image (or a float/uint8 array), one pass in int16."""
    pixels = np.asarray(image).astype(np.int16)
    pixels += rng.integers(-grain, grain + 1, size=pixels.shape[:2] + (1,), dtype=np.int16)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB")


SKY_TOPS = [(92, 150, 222), (120, 175, 235), (70, 120, 200), (150, 190, 230), (240, 170, 120), (170, 180, 200)]
GROUNDS = {
    "grass": ((96, 160, 70), (60, 118, 45)),
    "meadow": ((140, 180, 80), (95, 140, 55)),
    "sand": ((222, 196, 140), (196, 166, 110)),
    "dirt": ((160, 122, 84), (120, 88, 60)),
    "snow": ((236, 240, 246), (206, 214, 226)),
    "road": ((130, 130, 134), (100, 100, 106)),
}


def _sky_image(rng, size) -> Image.Image:
    top = np.array(SKY_TOPS[int(rng.integers(len(SKY_TOPS)))], np.float32) + rng.integers(-15, 16, 3)
    return _gradient(size, top, np.minimum(255, top * 0.45 + 150))


def _clouds(draw, rng, w, h, count, y_max):
    for _ in range(count):
        cx, cy = rng.uniform(0, w), rng.uniform(h * 0.05, y_max)
        r = rng.uniform(w * 0.05, w * 0.11)
        for dx in (-1.2, -0.4, 0.4, 1.2):
            rr = r * rng.uniform(0.7, 1.1)
            x = cx + dx * r
            draw.ellipse((x - rr, cy - rr * 0.7, x + rr, cy + rr * 0.7), fill=(255, 255, 255, 170))


def sky(rng, size, *, clouds: bool = True, sun: bool | None = None) -> Image.Image:
    """Open sky, no ground: for things in the air."""
    w, h = size
    image = _sky_image(rng, size)
    draw = ImageDraw.Draw(image, "RGBA")
    if sun if sun is not None else rng.random() < 0.4:
        x, y, r = rng.uniform(0.1, 0.9) * w, rng.uniform(0.08, 0.3) * h, w * 0.07
        draw.ellipse((x - r * 1.8, y - r * 1.8, x + r * 1.8, y + r * 1.8), fill=(255, 240, 180, 60))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=(255, 236, 150, 255))
    if clouds:
        _clouds(draw, rng, w, h, int(rng.integers(2, 5)), h * 0.95)
    return _finish(image, rng, 5)


def land(
    rng, size, *, horizon: float | None = None, ground: str | None = None, hills: bool = True
) -> tuple[Image.Image, int]:
    """Sky over ground (grass, sand, road...). Returns the image and the horizon's y."""
    w, h = size
    horizon_y = int(h * (horizon if horizon is not None else rng.uniform(0.45, 0.62)))
    kind = ground or list(GROUNDS)[int(rng.integers(len(GROUNDS)))]
    near, far = GROUNDS[kind]
    image = _sky_image(rng, size)
    shift = int(rng.integers(-18, 19)) + rng.integers(-5, 6, 3)
    gh = h - horizon_y
    ground_img = _gradient((w, gh), np.add(far, shift) * 1.06, np.add(near, shift) * 1.06)
    # Grass-like texture: 1 px wide, 5 px tall darker streaks.
    streaks = rng.integers(222, 256, ((gh + 4) // 5, w), dtype=np.uint8)
    streak_img = Image.fromarray(np.repeat(streaks, 5, axis=0)[:gh], "L")
    image.paste(ImageChops.multiply(ground_img, Image.merge("RGB", [streak_img] * 3)), (0, horizon_y))
    draw = ImageDraw.Draw(image, "RGBA")
    if hills and rng.random() < 0.5:  # distant hills
        for _ in range(int(rng.integers(1, 3))):
            cx, r = rng.uniform(0, w), rng.uniform(0.25, 0.5) * w
            color = tuple(int(c) for c in np.add(far, (-20, -10, -20))) + (200,)
            draw.ellipse((cx - r, horizon_y - r * 0.3, cx + r, horizon_y + r * 0.3), fill=color)
    _clouds(draw, rng, w, h, int(rng.integers(0, 3)), horizon_y * 0.6)
    return _finish(image, rng, 6), horizon_y


def underwater(rng, size) -> Image.Image:
    """Below the sea surface: blue-green depth gradient, light rays, bubbles, sand and weed."""
    w, h = size
    top = np.array((60, 170, 210), np.float32) + rng.integers(-25, 26, 3)
    bottom = top * rng.uniform(0.35, 0.55)
    image = _gradient(size, top, bottom)
    draw = ImageDraw.Draw(image, "RGBA")
    for _ in range(int(rng.integers(2, 5))):  # light rays
        x = rng.uniform(0, w)
        spread = rng.uniform(0.05, 0.15) * w
        draw.polygon([(x, 0), (x + spread * 0.5, 0), (x + spread * 2, h), (x + spread, h)], fill=(255, 255, 255, 22))
    floor = h - int(h * rng.uniform(0.08, 0.16))
    draw.ellipse((-w * 0.2, floor, w * 1.2, floor + h * 0.4), fill=(196, 178, 120, 255))
    for _ in range(int(rng.integers(2, 5))):  # weed
        x = rng.uniform(0, w)
        points = [(x + 5 * np.sin(k * 0.9 + x), floor + 6 - k * h * 0.05) for k in range(int(rng.integers(4, 9)))]
        draw.line(points, fill=(40, 130, 70, 230), width=max(3, w // 50))
    for _ in range(int(rng.integers(6, 14))):  # bubbles
        x, y, r = rng.uniform(0, w), rng.uniform(0, floor), rng.uniform(2, 5) * w / 200
        draw.ellipse((x - r, y - r, x + r, y + r), outline=(235, 250, 255, 190), width=1)
    return _finish(image, rng, 5)


def indoor(rng, size) -> tuple[Image.Image, int]:
    """A wall over a floor. Returns the image and the floor line's y."""
    w, h = size
    floor_y = int(h * rng.uniform(0.6, 0.75))
    wall = _rgb(rng, 150, 240)
    image = _gradient(size, wall, wall * 0.85)
    wood = np.array((150, 105, 65), np.float32) + rng.integers(-30, 31, 3)
    image.paste(_gradient((w, h - floor_y), wood * 0.8, wood), (0, floor_y))
    draw = ImageDraw.Draw(image, "RGBA")
    if rng.random() < 0.5:  # wallpaper stripes
        step = int(rng.integers(10, 24)) * w // 200 + 4
        for x in range(0, w, step * 2):
            draw.rectangle((x, 0, x + step - 1, floor_y), fill=(255, 255, 255, 30))
    for x in range(-int(rng.integers(0, 40)), w, int(w / rng.uniform(3, 6))):  # floor boards
        draw.line((x, floor_y, x - (w / 2 - x) * 0.3, h), fill=(0, 0, 0, 40), width=1)
    draw.line((0, floor_y, w, floor_y), fill=(255, 255, 255, 80), width=2)
    return _finish(image, rng, 6), floor_y


def tabletop(rng, size) -> Image.Image:
    """Seen from above: wooden planks or a cloth."""
    w, h = size
    base = np.array((170, 120, 75), np.float32) + rng.integers(-40, 41, 3)
    if rng.random() < 0.35:
        base = _rgb(rng, 120, 235)
    pixels = np.broadcast_to(base, (h, w, 3)).copy()
    plank = int(rng.integers(h // 5, h // 3))
    for y in range(0, h, plank):
        pixels[y : y + plank] *= rng.uniform(0.88, 1.08)
        pixels[y : y + 2] *= 0.7
    grain = np.sin(np.linspace(0, rng.uniform(20, 60), w, dtype=np.float32))[None, :, None] * 6
    pixels += grain
    return _finish(pixels, rng, 7)


def photo_background(rng, size) -> tuple[Image.Image, int | None, str]:
    """One of several photo-like backdrops, the y of a ground line where things stand (or None), and its kind."""
    pick = rng.random()
    if pick < 0.4:
        return (*land(rng, size), "land")
    if pick < 0.6:
        return (*indoor(rng, size), "indoor")
    if pick < 0.75:
        return tabletop(rng, size), None, "table"
    if pick < 0.85:
        return sky(rng, size), None, "sky"
    return canvas.background(rng, size, clutter=8), None, "plain"


def compose(
    cells: list[Image.Image],
    rows: int,
    cols: int,
    cell: int,
    gap: int = 3,
    color: tuple[int, int, int] = (255, 255, 255),
) -> Image.Image:
    """Cells of (cell - 2*gap) px pasted row-major into a (cols*cell) x (rows*cell) image, with borders."""
    out = Image.new("RGB", (cols * cell, rows * cell), color)
    for index, image in enumerate(cells):
        r, c = divmod(index, cols)
        out.paste(image.convert("RGB"), (c * cell + gap, r * cell + gap))
    return out


def grid_lines(image: Image.Image, rows: int, cols: int, width: int = 3, color=(255, 255, 255)) -> None:
    """Visible patch borders drawn over one scene image (in place)."""
    draw = ImageDraw.Draw(image)
    w, h = image.size
    for c in range(cols + 1):
        x = round(c * w / cols) - width // 2
        draw.rectangle((x, 0, x + width - 1, h), fill=color)
    for r in range(rows + 1):
        y = round(r * h / rows) - width // 2
        draw.rectangle((0, y, w, y + width - 1), fill=color)


def article(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun
