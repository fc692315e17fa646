"""The published page's geometry (puzzles/layout.py) against the boxes measured on it for images of
other sizes than the export's (../shared/reference/captchaarena-page/ beside the checkout, not in
the repository: README "Image scaling rules" and boxes.json image_scaling_samples; Chromium at
1280x1080, whole CSS px). The export's own sizes are checked in the browser
(tests/e2e/test_page_parity.py)."""

import pytest

from puzzles.layout import (
    Rect,
    arrows_page,
    bingo_page,
    click_page,
    dot_page,
    hold_page,
    order_page,
    overlay_page,
    patch_page,
    slider_page,
    text_page,
    tiles_page,
)


def near(rect: Rect, x, y, w, h):
    """Within a pixel: the measurements are rounded to whole pixels."""
    return all(abs(a - b) <= 1 for a, b in zip((rect.x, rect.y, rect.w, rect.h), (x, y, w, h)))


@pytest.mark.parametrize(
    "size, image, instruction_y, submit_y",
    [((400, 300), (440, 285, 400, 300), 620, 664), ((1280, 800), (240, 285, 800, 500), 820, 864)],
)
def test_dice_count_shows_the_image_at_natural_size_up_to_500_tall(size, image, instruction_y, submit_y):
    page = text_page(size, 3)
    assert near(page.main.outer, *image) and page.instruction.y == instruction_y
    assert near(page.control("submit"), 718, submit_y, 148, 50)
    assert near(page.control("text"), 414, submit_y + 1, 280, 47)


@pytest.mark.parametrize(
    "size, box, instruction_y",
    [
        ((480, 360), (398, 285, 484, 364), 684),
        ((1280, 960), (307, 285, 665, 500), 820),
        ((500, 500), (390, 285, 500, 500), 820),
    ],
)
def test_click_types_add_a_2px_border_and_cap_the_box_at_500_tall(size, box, instruction_y):
    page = click_page(size, 1)
    assert near(page.main.outer, *box) and round(page.instruction.y) == instruction_y
    assert page.main.border == 2 and "submit" not in page.controls
    assert page.main.to_stage(0, 0) == pytest.approx((box[0] + 2, box[1] + 2), abs=1)


@pytest.mark.parametrize("size", [(600, 400), (1200, 800)])
def test_the_grid_over_the_picture(size):
    page = overlay_page(size, (2, 3), 4)
    assert near(page.main.outer, 400, 285, 480, 321)
    assert near(page.cell(0), 400, 285, 160, 161) and near(page.cell(5), 720, 446, 160, 161)
    assert near(page.control("submit"), 566, 694, 148, 50) and page.instruction_style == "large"


def test_the_tile_grids_ignore_the_picture():
    tiles = tiles_page((540, 540), (3, 3), 4)
    assert all(
        near(tiles.cell(i), x, y, 147, 147)
        for i, (y, x) in enumerate((y, x) for y in (285, 437, 589) for x in (415, 567, 718))
    )
    assert near(tiles.control("submit"), 566, 750, 148, 50) and round(tiles.instruction.y) == 835
    bingo = bingo_page((480, 480), (3, 3), 3)
    assert near(bingo.cell(0), 433, 285, 137, 137) and near(bingo.cell(8), 710, 563, 137, 137)
    assert near(bingo.control("submit"), 510, 723, 259, 50) and bingo.submit_label == "Swap and Submit"


def test_the_patch_grid():
    six = patch_page((576, 576), (6, 6), 5)
    assert near(six.cell(0), 392, 287, 80, 80) and near(six.cell(35), 808, 703, 80, 80)
    assert near(six.main.rect, 392, 287, 496, 496) and near(six.control("submit"), 572, 864, 135, 50)
    assert round(patch_page((500, 500), (5, 5), 5).cell(0).w) == 97


def test_the_placed_dot():
    page = dot_page((640, 480), 2)
    assert near(page.main.rect, 400, 285, 480, 360) and near(page.control("submit"), 566, 724, 148, 50)
    assert page.main.to_stage(320, 240) == (640, 465)
    small = dot_page((500, 400), 2)
    assert near(small.main.rect, 400, 285, 480, 384) and near(small.control("submit"), 566, 748, 148, 50)


@pytest.mark.parametrize(
    "size, box",
    [
        ((480, 480), (715, 364, 330, 330)),
        ((540, 360), (654, 364, 452, 301)),
        ((300, 360), (743, 364, 275, 330)),
        ((520, 360), (654, 364, 452, 313)),
        ((200, 200), (780, 364, 200, 200)),
    ],
)
def test_the_arrow_types_fit_452x330_and_never_enlarge(size, box):
    page = arrows_page(size, size, 4, ("Reference", "Match This"), 8)
    assert near(page.main.outer, *box)
    assert near(page.reference.outer, box[0] - 480, *box[1:])
    assert near(page.control("prev"), 530, 817, 60, 60) and near(page.control("next"), 690, 817, 60, 60)
    assert near(page.control("submit"), 556, 898, 168, 52) and near(page.instruction, 0, 736, 1280, 27)


def test_an_arrow_label_left_empty_is_not_drawn():
    page = arrows_page((480, 480), (480, 480), 4, ("Find sum of darts equal to this", ""), 4)
    assert [name for name, _, _ in page.labels] == ["left"]


def test_the_slider():
    page = slider_page((620, 360), (86, 86), (0, 202), 3)
    slider = page.slider
    assert near(page.main.rect, 292, 285, 500, 290) and near(slider.handle, 293, 590, 52, 50)
    assert near(page.control("track"), 292, 589, 500, 52) and near(slider.piece, 292, 448, 69, 69)
    assert (slider.handle_range, slider.piece_range) == (448, 431)
    assert round(slider.handle_shift(96)) == 100  # measured: the handle +100 px moved the piece +96
    assert near(page.control("submit"), 942, 453, 148, 50) and round(page.instruction.y) == 676
    small = slider_page((480, 300), (60, 60), (0, 120), 3)
    assert near(small.main.rect, 302, 285, 480, 300) and near(small.control("submit"), 942, 458, 148, 50)
    assert round(small.instruction.y) == 686


def test_click_order_stacks_bar_reference_image_and_buttons():
    page = order_page((600, 400), (488, 170), 5)
    assert near(page.reference.outer, 395, 323, 490, 172) and near(page.main.outer, 400, 522, 480, 321)
    assert near(page.control("reset"), 546, 888, 110, 31) and near(page.control("submit"), 532, 936, 216, 50)
    assert round(page.instruction.y) == 1021 and page.submit_label == "Submit Order"
    wide = order_page((600, 400), (976, 340), 5)
    assert near(wide.reference.outer, 190, 323, 900, 315)


def test_the_hold_button():
    page = hold_page(1)
    assert page.image is None and near(page.control("hold"), 440, 345, 400, 111) and round(page.instruction.y) == 521
    with pytest.raises(ValueError):
        page.main.to_stage(0, 0)
