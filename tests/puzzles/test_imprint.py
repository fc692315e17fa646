"""The deployment's imprint on served images: other bytes, the same look, every mode kept sane."""

import io

import numpy as np
import pytest
from PIL import Image

from puzzles import imprint, jpeg_coefficients


def _rng(n: int = 0) -> np.random.Generator:
    return np.random.default_rng(n)


def _array(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGBA"), dtype=np.int16)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _jpeg(image: Image.Image) -> np.ndarray:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=92, subsampling=0)
    return np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"), dtype=np.int16)


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "LA"])
def test_lossless_moves_colours_by_one_keeps_mode_size_and_alpha(mode):
    values = _rng().integers(0, 256, (37, 53, len(mode)), dtype=np.uint8)
    values[0, :] = 0  # at the ends of the range a move turns inwards
    values[1, :] = 255
    if "A" in mode:
        values[:10, :, -1] = 0  # fully transparent
    original = Image.fromarray(values[:, :, 0] if mode == "L" else values, mode)
    moved = imprint.lossless(original, _rng(1))
    assert (moved.mode, moved.size) == (original.mode, original.size)
    a, b = _array(original), _array(moved)
    assert np.abs(a - b).max() == 1 and (a != b).mean() > 0.2
    assert np.array_equal(a[:, :, 3], b[:, :, 3])
    if "A" in mode:
        assert np.array_equal(a[:10], b[:10])  # transparent pixels are left as they are
    assert imprint.lossless(original, _rng(1)).tobytes() == moved.tobytes()  # keyed: the same key, the same bytes
    assert imprint.lossless(original, _rng(2)).tobytes() != moved.tobytes()


def test_a_palette_image_keeps_its_indices_and_transparent_entry():
    indices = _rng().integers(0, 3, (20, 30), dtype=np.uint8)
    original = Image.fromarray(indices, "L").convert("P")
    original.putpalette([9, 9, 9, 200, 30, 30, 30, 200, 30])
    original.info["transparency"] = 0
    moved = imprint.lossless(original, _rng(3))
    assert moved.mode == "P" and np.array_equal(np.asarray(moved), indices)
    assert moved.getpalette()[:3] == [9, 9, 9]  # the transparent entry is not touched
    assert moved.getpalette() != original.getpalette()
    reread = Image.open(io.BytesIO(_png(moved)))
    assert reread.info.get("transparency") == 0
    assert np.abs(_array(reread) - _array(original)).max() == 1


def test_even_a_one_pixel_image_changes():
    for seed in range(20):
        assert imprint.lossless(Image.new("RGB", (1, 1), (0, 0, 0)), _rng(seed)).getpixel((0, 0)) != (0, 0, 0)


def test_a_single_transparent_colour_becomes_alpha_so_noise_cannot_show_or_hide_a_pixel():
    image = Image.new("RGB", (8, 8), (10, 20, 30))
    image.info["transparency"] = (10, 20, 30)
    servable = imprint.servable(image)
    assert servable.mode == "RGBA" and servable.getpixel((0, 0))[3] == 0
    assert imprint.servable(Image.new("1", (4, 4))).mode == "L"
    assert imprint.servable(Image.new("CMYK", (4, 4))).mode == "RGB"


def test_jpeg_blocks_change_the_file_and_no_decoded_pixel_by_more_than_two():
    rng = _rng(4)
    values = rng.integers(0, 256, (101, 163, 3), dtype=np.uint8)  # sizes not multiples of 8
    values[:16, :16] = 255  # a block at the top of the range can only go down
    values[16:24, :8] = 0  # one at the bottom only up
    values[24:32, :8, 0], values[24:32, :8, 1] = 0, 255  # one holding both cannot shift at all
    original = Image.fromarray(values, "RGB")
    moved = imprint.jpeg_blocks(original, _rng(5))
    assert (moved.mode, moved.size) == ("RGB", original.size)
    shift = np.asarray(moved, dtype=np.int16) - values
    assert set(np.unique(shift)) <= {-1, 0, 1}
    assert np.all(shift[24:32, :8] == 0)
    blocks = shift[:96, :160].reshape(12, 8, 20, 8, 3)
    assert np.all(blocks == blocks[:, :1, :, :1, :1])  # each block moves whole, all channels alike
    decoded, plain = _jpeg(moved), _jpeg(original)
    assert not np.array_equal(decoded, plain)
    assert np.abs(decoded - plain).max() <= 2


