"""The published page's geometry (puzzles/published_page.py) against the boxes measured on it
(/work/shared/reference/captchaarena-page/boxes.json, Chromium at 1280x1080: whole CSS px)."""

import pytest

from puzzles.published_page import Box, OverlayGrid, PatchGrid, TileGrid, dot_page, slider_page


def near(box: Box, x, y, w, h):
    """Within a pixel: the measurements are rounded to whole pixels."""
    return all(abs(a - b) <= 1 for a, b in zip((box.x, box.y, box.w, box.h), (x, y, w, h)))


def along(values, measured):
    return len(values) == len(measured) and all(abs(a - b) <= 1 for a, b in zip(values, measured))


@pytest.mark.parametrize("size", [(600, 400), (1200, 800)])
def test_a_grid_over_the_picture(size):
    page = OverlayGrid().page(size, (2, 3))
    assert near(page.cells[0], 400, 285, 160, 161) and near(page.cells[-1], 720, 446, 160, 161)
    assert near(page.submit, 566, 694, 148, 50)


def test_the_tile_grid_ignores_the_picture():
    page = TileGrid().page((540, 540), (3, 3))
    assert along([c.x for c in page.cells[:3]], [415, 567, 718])
    assert along([c.y for c in page.cells[::3]], [285, 437, 589])
    assert all(near(c, c.x, c.y, 147, 147) for c in page.cells)
    assert near(page.submit, 566, 750, 148, 50)


def test_the_patch_grid():
    six = PatchGrid().page((576, 576), (6, 6))
    assert near(six.cells[0], 392, 287, 80, 80) and near(six.cells[-1], 808, 703, 80, 80)
    assert along([c.x for c in six.cells[:6]], [392, 475, 558, 641, 725, 808])
    assert near(six.submit, 572, 864, 135, 50)
    assert round(PatchGrid().page((500, 500), (5, 5)).cells[0].w) == 97


def test_the_placed_dot():
    page = dot_page((640, 480))
    assert near(page.image, 400, 285, 480, 360) and near(page.submit, 566, 724, 148, 50)
    assert page.to_screen(320, 240) == (640, 465)
    small = dot_page((500, 400))
    assert near(small.image, 400, 285, 480, 384) and near(small.submit, 566, 748, 148, 50)


def test_the_slider():
    page = slider_page((620, 360), (86, 86))
    assert near(page.background, 292, 285, 500, 290) and near(page.handle, 293, 590, 52, 50)
    assert (page.handle_range, page.piece_range) == (448, 431)
    assert round(page.handle_shift(96)) == 100  # measured: the handle +100 px moved the piece +96
    assert near(page.submit, 942, 453, 148, 50)
    small = slider_page((480, 300), (60, 60))
    assert near(small.background, 302, 285, 480, 300) and near(small.submit, 942, 458, 148, 50)
