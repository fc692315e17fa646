"""Where things sit on the fixed 1280x1080 stage.

The page places every element at these rectangles (scaled to the window as a whole), and
compile_actions aims at the same rectangles, so a reference answer and a person's hand hit
the same pixels. Image coordinates are "natural": pixels of the puzzle image, origin top-left.
"""

from dataclasses import dataclass, field
from typing import TypedDict

STAGE_W, STAGE_H = 1280, 1080
MAIN_AREA = (40, 150, 1200, 760)  # x, y, w, h available for puzzle images
CONTROL_Y = 940
CONTROL_H = 70
INSTRUCTION = (40, 20, 1080, 110)  # narrower than the stage: the flag button sits at its right
STATUS = (40, 1020, 1200, 50)


# --- the layout as the page gets it (page data "layout", docs/events.md) -------------------
class RectData(TypedDict):
    x: float
    y: float
    w: float
    h: float


class ImageBoxData(RectData):
    natural_w: int
    natural_h: int


class StageSize(TypedDict):
    w: int
    h: int


class LayoutData(TypedDict):
    stage: StageSize
    instruction: RectData
    status: RectData
    image: ImageBoxData
    reference: ImageBoxData | None
    grid: list[int] | None  # [rows, cols]
    controls: dict[str, RectData]  # submit, prev, next, rotate_left, rotate_right, input, hold


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.x + self.w and self.y <= py < self.y + self.h

    def as_dict(self) -> RectData:
        return {"x": round(self.x, 2), "y": round(self.y, 2), "w": round(self.w, 2), "h": round(self.h, 2)}


@dataclass(frozen=True)
class ImageBox:
    """An image of natural size drawn, uniformly scaled, into a stage rectangle."""

    rect: Rect
    natural_w: int
    natural_h: int

    @property
    def scale(self) -> float:
        return self.rect.w / self.natural_w

    def to_stage(self, x: float, y: float) -> tuple[float, float]:
        return (self.rect.x + x * self.scale, self.rect.y + y * self.scale)

    def to_natural(self, sx: float, sy: float) -> tuple[float, float]:
        return ((sx - self.rect.x) / self.scale, (sy - self.rect.y) / self.scale)

    def as_dict(self) -> ImageBoxData:
        return {**self.rect.as_dict(), "natural_w": self.natural_w, "natural_h": self.natural_h}


@dataclass(frozen=True)
class Layout:
    image: ImageBox
    reference: ImageBox | None = None
    grid: tuple[int, int] | None = None  # rows, cols laid over the main image
    controls: dict[str, Rect] = field(default_factory=dict)

    def cell(self, index: int) -> Rect:
        """Stage rectangle of grid cell `index` (row-major)."""
        if self.grid is None:
            raise ValueError("this layout has no grid")
        rows, cols = self.grid
        r, c = divmod(index, cols)
        w, h = self.image.rect.w / cols, self.image.rect.h / rows
        return Rect(self.image.rect.x + c * w, self.image.rect.y + r * h, w, h)

    def control(self, name: str) -> Rect:
        return self.controls[name]

    def as_dict(self) -> LayoutData:
        return {
            "stage": {"w": STAGE_W, "h": STAGE_H},
            "instruction": Rect(*INSTRUCTION).as_dict(),
            "status": Rect(*STATUS).as_dict(),
            "image": self.image.as_dict(),
            "reference": self.reference.as_dict() if self.reference else None,
            "grid": list(self.grid) if self.grid else None,
            "controls": {name: rect.as_dict() for name, rect in self.controls.items()},
        }


def _fit(natural: tuple[int, int], box: tuple[float, float, float, float], max_scale: float) -> ImageBox:
    bx, by, bw, bh = box
    nw, nh = natural
    scale = min(bw / nw, bh / nh, max_scale)
    w, h = nw * scale, nh * scale
    return ImageBox(Rect(bx + (bw - w) / 2, by + (bh - h) / 2, w, h), nw, nh)


SUBMIT = Rect(STAGE_W - 40 - 200, CONTROL_Y, 200, CONTROL_H)
CONTROL_GAP = 20


def _control_row(names: tuple[str, ...], center_x: float) -> dict[str, Rect]:
    """Buttons other than submit, side by side under the main image, kept well clear of Submit."""
    widths = {"input": 300, "hold": 320}
    total = sum(widths.get(n, 130) for n in names) + CONTROL_GAP * (len(names) - 1)
    x = min(center_x - total / 2, SUBMIT.x - 3 * CONTROL_GAP - total)
    rects = {}
    for name in names:
        w = widths.get(name, 130)
        rects[name] = Rect(x, CONTROL_Y, w, CONTROL_H)
        x += w + CONTROL_GAP
    return rects


def build_layout(
    *,
    image_size: tuple[int, int],
    reference_size: tuple[int, int] | None = None,
    grid: tuple[int, int] | None = None,
    controls: tuple[str, ...] = (),
    submit: bool = True,
    max_scale: float = 1.6,
) -> Layout:
    """The stage layout for a main image, an optional reference image on its left, and buttons."""
    ax, ay, aw, ah = MAIN_AREA
    if reference_size:
        gap = 40
        ref_w = aw * 0.38
        reference = _fit(reference_size, (ax, ay, ref_w, ah), max_scale)
        image = _fit(image_size, (ax + ref_w + gap, ay, aw - ref_w - gap, ah), max_scale)
    else:
        reference = None
        image = _fit(image_size, MAIN_AREA, max_scale)
    rects = _control_row(controls, image.rect.center()[0]) if controls else {}
    if submit:
        rects["submit"] = SUBMIT
    return Layout(image=image, reference=reference, grid=grid, controls=rects)