def _moved_by_definition(values: np.ndarray, alpha: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """The imprint as the docstring says it, one sample at a time: a keyed half of the colour
    samples (draws 0 and 1 of 0..3) move down or up, turned inwards at 0 and 255, never where
    the pixel is fully transparent."""
    draw = rng.integers(0, 4, size=values.shape, dtype=np.int8)
    moved = values.astype(np.int16)
    for index, value in np.ndenumerate(values):
        if draw[index] > 1 or (alpha is not None and alpha[index[:2]] == 0):
            continue
        step = -1 if draw[index] == 0 else 1
        moved[index] += -step if int(value) + step in (-1, 256) else step
    return moved.astype(np.uint8)


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "LA"])
def test_lossless_moves_exactly_the_keyed_samples_its_definition_names(mode):
    # The vectorised imprint must keep the keyed stream: the same key gives a served file the same
    # bytes after the rewrite as before it (an import that resumes mixes both).
    values = _rng(6).integers(0, 256, (23, 29, len(mode)), dtype=np.uint8)
    values[:3] = 0
    values[3:6] = 255
    if "A" in mode:
        values[6:9, :, -1] = 0
    original = Image.fromarray(values[:, :, 0] if mode == "L" else values, mode)
    colours = values[:, :, :-1] if "A" in mode else values
    expected = _moved_by_definition(colours, values[:, :, -1] if "A" in mode else None, _rng(7))
    moved = np.asarray(imprint.lossless(original, _rng(7))).reshape(values.shape)
    assert np.array_equal(moved[:, :, : colours.shape[2]], expected)
    assert np.array_equal(moved[:, :, colours.shape[2] :], values[:, :, colours.shape[2] :])  # alpha as it was


