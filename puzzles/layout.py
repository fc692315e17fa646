"""The published CaptchaArena page, element by element, at 1280x1080 (docs/page-parity/README.md).

Every box here is where the published page (its index.html, script.js and style.css, measured
in Chromium at a 1280x1080 viewport: ../shared/reference/captchaarena-page/ beside the checkout,
extracted to tests/e2e/published_page_boxes.json) puts that element for a puzzle of the given
image sizes, in CSS px from the top left. Our page places each element at these boxes (and
scales the whole stage to a person's window), compile_actions and the published computer-use
answers aim at them, and the evidence checks read them: a reference answer, an agent and a
person's hand all act on the same pixels.

Image coordinates are "natural": pixels of the puzzle image, origin top left. An ImageBox maps
them to the stage through the image's content box (inside any border).

No `from __future__ import annotations`: the TypedDicts keep real annotations, so their
__required_keys__ are right at runtime (the page data's shape is checked against them).
"""

from dataclasses import dataclass, field
from typing import Literal, NotRequired, TypedDict

STAGE_W, STAGE_H = 1280, 1080
TOP = 285  # the puzzle area's top: the card at y 265 plus its 20 px padding
CARD_TOP = 265
CARD_BOTTOM_PAD = 20  # the card's padding under the result line
RESULT_H = 24  # the empty result line under the controls
CENTRE_X = 640  # the page's column runs from x 160 to 1120

# The frame every type shares (boxes.json: _frame).
TITLE = (160, 20, 960, 51)
STATS = (160, 101, 960, 56)
STEPS = (490, 187, 300, 63)

Family = Literal["text", "click", "dot", "order", "overlay", "tiles", "patch", "bingo", "arrows", "slider", "hold"]
InstructionStyle = Literal["plain", "large", "arrows"]


# --- the layout as the page gets it (page data "layout", docs/events.md) -------------------
class RectData(TypedDict):
    x: float
    y: float
    w: float
    h: float


class ImageBoxData(RectData):
    natural_w: int
    natural_h: int
    border: float  # px of border around the content box (the element's box is the content plus it)


class StageSize(TypedDict):
    w: int
    h: int


class TextData(RectData):
    name: str  # "left", "right" (column labels), "bar", "clicks" (Click_Order)
    text: str


class SliderData(TypedDict):
    handle_range: float
    piece_range: float
    piece: RectData  # where the piece starts


class LayoutData(TypedDict):
    stage: StageSize
    family: Family
    steps: int  # the "Action Steps" stars filled, fixed per type
    title: RectData
    stats: RectData
    steps_box: RectData
    card: RectData
    instruction: RectData
    instruction_style: InstructionStyle
    result: RectData
    image: ImageBoxData | None
    reference: ImageBoxData | None
    grid: list[int] | None  # [rows, cols]
    cells: list[RectData]  # row-major
    controls: dict[str, RectData]  # submit, prev, next, text, slider, track, hold, reset
    submit_label: str
    labels: list[TextData]  # texts the page draws beside its images: column labels, the order bar
    dots: NotRequired[RectData]  # the arrow types' option dots (centred row)
    slider: NotRequired[SliderData]  # Slide_Puzzle


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    @property
    def bottom(self) -> float:
        return self.y + self.h

    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.x + self.w and self.y <= py < self.y + self.h

    def grown(self, by: float) -> "Rect":
        return Rect(self.x - by, self.y - by, self.w + 2 * by, self.h + 2 * by)

    def as_dict(self) -> RectData:
        return {"x": round(self.x, 2), "y": round(self.y, 2), "w": round(self.w, 2), "h": round(self.h, 2)}


@dataclass(frozen=True)
class ImageBox:
    """An image of natural size drawn, uniformly scaled, into a content rectangle (inside `border`)."""

    rect: Rect
    natural_w: int
    natural_h: int
    border: float = 0.0

    @property
    def scale(self) -> float:
        return self.rect.w / self.natural_w

    @property
    def outer(self) -> Rect:
        """The element's box: content plus border."""
        return self.rect.grown(self.border)

    def to_stage(self, x: float, y: float) -> tuple[float, float]:
        return (self.rect.x + x * self.scale, self.rect.y + y * self.scale)

    def to_natural(self, sx: float, sy: float) -> tuple[float, float]:
        return ((sx - self.rect.x) / self.scale, (sy - self.rect.y) / self.scale)

    def as_dict(self) -> ImageBoxData:
        return {**self.rect.as_dict(), "natural_w": self.natural_w, "natural_h": self.natural_h, "border": self.border}


