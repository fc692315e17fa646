"""Fonts from Debian packages (fonts-dejavu-core, fonts-noto-color-emoji)."""

from functools import cache
from pathlib import Path

from PIL import ImageFont

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
EMOJI_FONT = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")


@cache
def text_font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    path = DEJAVU / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
    return ImageFont.truetype(str(path), size)


@cache
def emoji_font() -> ImageFont.FreeTypeFont:
    # Noto Color Emoji is a bitmap font that only exists at 109 px; we scale its glyphs after.
    return ImageFont.truetype(str(EMOJI_FONT), 109)
