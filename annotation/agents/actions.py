"""A model's call, done on the live page with real input, with the published client's timings.

Every protocol ends here: `applied` turns a call's arguments into what is executed (the published
coercions: a list in x becomes x and y, numbers in strings become integers, truncated), `execute`
acts and answers with the published result text. The waits are the published ones, because they
decide what the next screenshot shows: 500 ms after a click or a drag, a drag in 10 steps of
30 ms, 50 ms per typed character, a hold of 10 s unless the model says otherwise (at most 60 s),
and 800 ms after every action before the screenshot (SETTLE_MS, waited by the episode).

A call that cannot be executed (a coordinate that is no number, a missing parameter, an unknown
button) raises BadCall: the published client crashes there; the protocol decides what follows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Page

COORDINATES = ("x", "y", "start_x", "start_y", "end_x", "end_y")
PAIRS = (("x", "y"), ("start_x", "start_y"), ("end_x", "end_y"))
BUTTONS = ("left", "right", "middle")
SETTLE_MS = 800  # after every action but a screenshot, before the screenshot
CLICK_WAIT_MS = 500
KEY_WAIT_MS = 300
TYPE_DELAY_MS = 50
DRAG_STEPS, DRAG_STEP_MS = 10, 30
HOLD_DEFAULT_MS, HOLD_MAX_MS = 10_000, 60_000
SCROLL_PX, SCROLL_WAIT_MS = 500, 250
REQUIRED = {
    "click": ("x", "y"),
    "mouse_down": ("x", "y"),
    "mouse_up": ("x", "y"),
    "mouse_move": ("x", "y"),
    "drag": ("start_x", "start_y", "end_x", "end_y"),
    "type_text": ("text",),
    "press_key": ("key",),
}


class BadCall(ValueError):
    """A call that cannot be executed as given; the message says what is wrong."""


def applied(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as executed: lists flattened, coordinates as integers (truncated, as
    published), the required ones present, the button and the hold duration usable."""
    args = dict(arguments)
    for x_key, y_key in PAIRS:
        value = args.get(x_key)
        if isinstance(value, (list, tuple)) and value:
            args[x_key] = value[0]
            if y_key not in args and len(value) >= 2:
                args[y_key] = value[1]
    for key in COORDINATES:
        if key in args:
            args[key] = _integer(key, args[key])
    missing = [key for key in REQUIRED.get(name, ()) if key not in args]
    if missing:
        raise BadCall(f"{name} needs {', '.join(missing)}")
    if "button" in args and args["button"] not in BUTTONS:
        raise BadCall(f"button must be one of {', '.join(BUTTONS)}, not {args['button']!r}")
    if name == "hold" and "duration_ms" in args:
        args["duration_ms"] = _integer("duration_ms", args["duration_ms"])
    for key in ("text", "key"):
        if key in args and not isinstance(args[key], str):
            args[key] = str(args[key])
    return args


def _integer(key: str, value: Any) -> int:
    if isinstance(value, bool):
        raise BadCall(f"{key} must be a number, not {value!r}")
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        raise BadCall(f"{key} must be a number, not {value!r}") from None


async def execute(page: Page, name: str, args: dict[str, Any]) -> str:
    """Do one call (arguments as `applied` gives them) and answer with the published result text."""
    handler = HANDLERS.get(name)
    if handler is None:
        return f"unknown action: {name}"
    return await handler(page, args)


async def _click(page: Page, args: dict[str, Any]) -> str:
    x, y, button = args["x"], args["y"], args.get("button", "left")
    await page.mouse.click(x, y, button=button)
    await _wait(CLICK_WAIT_MS)
    return f"clicked ({x}, {y}) button={button}"


async def _type_text(page: Page, args: dict[str, Any]) -> str:
    await page.keyboard.type(args["text"], delay=TYPE_DELAY_MS)
    await _wait(KEY_WAIT_MS)
    return f'typed "{args["text"]}"'


async def _press_key(page: Page, args: dict[str, Any]) -> str:
    try:
        await page.keyboard.press(args["key"])
    except Exception as error:  # Playwright's own words on a key it does not know
        raise BadCall(f"unknown key {args['key']!r}: {str(error).splitlines()[0]}") from None
    await _wait(KEY_WAIT_MS)
    return f'pressed key "{args["key"]}"'


async def _drag(page: Page, args: dict[str, Any]) -> str:
    sx, sy, ex, ey = args["start_x"], args["start_y"], args["end_x"], args["end_y"]
    await page.mouse.move(sx, sy)
    await page.mouse.down()
    for step in range(1, DRAG_STEPS + 1):
        # Floor division, as published: a leftward or upward drag rounds towards minus infinity.
        await page.mouse.move(sx + (ex - sx) * step // DRAG_STEPS, sy + (ey - sy) * step // DRAG_STEPS)
        await _wait(DRAG_STEP_MS)
    await page.mouse.up()
    await _wait(CLICK_WAIT_MS)
    return f"dragged ({sx},{sy}) -> ({ex},{ey})"


async def _mouse_down(page: Page, args: dict[str, Any]) -> str:
    x, y, button = args["x"], args["y"], args.get("button", "left")
    await page.mouse.move(x, y)
    await page.mouse.down(button=button)
    await _wait(100)
    return f"mouse_down ({x}, {y}) button={button}"


async def _mouse_up(page: Page, args: dict[str, Any]) -> str:
    x, y, button = args["x"], args["y"], args.get("button", "left")
    await page.mouse.move(x, y)
    await page.mouse.up(button=button)
    await _wait(300)
    return f"mouse_up ({x}, {y}) button={button}"


async def _mouse_move(page: Page, args: dict[str, Any]) -> str:
    await page.mouse.move(args["x"], args["y"])
    await _wait(50)
    return f"mouse_moved ({args['x']}, {args['y']})"


async def _hold(page: Page, args: dict[str, Any]) -> str:
    if "x" not in args or "y" not in args:
        return "hold error: x and y are required"
    x, y, button = args["x"], args["y"], args.get("button", "left")
    duration = max(0, min(args.get("duration_ms", HOLD_DEFAULT_MS), HOLD_MAX_MS))
    await page.mouse.move(x, y)
    await page.mouse.down(button=button)
    await _wait(duration)
    await page.mouse.up(button=button)
    return f"held mouse {button} at ({x}, {y}) for {duration}ms"


async def _scroll(page: Page, args: dict[str, Any]) -> str:
    direction = str(args.get("direction", "down")).lower()
    delta = {"down": (0, SCROLL_PX), "up": (0, -SCROLL_PX), "right": (SCROLL_PX, 0), "left": (-SCROLL_PX, 0)}
    if direction not in delta:
        return f'scroll error: unknown direction "{direction}"'
    dx, dy = delta[direction]
    await page.evaluate("(d) => window.scrollBy({left: d[0], top: d[1], behavior: 'instant'})", [dx, dy])
    await _wait(SCROLL_WAIT_MS)
    return f"scrolled {direction} by {SCROLL_PX}px"


async def _wait(ms: int) -> None:
    await asyncio.sleep(ms / 1000)


HANDLERS: dict[str, Callable[[Page, dict[str, Any]], Awaitable[str]]] = {
    "click": _click,
    "type_text": _type_text,
    "press_key": _press_key,
    "drag": _drag,
    "mouse_down": _mouse_down,
    "mouse_up": _mouse_up,
    "mouse_move": _mouse_move,
    "hold": _hold,
    "scroll": _scroll,
}