@dataclass(frozen=True)
class Slider:
    """Slide_Puzzle's handle on its track: moving the handle by d moves the piece by
    d * piece_range / handle_range (the page maps the handle's range onto the piece's)."""

    handle: Rect  # where it starts
    handle_range: float
    piece_range: float
    piece: Rect  # the piece where it starts, stage px (its width rounded, as the page draws it)
    start_x: float  # the piece's starting corner, natural px
    scale: float  # stage px per natural px of the background

    def handle_shift(self, piece_shift: float) -> float:
        """How far to drag the handle (stage px) to move the piece by piece_shift (stage px)."""
        return piece_shift * self.handle_range / self.piece_range

    def handle_at(self, piece_x: float) -> Rect:
        """The handle while the piece's corner is at natural x."""
        shift = self.handle_shift((piece_x - self.start_x) * self.scale)
        return Rect(self.handle.x + shift, self.handle.y, self.handle.w, self.handle.h)


@dataclass(frozen=True)
class Layout:
    family: Family
    instruction: Rect
    card_bottom: float
    steps: int = 1
    image: ImageBox | None = None
    reference: ImageBox | None = None
    grid: tuple[int, int] | None = None  # rows, cols
    cells: tuple[Rect, ...] = ()
    controls: dict[str, Rect] = field(default_factory=dict)
    submit_label: str = "Submit"
    labels: tuple[tuple[str, str, Rect], ...] = ()  # name, text, box
    instruction_style: InstructionStyle = "plain"
    result_top: float = 0.0
    slider: Slider | None = None
    dots: Rect | None = None

    def cell(self, index: int) -> Rect:
        """Stage rectangle of grid cell `index` (row-major)."""
        if not self.cells:
            raise ValueError("this layout has no grid")
        return self.cells[index]

    def control(self, name: str) -> Rect:
        return self.controls[name]

    @property
    def main(self) -> ImageBox:
        """The main image, for the types that have one (every type but Hold_Button)."""
        if self.image is None:
            raise ValueError(f"the {self.family} layout shows no image")
        return self.image

    def as_dict(self) -> LayoutData:
        data: LayoutData = {
            "stage": {"w": STAGE_W, "h": STAGE_H},
            "family": self.family,
            "steps": self.steps,
            "title": Rect(*TITLE).as_dict(),
            "stats": Rect(*STATS).as_dict(),
            "steps_box": Rect(*STEPS).as_dict(),
            "card": Rect(160, CARD_TOP, 960, self.card_bottom - CARD_TOP).as_dict(),
            "instruction": self.instruction.as_dict(),
            "instruction_style": self.instruction_style,
            "result": Rect(180, self.result_top, 920, RESULT_H).as_dict(),
            "image": self.image.as_dict() if self.image else None,
            "reference": self.reference.as_dict() if self.reference else None,
            "grid": list(self.grid) if self.grid else None,
            "cells": [cell.as_dict() for cell in self.cells],
            "controls": {name: rect.as_dict() for name, rect in self.controls.items()},
            "submit_label": self.submit_label,
            "labels": [{**rect.as_dict(), "name": name, "text": text} for name, text, rect in self.labels],
        }
        if self.dots:
            data["dots"] = self.dots.as_dict()
        if self.slider:
            slider = self.slider
            data["slider"] = {
                "handle_range": round(slider.handle_range, 2),
                "piece_range": round(slider.piece_range, 2),
                "piece": slider.piece.as_dict(),
            }
        return data


# --- building blocks ---------------------------------------------------------------------
Size = tuple[int, int]
SUBMIT = (148, 50)  # the green "Submit" button; other labels set their own width


def _centred(y: float, size: tuple[float, float] = SUBMIT) -> Rect:
    """A box of `size` centred on the page's column, its top at y."""
    return Rect(CENTRE_X - size[0] / 2, y, *size)


