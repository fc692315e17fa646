"""How an answer is entered on a peer's page, as a person would, per input type (the `input_type` of
the peer's get_puzzle), as data: which element takes it and how. The page check (pagecheck.py) plays
a puzzle's stored `truth.answers` through these with real mouse and keyboard input in Chromium.

The selectors are those of Next-Gen's page (its static/js/script.js); the stand-in server of the
tests builds the same DOM. An input type with no entry here, or an answer the replay cannot find on
the page, is CannotPlay: the family is set aside with that reason, not failed.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Frame, Page


class CannotPlay(Exception):
    """This answer cannot be entered on this page by the replay yet; the message says why."""


@dataclass(frozen=True)
class Entry:
    kind: str  # "type": text into a field; "click_at": a point in an area; "click_steps": one point per
    # step, each when its target shows; "drag_pieces": each piece dragged to its grid cell
    target: str = ""  # the field or the area clicked in
    submit: str = ""  # clicked once the answer is in ("" when the entry itself submits)
    step_shown: str = ""  # click_steps: the target of the step, visible when it may be clicked
    piece: str = ""  # drag_pieces: the tray's pieces
    cell: str = ""  # drag_pieces: a grid cell, by {row} and {col}
    # drag_pieces: a person tells pieces apart by their picture. The replay reads a picture only when
    # it is legible text naming the piece (the stand-in's); a real image cannot be read here yet.
    picture_label: str = ""


ENTRIES: dict[str, Entry] = {
    "number": Entry("type", target="#user-answer", submit="#submit-answer"),
    "text": Entry("type", target="#user-answer", submit="#submit-answer"),
    "spooky_size_click": Entry("click_at", target=".spooky-size-click-area"),
    "red_dot_click": Entry("click_steps", target=".red-dot-area", step_shown=".red-dot:not(.red-dot-hidden)"),
    "jigsaw_puzzle": Entry(
        "drag_pieces",
        submit="#submit-answer",
        piece=".jigsaw-tray-piece",
        cell='.jigsaw-grid-cell[data-row="{row}"][data-col="{col}"]',
        picture_label=r"piece \d+/(\d+)",
    ),
}
SHOWN_TIMEOUT_MS = 30_000


def entry_for(input_type: Any) -> Entry:
    entry = ENTRIES.get(str(input_type))
    if entry is None:
        raise CannotPlay(f"no way to enter a {input_type!r} answer on its page yet (annotation/hosted/entries.py)")
    return entry


async def enter(page: Page, entry: Entry, answers: list[Any], check_path: str, within: Frame | None = None) -> None:
    """Enter the answers on the page (in the frame `within`, when the peer's page is framed, as on
    our play page); returns once the page's last check_answer was answered."""
    shown: Page | Frame = within or page
    if entry.kind == "click_steps":
        for answer in answers:
            await shown.wait_for_selector(entry.step_shown, timeout=SHOWN_TIMEOUT_MS)
            async with _checked(page, check_path):
                await _click_in(page, shown, entry.target, answer["position"])
        return
    [answer] = answers
    if entry.kind == "type":
        await shown.click(entry.target, timeout=SHOWN_TIMEOUT_MS)
        await page.keyboard.type(str(answer))
    elif entry.kind == "drag_pieces":
        await _drag_pieces(page, shown, entry, answer)
    if entry.kind == "click_at":
        async with _checked(page, check_path):
            await _click_in(page, shown, entry.target, answer["position"])
        return
    async with _checked(page, check_path):
        await shown.click(entry.submit, timeout=SHOWN_TIMEOUT_MS)


def _checked(page: Page, check_path: str) -> Any:
    return page.expect_response(
        lambda response: urlsplit(response.url).path == check_path and response.request.method == "POST",
        timeout=SHOWN_TIMEOUT_MS,
    )


async def _click_in(page: Page, shown: Page | Frame, selector: str, position: dict[str, Any]) -> None:
    """A click at the answer's point, in the area's own pixels from its top-left corner (a box is
    the main page's, framed or not: the mouse clicks there)."""
    area = await shown.wait_for_selector(selector, timeout=SHOWN_TIMEOUT_MS)
    assert area is not None
    box = await area.bounding_box()
    if box is None:
        raise CannotPlay(f"{selector} is not shown")
    await page.mouse.click(box["x"] + float(position["x"]), box["y"] + float(position["y"]))


async def _drag_pieces(page: Page, shown: Page | Frame, entry: Entry, placements: list[dict[str, Any]]) -> None:
    await shown.wait_for_selector(entry.piece, timeout=SHOWN_TIMEOUT_MS)
    found = await shown.query_selector_all(entry.piece)
    pieces = {await _picture_label(element, entry): element for element in found}
    for placement in placements:
        piece = pieces.get(int(placement["piece_index"]))
        if piece is None:
            raise CannotPlay("a piece is told apart only by its picture, which the replay cannot read yet")
        cell = entry.cell.format(row=placement["grid_row"], col=placement["grid_col"])
        await _drag(page, shown, piece, cell)


async def _drag(page: Page, shown: Page | Frame, piece: Any, cell: str) -> None:
    start, end = await piece.bounding_box(), await shown.locator(cell).bounding_box()
    if start is None or end is None:
        raise CannotPlay("a piece or its cell is not shown")
    await page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    await page.mouse.down()
    await page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=8)
    await page.mouse.up()


async def _picture_label(element: Any, entry: Entry) -> int | None:
    """The piece its picture names, when the picture is legible text; None otherwise."""
    source = await element.evaluate("piece => (piece.querySelector('img') || piece).getAttribute('src') || ''")
    if not source.startswith("data:") or ";base64," not in source:
        return None
    try:
        text = base64.b64decode(source.split(",", 1)[1]).decode("utf-8")
    except ValueError:
        return None
    found = re.fullmatch(entry.picture_label, text)
    return int(found[1]) if found else None
