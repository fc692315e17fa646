"""Where the published CaptchaArena page puts its widgets, as measured at 1280x1080.

Source: the published page (its app.py, index.html, script.js and style.css) measured in
headless Chromium at a 1280x1080 viewport, device scale 1, page not scrolled
(/work/shared/reference/captchaarena-page/: README.md and boxes.json). Boxes are x, y, w, h in
CSS px from the viewport's top left.

Why it is needed: the published data records an answer given on a widget its replay client
cannot map from image pixels (grid cells, the placed dot, the slider's handle on its track) as
tool calls in these screen coordinates, Submit click included (answer_cu_kind "tool_calls").
Our exports write the same, so the published client's mock replay solves them. Our own page's
layout is puzzles/layout.py; nothing here moves it.
"""

from __future__ import annotations

from dataclasses import dataclass

VIEWPORT = (1280, 1080)
TOP = 285  # the puzzle area's top: the card at y 265 plus its 20 px padding
SUBMIT = (148, 50)  # the green "Submit" button
VERIFY = (135, 50)  # the same button reading "Verify" (Patch_Select)


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float

    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)


def _centred(y: float, size: tuple[int, int] = SUBMIT) -> Box:
    """A button of `size` centred on the page's column (x 160..1120), its top at y."""
    return Box(640 - size[0] / 2, y, *size)


@dataclass(frozen=True)
class CellPage:
    """One puzzle's grid cells (row-major) and its Submit button on the published page."""

    cells: tuple[Box, ...]
    submit: Box


def _cells(x: float, y: float, w: float, h: float, grid: tuple[int, int], gap: float = 0.0) -> tuple[Box, ...]:
    rows, cols = grid
    cw, ch = (w - gap * (cols - 1)) / cols, (h - gap * (rows - 1)) / rows
    return tuple(Box(x + c * (cw + gap), y + r * (ch + gap), cw, ch) for r in range(rows) for c in range(cols))


class CellWidget:
    """A grid the page draws for a cell-set puzzle."""

    def page(self, image_size: tuple[int, int], grid: tuple[int, int]) -> CellPage:
        raise NotImplementedError


class OverlayGrid(CellWidget):
    """Unusual_Detection, Select_Animal: the picture 480 px wide including a 2 px border, its height
    by aspect ratio, at (400, 285); a transparent grid of equal cells over the whole box; Submit
    88 px under it. Measured: 600x400 (and 1200x800) -> box 480x321, cells 160x161, Submit at 566,694."""

    def page(self, image_size: tuple[int, int], grid: tuple[int, int]) -> CellPage:
        w, h = image_size
        height = (480 - 4) * h / w + 4
        return CellPage(_cells(400, TOP, 480, height, grid), _centred(TOP + height + 88))


class TileGrid(CellWidget):
    """Image_Recognition: a fixed 450x450 grid of 3x3 tiles, whatever their size, 5 px apart
    (cells 147 px at x 415/567/718, y 285/437/589); Submit at 566,750 under it."""

    def page(self, image_size: tuple[int, int], grid: tuple[int, int]) -> CellPage:
        return CellPage(_cells(415, TOP, 450, 450, (3, 3), gap=5), _centred(750))


class PatchGrid(CellWidget):
    """Patch_Select: a box 500 px wide at (390, 285) with a 2 px border, 500 * rows / cols high; the
    cells share its inside with 3 px gaps (80 px for 6x6, 97 for 5x5); "Verify" 79 px under the
    box (572,864 under a 500 px box)."""

    def page(self, image_size: tuple[int, int], grid: tuple[int, int]) -> CellPage:
        rows, cols = grid
        height = 500 * rows / cols
        return CellPage(_cells(392, TOP + 2, 496, height - 4, grid, gap=3), _centred(TOP + height + 79, VERIFY))


@dataclass(frozen=True)
class DotPage:
    """The Place_Dot picture and its Submit button."""

    image: Box
    scale: float  # screen px per natural px
    submit: Box

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        return (self.image.x + x * self.scale, self.image.y + y * self.scale)


def dot_page(image_size: tuple[int, int]) -> DotPage:
    """Place_Dot: the picture always 480 px wide, no border, at (400, 285); Submit 79 px under it.
    Measured: 640x480 -> 480x360, Submit at 566,724; 500x400 -> 480x384, Submit at 566,748."""
    w, h = image_size
    scale = 480 / w
    return DotPage(Box(400, TOP, 480, h * scale), scale, _centred(TOP + h * scale + 79))


@dataclass(frozen=True)
class SliderPage:
    """The Slide_Puzzle background, the handle on the track under it, and Submit to its right.

    Moving the handle by d moves the piece by d * piece_range / handle_range (the page maps the
    handle's range onto the piece's, both kept inside the background)."""

    background: Box
    scale: float  # screen px per natural px of the background
    handle: Box
    handle_range: float
    piece_range: float
    submit: Box

    def handle_shift(self, piece_left: float) -> float:
        """How far to drag the handle (screen px) to bring the piece's left edge to piece_left (screen px)."""
        return piece_left * self.handle_range / self.piece_range


def slider_page(image_size: tuple[int, int], piece_size: tuple[int, int]) -> SliderPage:
    """Slide_Puzzle: the background min(width, 500) px wide at y 285, x 292 for 500 px (302 for 480:
    the row is centred); the piece at the same scale (its width rounded); the track as wide as the
    background, 14 px under it, with a 52x50 handle 1 px inside its border; Submit fixed at x 942,
    level with the background's middle. Measured: 620x360 -> 500x290 at 292,285, piece 86 -> 69,
    track 292,589, handle 293,590, Submit 942,453; 480x300 -> 480x300 at 302,285, Submit 942,458."""
    w, h = image_size
    width = min(w, 500)
    scale = width / w
    background = Box(292 + (500 - width) / 2, TOP, width, h * scale)
    track_y = TOP + background.h + 14
    handle = Box(background.x + 1, track_y + 1, 52, 50)
    piece_w = round(piece_size[0] * scale)
    submit = Box(942, TOP + background.h / 2 + 23, *SUBMIT)
    return SliderPage(background, scale, handle, width - handle.w, width - piece_w, submit)