def _image(x: float, y: float, natural: Size, scale: float, border: float = 0.0) -> ImageBox:
    """An image scaled by `scale` whose element box (border included) has its top left at x, y."""
    w, h = natural
    return ImageBox(Rect(x + border, y + border, w * scale, h * scale), w, h, border)


def _centred_image(y: float, natural: Size, scale: float, border: float = 0.0, centre: float = CENTRE_X) -> ImageBox:
    w = natural[0] * scale + 2 * border
    return _image(centre - w / 2, y, natural, scale, border)


def _grid(x: float, y: float, w: float, h: float, grid: tuple[int, int], gap: float = 0.0) -> tuple[Rect, ...]:
    rows, cols = grid
    cw, ch = (w - gap * (cols - 1)) / cols, (h - gap * (rows - 1)) / rows
    return tuple(Rect(x + c * (cw + gap), y + r * (ch + gap), cw, ch) for r in range(rows) for c in range(cols))


def _instruction(y: float, h: float = 29) -> Rect:
    """The bold, centred instruction under the puzzle (x 180..1100)."""
    return Rect(180, y, 920, h)


def _below(bottom: float) -> tuple[float, float]:
    """The result line 15 px under the last element, and the card's bottom under it."""
    result = bottom + 15
    return result, result + RESULT_H + CARD_BOTTOM_PAD


# --- one builder per published layout ----------------------------------------------------
def text_page(image: Size, steps: int) -> Layout:
    """Dice_Count: the image at natural size up to 500 px tall, centred; the instruction 35 px
    under it; a row of the 280 px number box and Submit under that.
    Measured: 640x400 at 320,285, instruction y 720, box 414,765, Submit 718,764."""
    box = _centred_image(TOP, image, min(1.0, 500 / image[1]))
    instruction = _instruction(box.outer.bottom + 35)
    text = Rect(414, instruction.bottom + 16, 280, 47)
    submit = Rect(718, instruction.bottom + 15, *SUBMIT)
    result, card = _below(submit.bottom)
    controls = {"text": text, "submit": submit}
    return Layout("text", instruction, card, steps, image=box, controls=controls, result_top=result)


def click_page(image: Size, steps: int) -> Layout:
    """Geometry_Click, Misleading_Click, Pick_Area: the image at natural size with a 2 px border,
    the box at most 500 px tall; no Submit (the page submits the click by itself).
    Measured: 640x480 -> box 318,285 644x484, instruction y 804; 1280x960 -> 665x500."""
    box = _centred_image(TOP, image, min(1.0, 496 / image[1]), border=2)
    instruction = _instruction(box.outer.bottom + 35)
    result, card = _below(instruction.bottom)
    return Layout("click", instruction, card, steps, image=box, result_top=result)


def dot_page(image: Size, steps: int) -> Layout:
    """Place_Dot: the picture always 480 px wide, no border, at 400,285; Submit under the
    instruction. Measured: 640x480 -> 480x360, Submit 566,724; 500x400 -> 480x384, Submit 566,748."""
    box = _image(400, TOP, image, 480 / image[0])
    instruction = _instruction(box.outer.bottom + 35)
    submit = _centred(instruction.bottom + 15)
    result, card = _below(submit.bottom)
    return Layout("dot", instruction, card, steps, image=box, controls={"submit": submit}, result_top=result)


def order_page(image: Size, reference: Size, steps: int) -> Layout:
    """Click_Order: a black bar "Click icons in this order:" over the reference strip (natural
    size plus a 1 px border, at most 900 px wide), the main image fitted in 480x480 with a 1 px
    border, "Reset Clicks" and the click counter, "Submit Order", then the instruction.
    Measured: reference 488x170 -> 395,323 490x172; main 600x400 -> 400,522 480x321;
    reset 546,888 110x31; Submit Order 532,936 216x50; instruction y 1021."""
    strip = _centred_image(TOP + 38, reference, min(1.0, 898 / reference[0]), border=1)
    bar = Rect(strip.outer.x, TOP, strip.outer.w, 32)
    main = _centred_image(strip.outer.bottom + 27, image, min(478 / image[0], 478 / image[1]), border=1)
    reset = Rect(546, main.outer.bottom + 45, 110, 31)
    clicks = Rect(667, reset.y, 80, 31)
    submit = _centred(reset.bottom + 17, (216, 50))
    instruction = _instruction(submit.bottom + 35)
    result, card = _below(instruction.bottom)
    return Layout(
        "order",
        instruction,
        card,
        steps,
        image=main,
        reference=strip,
        controls={"reset": reset, "submit": submit},
        submit_label="Submit Order",
        labels=(("bar", "Click icons in this order:", bar), ("clicks", "Clicks: 0", clicks)),
        result_top=result,
    )