def _jpeg_moved_by_definition(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The JPEG imprint as the docstring says it, one 8x8 block at a time (partial blocks at the
    edges included): a keyed half move down or up, turned inwards at 0 and 255, never one holding
    both; if none would move, the first block that can does."""
    rows, columns = -(-values.shape[0] // 8), -(-values.shape[1] // 8)
    draw = rng.integers(0, 4, size=(rows, columns), dtype=np.int8)
    blocks = {(r, c): values[r * 8 : r * 8 + 8, c * 8 : c * 8 + 8] for r in range(rows) for c in range(columns)}
    steps = {}
    for place, block in blocks.items():
        high, low = int(block.max()), int(block.min())
        step = {0: -1, 1: 1}.get(int(draw[place]), 0)
        step = -1 if high == 255 and step > 0 else 1 if low == 0 and step < 0 else step
        steps[place] = 0 if (high, low) == (255, 0) else step
    fitting = [place for place, block in blocks.items() if (block.max(), block.min()) != (255, 0)]
    if not any(steps.values()) and fitting:
        steps[fitting[0]] = -1 if blocks[fitting[0]].max() == 255 else 1
    moved = values.astype(np.int16)
    for (r, c), step in steps.items():
        moved[r * 8 : r * 8 + 8, c * 8 : c * 8 + 8] += step
    return moved.astype(np.uint8)


@pytest.mark.parametrize("size", [(1, 1), (3, 5), (8, 8), (17, 9), (40, 64), (61, 37)])
@pytest.mark.parametrize("content", ["noise", "black_and_white", "edges_of_the_range", "flat"])
def test_jpeg_blocks_move_exactly_the_keyed_blocks_their_definition_names(size, content):
    # The in-place imprint must keep the keyed stream: the same key gives a served file the same
    # bytes after a rewrite as before it (an import that resumes mixes both).
    rng = _rng(8)
    shape = (size[1], size[0], 3)
    values = {
        "noise": lambda: rng.integers(0, 256, shape, dtype=np.uint8),
        "black_and_white": lambda: np.repeat(np.where(rng.random(shape[:2] + (1,)) < 0.5, 0, 255), 3, 2),
        "edges_of_the_range": lambda: rng.choice(np.array([0, 1, 128, 254, 255]), shape),
        "flat": lambda: np.full(shape, 255),
    }[content]().astype(np.uint8)
    for seed in range(5):
        moved = np.asarray(imprint.jpeg_blocks(Image.fromarray(values, "RGB"), _rng(seed)))
        assert np.array_equal(moved, _jpeg_moved_by_definition(values, _rng(seed)))


# --- an imported JPEG, imprinted in its coefficients (jpeg_file) -------------------------------------


def _jpeg_file(values: np.ndarray, **options) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(values, "RGB").save(buffer, "JPEG", **options)
    return buffer.getvalue()


def _luma_dc(data: bytes) -> np.ndarray:
    """The file's luminance DC coefficients, one row of blocks a row (read through the same transform)."""
    rows: dict[int, np.ndarray] = {}
    jpeg_coefficients.edit_luma_dc(data, lambda dc, row, count: rows.setdefault(row, dc.copy()) if row < count else 0)
    return np.stack([rows[row] for row in sorted(rows)])


def _step(data: bytes) -> int:
    image = Image.open(io.BytesIO(data))
    return image.quantization[image.layer[0][3]][0]


@pytest.mark.parametrize("subsampling", [0, 2])  # 4:4:4 as we export, 4:2:0 as most cameras and sites write
def test_jpeg_file_moves_a_keyed_half_of_the_luminance_dc_by_one_step_and_nothing_else(subsampling):
    values = _rng(7).integers(0, 256, (101, 163, 3), dtype=np.uint8)  # sizes not multiples of 8 or 16
    values[:16, :16] = 255  # a white corner: its blocks can only go darker
    source = _jpeg_file(values, quality=92, subsampling=subsampling)
    step = _step(source)
    moved = imprint.jpeg_file(source, step, _rng(8))

    before, after = _luma_dc(source), _luma_dc(moved)
    assert before.shape == after.shape == (13, 21)
    signs = _signs_drawn(_rng(8), before.shape)
    lowest, highest = (round(bound / step) for bound in imprint.DC_RANGE)
    outside = (before + signs > highest) | (before + signs < lowest)
    expected = before + np.where(outside, -signs, signs)
    assert np.array_equal(after, expected)
    assert (after != before).mean() == pytest.approx(0.5, abs=0.1)
    white = before[:2, :2]
    assert np.all(white == highest) and set(np.unique(after[:2, :2] - white)) <= {-1, 0}  # darker, or kept

    decoded = np.asarray(Image.open(io.BytesIO(moved)).convert("RGB"), dtype=np.int16)
    plain = np.asarray(Image.open(io.BytesIO(source)).convert("RGB"), dtype=np.int16)
    assert 0 < np.abs(decoded - plain).max() <= 2
    assert imprint.jpeg_file(source, step, _rng(8)) == moved  # the same key, the same bytes
    assert imprint.jpeg_file(source, step, _rng(9)) != moved


def _signs_drawn(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """The imprint's draw as its docstring names it: 0 of 0..3 is a step down, 1 a step up."""
    draw = rng.integers(0, 4, size=shape, dtype=np.int8)
    return np.where(draw == 0, -1, np.where(draw == 1, 1, 0))


def test_jpeg_file_moves_a_single_block_image_even_when_the_draw_moves_nothing():
    source = _jpeg_file(np.full((8, 8, 3), 120, np.uint8), quality=92)
    seeds = [seed for seed in range(40) if not _signs_drawn(_rng(seed), (1, 1)).any()]
    moved = imprint.jpeg_file(source, _step(source), _rng(seeds[0]))
    assert moved != source and _luma_dc(moved)[0, 0] == _luma_dc(source)[0, 0] + 1


def test_jpeg_file_refuses_what_it_cannot_edit_and_a_truncated_file():
    grey = io.BytesIO()
    Image.new("L", (16, 16), 90).save(grey, "JPEG")
    cmyk = io.BytesIO()
    Image.new("CMYK", (16, 16), (1, 2, 3, 4)).save(cmyk, "JPEG")
    whole = _jpeg_file(_rng(3).integers(0, 256, (64, 64, 3), dtype=np.uint8), quality=92)
    for broken in (grey.getvalue(), cmyk.getvalue(), whole[: len(whole) // 2], b"not a jpeg"):
        with pytest.raises(jpeg_coefficients.Unsupported):
            imprint.jpeg_file(broken, 3, _rng(1))
