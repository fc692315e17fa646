"""Hold_Button: a decorative verification panel; the hold button itself is a page control.

The image deliberately draws no button (a fake one would invite clicks in the wrong place): the
page puts the real hold control under the image. The hold time is private truth.

Published entries have no image (the published page draws only its button): they are shown on a
plain panel, the stand-in image, the same for every such puzzle.
"""

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from puzzles.drawing import canvas
from puzzles.drawing.emoji import emoji_image
from puzzles.drawing.fonts import text_font
from puzzles.drawing.text import centered_text
from puzzles.types.base import Generated
from puzzles.types.kinds import HoldType

SIZE = (560, 320)
HOLD_TIMES = (2.0, 2.5, 3.0, 3.5, 4.0)
ICONS = ["🛡", "🔒", "🔐", "🔑", "✅", "🤖"]
SUBTITLES = [
    "Hold the button below until it finishes loading",
    "Keep holding the button below until the bar is full",
    "Press the button below and keep holding it",
    "Hold the button below to confirm you are human",
]
FOOTERS = ["Protected by ArenaGuard", "Human verification", "Security check", "Privacy - Terms"]
TITLES = ["Press and hold", "Press & hold", "Press and hold to verify"]
ACCENTS = [(37, 99, 235), (22, 163, 74), (220, 38, 38), (124, 58, 237), (234, 88, 12), (8, 145, 178), (190, 24, 93)]


def _drawn_shield(size: int, color) -> Image.Image:
    """A flat shield with a check mark, for variety beside the emoji icons."""
    s = size * 2
    sprite = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(sprite)
    outline = [
        (s * 0.5, s * 0.04),
        (s * 0.92, s * 0.18),
        (s * 0.86, s * 0.6),
        (s * 0.5, s * 0.96),
        (s * 0.14, s * 0.6),
        (s * 0.08, s * 0.18),
    ]
    draw.polygon(outline, fill=color + (255,))
    inner = [(s * 0.5 + (x - s * 0.5) * 0.8, s * 0.5 + (y - s * 0.5) * 0.8) for x, y in outline]
    draw.polygon(inner, fill=tuple(min(255, c + 50) for c in color) + (255,))
    draw.line(
        [(s * 0.3, s * 0.5), (s * 0.45, s * 0.66), (s * 0.72, s * 0.34)],
        fill=(255, 255, 255, 255),
        width=s // 12,
        joint="curve",
    )
    return sprite.reduce(2)


class HoldButton(HoldType):
    name = "Hold_Button"
    steps = 1  # the published page's "Action Steps" stars
    instruction = "Hold the button until it finishes loading."

    def stand_in_image(self) -> Image.Image:
        """A plain card with the title and the hint, in the generated panels' size and colours."""
        w, h = SIZE
        image = Image.new("RGB", SIZE, (236, 238, 243))
        draw = ImageDraw.Draw(image)
        draw.rounded_rectangle((60, 50, w - 60, h - 50), 22, fill=(250, 250, 252), outline=(214, 218, 226))
        centered_text(draw, (w / 2, h / 2 - 22), TITLES[0], 30, fill=(30, 34, 44))
        centered_text(draw, (w / 2, h / 2 + 22), SUBTITLES[0], 17, fill=(95, 100, 115), bold=False)
        return image

    def generate(self, rng: np.random.Generator) -> Generated:
        w, h = SIZE
        image = canvas.background(rng, SIZE, clutter=10)
        accent = ACCENTS[int(rng.integers(len(ACCENTS)))]
        dark_card = bool(rng.integers(0, 4) == 0)

        # The card, with a soft shadow.
        cw, ch = int(rng.integers(400, 480)), int(rng.integers(220, 270))
        cx0, cy0 = (w - cw) // 2 + int(rng.integers(-15, 16)), (h - ch) // 2 + int(rng.integers(-10, 11))
        shadow = Image.new("L", (w // 2, h // 2), 0)
        ImageDraw.Draw(shadow).rounded_rectangle(
            (cx0 // 2 + 2, cy0 // 2 + 4, (cx0 + cw) // 2 + 2, (cy0 + ch) // 2 + 4), 12, fill=110
        )
        shadow = shadow.filter(ImageFilter.GaussianBlur(5)).resize(SIZE, Image.Resampling.BILINEAR)
        image.paste((0, 0, 0), (0, 0), shadow)
        draw = ImageDraw.Draw(image)
        card = (30, 34, 44) if dark_card else (250, 250, 252)
        ink = (240, 240, 245) if dark_card else (30, 34, 44)
        soft = (170, 175, 190) if dark_card else (95, 100, 115)
        draw.rounded_rectangle((cx0, cy0, cx0 + cw, cy0 + ch), 22, fill=card)
        # An accent band along the top, clipped to the card's rounded corners.
        band = Image.new("L", (cw + 1, 9), 0)
        ImageDraw.Draw(band).rounded_rectangle((0, 0, cw, ch), 22, fill=255)
        image.paste(accent, (cx0, cy0, cx0 + cw + 1, cy0 + 9), band)

        # The icon in a tinted circle.
        icon_size = int(rng.integers(64, 80))
        mid_x = cx0 + cw // 2
        # Icon, title, hint and footer stacked and centred vertically on the card.
        r = icon_size // 2 + 12
        icon_cy = cy0 + 9 + (ch - 9 - (2 * r + 118)) // 2 + r
        tint = tuple(
            int(c * (0.35 if dark_card else 0.18) + k * (0.65 if dark_card else 0.82)) for c, k in zip(accent, card)
        )
        draw.ellipse((mid_x - r, icon_cy - r, mid_x + r, icon_cy + r), fill=tint)
        choice = int(rng.integers(0, len(ICONS) + 2))
        sprite = _drawn_shield(icon_size, accent) if choice >= len(ICONS) else emoji_image(ICONS[choice], icon_size)
        canvas.paste_rgba(image, sprite, (mid_x - sprite.width // 2, icon_cy - sprite.height // 2))

        # Title and a one-line hint; the hint points at the page's button without drawing one.
        title = TITLES[int(rng.integers(len(TITLES)))]
        subtitle = SUBTITLES[int(rng.integers(len(SUBTITLES)))]
        title_y = icon_cy + r + 28
        size = 30
        while text_font(size, True).getlength(title) > cw - 40:
            size -= 2
        centered_text(draw, (mid_x, title_y), title, size, fill=ink)
        size = 17
        while text_font(size, False).getlength(subtitle) > cw - 40:
            size -= 1
        centered_text(draw, (mid_x, title_y + 36), subtitle, size, fill=soft, bold=False)
        footer_y = title_y + 72
        draw.line(
            (cx0 + 40, footer_y - 14, cx0 + cw - 40, footer_y - 14),
            fill=tuple((a + b) // 2 for a, b in zip(card, soft)),
            width=1,
        )
        centered_text(draw, (mid_x, footer_y), FOOTERS[int(rng.integers(len(FOOTERS)))], 12, fill=soft, bold=False)

        hold_time = float(HOLD_TIMES[int(rng.integers(len(HOLD_TIMES)))])
        return Generated(
            public={"instruction": self.instruction, "image": "image", "image_size": [w, h]},
            truth={"hold_time": hold_time},
            images={"image": image},
        )