def overlay_page(image: Size, grid: tuple[int, int], steps: int) -> Layout:
    """Unusual_Detection, Select_Animal: the picture 480 px wide including a 2 px border, its
    height by aspect ratio, at 400,285; a transparent grid of equal cells over the whole box;
    the instruction (bold 20 px) 36 px under it, Submit under that. Measured: 600x400 (and
    1200x800) -> box 480x321, cells 160x161, instruction y 642, Submit 566,694."""
    box = _image(400, TOP, image, 476 / image[0], border=2)
    outer = box.outer
    instruction = _instruction(outer.bottom + 36, 32)
    submit = _centred(instruction.bottom + 20)
    result, card = _below(submit.bottom)
    cells = _grid(outer.x, outer.y, outer.w, outer.h, grid)
    return Layout(
        "overlay",
        instruction,
        card,
        steps,
        image=box,
        grid=grid,
        cells=cells,
        controls={"submit": submit},
        instruction_style="large",
        result_top=result,
    )


def tiles_page(image: Size, grid: tuple[int, int], steps: int) -> Layout:
    """Image_Recognition: a fixed 450x450 grid of 3x3 cells 5 px apart (147 px at x
    415/567/718), each tile filling its cell inside a 2 px border, whatever its size; Submit
    under the grid, then the instruction. Measured: Submit 566,750, instruction y 835."""
    cells = _grid(415, TOP, 450, 450, grid, gap=5)
    submit = _centred(TOP + 450 + 15)
    instruction = _instruction(submit.bottom + 35)
    result, card = _below(instruction.bottom)
    return Layout(
        "tiles",
        instruction,
        card,
        steps,
        image=_image(415, TOP, image, 450 / image[0]),
        grid=grid,
        cells=cells,
        controls={"submit": submit},
        result_top=result,
    )


def bingo_page(image: Size, grid: tuple[int, int], steps: int) -> Layout:
    """Bingo: a fixed 414x414 grid of 3x3 cells 2 px apart (137 px at x 433/572/710), each piece
    of the image inside a 2 px border; "Swap and Submit" 24 px under it, then the instruction.
    Measured: button 510,723 259x50, instruction y 793."""
    cells = _grid(433, TOP, 414, 414, grid, gap=2)
    submit = _centred(TOP + 414 + 24, (259, 50))
    instruction = _instruction(submit.bottom + 20)
    result, card = _below(instruction.bottom)
    return Layout(
        "bingo",
        instruction,
        card,
        steps,
        image=_image(433, TOP, image, 414 / image[0]),
        grid=grid,
        cells=cells,
        controls={"submit": submit},
        submit_label="Swap and Submit",
        result_top=result,
    )


def patch_page(image: Size, grid: tuple[int, int], steps: int) -> Layout:
    """Patch_Select: a box 500 px wide at 390,285 with a 2 px border, 500 * rows / cols high; the
    image covers its inside; the cells share it with 3 px gaps (80 px for 6x6, 97 for 5x5); the
    instruction 35 px under the box, "Verify" under that. Measured: 6x6 -> cells 392,287 80x80,
    instruction y 820, Verify 572,864 135x50."""
    rows, cols = grid
    height = 500 * rows / cols
    inner = Rect(392, TOP + 2, 496, height - 4)
    box = ImageBox(inner, *image, border=2)
    instruction = _instruction(TOP + height + 35)
    submit = _centred(instruction.bottom + 15, (135, 50))
    result, card = _below(submit.bottom)
    return Layout(
        "patch",
        instruction,
        card,
        steps,
        image=box,
        grid=grid,
        cells=_grid(inner.x, inner.y, inner.w, inner.h, grid, gap=3),
        controls={"submit": submit},
        submit_label="Verify",
        result_top=result,
    )


ARROW_IMAGE_TOP = 364
ARROW_FIT = (452, 330)


