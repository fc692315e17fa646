"""Emoji glyphs as RGBA images (Noto Color Emoji, SIL Open Font License 1.1)."""

from functools import cache, lru_cache

from PIL import Image, ImageDraw

from .fonts import emoji_font

ANIMALS = {
    "rooster": "🐓",
    "dog": "🐕",
    "cat": "🐈",
    "horse": "🐎",
    "cow": "🐄",
    "pig": "🐖",
    "sheep": "🐑",
    "goat": "🐐",
    "rabbit": "🐇",
    "mouse": "🐁",
    "elephant": "🐘",
    "camel": "🐪",
    "giraffe": "🦒",
    "zebra": "🦓",
    "lion": "🦁",
    "tiger": "🐅",
    "leopard": "🐆",
    "bear": "🐻",
    "panda": "🐼",
    "koala": "🐨",
    "monkey": "🐒",
    "gorilla": "🦍",
    "fox": "🦊",
    "wolf": "🐺",
    "deer": "🦌",
    "kangaroo": "🦘",
    "hedgehog": "🦔",
    "bat": "🦇",
    "owl": "🦉",
    "eagle": "🦅",
    "duck": "🦆",
    "swan": "🦢",
    "parrot": "🦜",
    "penguin": "🐧",
    "flamingo": "🦩",
    "turkey": "🦃",
    "frog": "🐸",
    "turtle": "🐢",
    "snake": "🐍",
    "lizard": "🦎",
    "crocodile": "🐊",
    "whale": "🐋",
    "dolphin": "🐬",
    "fish": "🐟",
    "octopus": "🐙",
    "crab": "🦀",
    "snail": "🐌",
    "butterfly": "🦋",
    "bee": "🐝",
    "ladybug": "🐞",
    "spider": "🕷",
    "squirrel": "🐿",
    "hippopotamus": "🦛",
    "rhinoceros": "🦏",
    "otter": "🦦",
    "sloth": "🦥",
    "peacock": "🦚",
    "dodo": "🦤",
    "bison": "🦬",
}

OBJECTS = {
    "bicycle": "🚲",
    "car": "🚗",
    "bus": "🚌",
    "airplane": "✈",
    "boat": "⛵",
    "train": "🚆",
    "motorcycle": "🏍",
    "truck": "🚚",
    "umbrella": "☂",
    "key": "🔑",
    "lock": "🔒",
    "bell": "🔔",
    "hammer": "🔨",
    "wrench": "🔧",
    "scissors": "✂",
    "pencil": "✏",
    "book": "📕",
    "lamp": "💡",
    "clock": "⏰",
    "camera": "📷",
    "telephone": "☎",
    "guitar": "🎸",
    "trumpet": "🎺",
    "drum": "🥁",
    "ball": "⚽",
    "basketball": "🏀",
    "kite": "🪁",
    "balloon": "🎈",
    "gift": "🎁",
    "crown": "👑",
    "hat": "🎩",
    "glasses": "👓",
    "shoe": "👟",
    "backpack": "🎒",
    "anchor": "⚓",
    "rocket": "🚀",
    "apple": "🍎",
    "banana": "🍌",
    "grapes": "🍇",
    "cherries": "🍒",
    "pineapple": "🍍",
    "carrot": "🥕",
    "mushroom": "🍄",
    "cactus": "🌵",
    "tree": "🌳",
    "flower": "🌻",
    "cup": "☕",
    "pizza": "🍕",
    "cake": "🎂",
    "candle": "🕯",
    "axe": "🪓",
    "magnet": "🧲",
    "toolbox": "🧰",
    "bucket": "🪣",
    "chair": "🪑",
    "door": "🚪",
    "house": "🏠",
    "tent": "⛺",
}


@cache
def _glyph(char: str) -> Image.Image:
    canvas = Image.new("RGBA", (160, 160), (0, 0, 0, 0))
    ImageDraw.Draw(canvas).text((10, 10), char, font=emoji_font(), embedded_color=True)
    box = canvas.getbbox()
    if box is None:
        raise ValueError(f"the emoji font has no glyph for {char!r}")
    return canvas.crop(box)


@lru_cache(maxsize=4096)  # bounded: generators ask for many sizes across a 50,000-puzzle bank
def emoji_image(char: str, size: int) -> Image.Image:
    """The glyph scaled so its longer side is `size` px. Shared and cached: do not mutate it."""
    glyph = _glyph(char)
    scale = size / max(glyph.size)
    target = (max(1, round(glyph.width * scale)), max(1, round(glyph.height * scale)))
    return glyph.resize(target, Image.Resampling.LANCZOS)
