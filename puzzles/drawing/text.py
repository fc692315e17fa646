"""Legible text on puzzle images."""

from typing import Any

from PIL import ImageDraw

from .fonts import text_font


def centered_text(
    draw: ImageDraw.ImageDraw,
    center: tuple[float, float],
    text: str,
    size: int,
    fill=(20, 20, 20),
    bold: bool = True,
    outline: tuple | None = None,
) -> None:
    font = text_font(size, bold)
    kwargs: dict[str, Any] = {"stroke_width": max(1, size // 12), "stroke_fill": outline} if outline else {}
    draw.text(center, text, font=font, fill=fill, anchor="mm", **kwargs)