def _arrow_image(natural: Size, centre: float) -> ImageBox:
    w, h = natural
    scale = min(1.0, ARROW_FIT[0] / w, ARROW_FIT[1] / h)
    return _centred_image(ARROW_IMAGE_TOP, natural, scale, centre=centre)


def arrows_page(
    image: Size, reference: Size, steps: int, labels: tuple[str, str], option_count: int, dot_pitch: float = 19
) -> Layout:
    """Rotation_Match, Image_Matching, Coordinates, Path_Finder, Dart_Count, Object_Match,
    Connect_icon: one fixed layout. Column labels at y 312; the reference centred in x 160..640
    and the option in 640..1120, tops at 364, fitted in 452x330, never enlarged; the instruction
    across the page at y 736; a row of option dots at y 786; round arrows 530,817 and 690,817;
    Submit 556,898 168x52. A label "" is drawn but not shown (it still takes its place)."""
    left, right = _arrow_image(reference, 400), _arrow_image(image, 880)
    dots_w = option_count * dot_pitch - (dot_pitch - 10)
    label_boxes = tuple(
        (name, text, Rect(box.outer.x, 312, box.outer.w, 34))
        for name, text, box in zip(("left", "right"), labels, (left, right))
        if text
    )
    return Layout(
        "arrows",
        Rect(0, 736, STAGE_W, 27),
        CARD_TOP + 690,
        steps,
        image=right,
        reference=left,
        controls={"prev": Rect(530, 817, 60, 60), "next": Rect(690, 817, 60, 60), "submit": Rect(556, 898, 168, 52)},
        labels=label_boxes,
        instruction_style="arrows",
        result_top=CARD_TOP + 690,  # hidden on this layout: the verdict shows in the stats bar only
        dots=Rect(CENTRE_X - dots_w / 2, 781, dots_w, 10),
    )


def slider_page(image: Size, piece: Size, start: tuple[float, float], steps: int) -> Layout:
    """Slide_Puzzle: the background min(width, 500) px wide at y 285 (x 292 for 500 px, 302 for
    480: the row is centred); the piece at the same scale, its width rounded; the track as wide
    as the background, 14 px under it, a 52x50 handle 1 px inside it; Submit at x 942, level
    with the background's middle. Measured: 620x360 -> 500x290 at 292,285, piece 86 -> 69,
    track 292,589, handle 293,590, Submit 942,453; 480x300 -> 302,285, Submit 942,458."""
    width = min(image[0], 500)
    scale = width / image[0]
    background = _image(292 + (500 - width) / 2, TOP, image, scale)
    bg = background.rect
    track = Rect(bg.x, bg.bottom + 14, width, 52)
    handle = Rect(track.x + 1, track.y + 1, 52, 50)
    piece_w, piece_h = round(piece[0] * scale), round(piece[1] * scale)
    start_x, start_y = background.to_stage(*start)
    # The page draws the piece at a rounded size centred where the unrounded one would be.
    piece_rect = Rect(
        start_x + (piece[0] * scale - piece_w) / 2, start_y + (piece[1] * scale - piece_h) / 2, piece_w, piece_h
    )
    slider = Slider(handle, width - handle.w, width - piece_w, piece_rect, start[0], scale)
    submit = Rect(942, TOP + bg.h / 2 + 23, *SUBMIT)
    instruction = _instruction(track.bottom + 35)
    result, card = _below(instruction.bottom)
    return Layout(
        "slider",
        instruction,
        card,
        steps,
        image=background,
        controls={"slider": handle, "track": track, "submit": submit},
        result_top=result,
        slider=slider,
    )


def hold_page(steps: int) -> Layout:
    """Hold_Button: no image; a rounded "HOLD" button 400x111 at 440,345 with its progress bar
    along the bottom edge; the instruction 65 px under it. Measured: instruction y 521."""
    hold = Rect(440, TOP + 60, 400, 111)
    instruction = _instruction(hold.bottom + 65)
    result, card = _below(instruction.bottom)
    return Layout("hold", instruction, card, steps, controls={"hold": hold}, result_top=result)


CellPage = Literal["overlay", "tiles", "patch"]
CELL_PAGES = {"overlay": overlay_page, "tiles": tiles_page, "patch": patch_page}  # the cell-set types' layouts
