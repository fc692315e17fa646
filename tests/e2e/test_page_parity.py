"""The live page is the published CaptchaArena page: every type rendered at 1280x1080 (as an agent
sees it) puts each element a person or agent sees or acts on within 8 px of the box measured on
the published page (published_page_boxes.json: an extract of
../shared/reference/captchaarena-page/boxes.json beside the checkout).

Each puzzle is one of ours given the natural sizes of the puzzle measured there (its images,
reference, piece and grid): the published layout is a function of those sizes, so the same sizes
must give the same boxes. Set PAGE_PARITY_SHOTS=DIR to keep a screenshot of each page there
(docs/page-parity/ holds the ones looked at beside the references).
"""

import json
import os
from pathlib import Path

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from annotation.agents.browser import chromium, open_attempt, signed_in_context
from annotation.live.attempts import attempt_start
from annotation.models import Participant
from puzzles.models import Puzzle
from puzzles.registry import get_type, type_names

from .conftest import run

REFERENCE = Path(__file__).with_name("published_page_boxes.json")
TOLERANCE_PX = 8

# The measured page's element keys for each data-role.
ROLE_KEYS = {
    "instruction": ("instruction",),
    "image": ("image", "object_image", "option_image"),
    "reference": ("reference_image",),
    "prev": ("arrow_left",),
    "next": ("arrow_right",),
    "slider": ("slider_handle",),
    "piece": ("slide_piece_img",),
    "hold": ("hold_button",),
    "reset": ("reset_button",),
    "text": ("text_input",),
    "submit": ("submit",),
}

READ_BOXES = """() => [...document.querySelectorAll('#stage [data-role]')].map(el => {
  const r = el.getBoundingClientRect();
  return {role: el.dataset.role, index: el.dataset.index ?? null, box: [r.x, r.y, r.width, r.height].map(Math.round)};
})"""


def expected_boxes(measured: dict, frame: dict) -> dict[tuple[str, int | None], tuple[int, ...]]:
    """(role, cell index) -> x, y, w, h on the published page."""
    box = lambda b: (b["x"], b["y"], b["w"], b["h"])  # noqa: E731
    elements = measured["elements"]
    out = {("stats", None): box(frame["stats_bar"]), ("steps", None): box(frame["stars_box"])}
    for role, keys in ROLE_KEYS.items():
        for key in keys:
            if key in elements:
                out[(role, None)] = box(elements[key])
    for index, cell in enumerate(elements.get("cells", [])):
        out[("cell", index)] = box(cell)
    return out


def measured_sizes(measured: dict) -> dict:
    """The public fields that fix the layout, as the measured puzzle had them."""
    natural = {image["role"]: image["natural"] for image in measured["images"]}
    public = {}
    for key in ("image", "object_image", "option_image"):
        if key in natural:
            public["image_size"] = natural[key]
    if "reference_image" in natural:
        public["reference_size"] = natural["reference_image"]
    cells = len(measured["elements"].get("cells", []))
    if cells == 36:
        public["grid_size"] = [6, 6]
    if "slide_piece_img" in natural:
        piece, image = measured["elements"]["slide_piece_img"], measured["elements"]["image"]
        scale = image["w"] / public["image_size"][0]
        public["piece_size"] = natural["slide_piece_img"]
        public["start_position"] = [0, (piece["y"] - image["y"]) / scale]
    return public


@sync_to_async
def measured_puzzle(puzzle_type: str, measured: dict) -> Puzzle:
    puzzle = Puzzle.objects.get(type=puzzle_type, index=0, dataset="generated:11")
    puzzle.public = {**puzzle.public, **measured_sizes(measured)}
    puzzle.save(update_fields=["public"])
    return puzzle


def agent_view():
    """An agent's participant: its page is the stage alone, at scale 1 in a 1280x1080 window."""
    user = get_user_model().objects.create_user(username="agent-view")
    return user, Participant.objects.create(user=user, kind=Participant.Kind.AGENT, label="parity")


def test_every_type_puts_every_element_where_the_published_page_does(puzzles_of, site):
    boxes = json.loads(REFERENCE.read_text())
    puzzles_of()  # one puzzle of every type
    user, participant = agent_view()
    shots = os.environ.get("PAGE_PARITY_SHOTS")

    async def scenario():
        seen = {}
        async with chromium() as browser:
            context = await signed_in_context(browser, site, user)
            page = await context.new_page()
            for name in type_names():
                puzzle = await measured_puzzle(name, boxes[name])
                attempt = await sync_to_async(attempt_start)(participant=participant, puzzle=puzzle)
                await open_attempt(page, attempt.uid)
                await page.wait_for_function("() => [...document.images].every(i => i.complete)")
                seen[name] = await page.evaluate(READ_BOXES)
                if shots:
                    await page.mouse.move(5, 1075)
                    await page.screenshot(path=str(Path(shots) / f"{name}.png"))
        return seen

    seen = run(scenario())
    problems = []
    for name, elements in seen.items():
        ours = {(e["role"], None if e["index"] is None else int(e["index"])): tuple(e["box"]) for e in elements}
        expected = expected_boxes(boxes[name], boxes["_frame"])
        for key in sorted(set(expected) | set(ours), key=str):
            element = key[0] if key[1] is None else f"{key[0]} {key[1]}"
            if key not in ours:
                problems.append(f"{name}: {element} is missing (published at {expected[key]})")
            elif key not in expected:
                problems.append(f"{name}: {element} at {ours[key]} is not on the published page")
            elif any(abs(a - b) > TOLERANCE_PX for a, b in zip(ours[key], expected[key])):
                problems.append(f"{name}: {element} at {ours[key]}, published at {expected[key]}")
    assert not problems, "\n".join(problems)
    assert len(seen) == 20


# One interaction per type, as measured on the published page, and what it must show: a script
# of (action, arguments) in stage pixels, then a check run in the page that returns "" or what
# is wrong.
INTERACTIONS = {
    "point-click": (
        [("click", 640, 527)],
        """() => { const tag = document.querySelector('#stage .click-at');
          const ok = tag && !tag.hidden && tag.textContent === '(322,242)';
          return ok ? '' : 'no "(322,242)" by the dot: ' + tag?.textContent; }""",
    ),
    "point-dot": (
        [("click", 640, 465)],
        """() => { const dot = document.querySelector('#stage .dot');
          if (!dot || dot.hidden) return 'no dot';
          const r = dot.getBoundingClientRect();
          const off = Math.abs(r.x + r.width / 2 - 640) > 1 || Math.abs(r.y + r.height / 2 - 465) > 1;
          if (off) return 'the dot is not on the click';
          return document.querySelector('#stage [data-role=submit]').disabled ? 'Submit still disabled' : ''; }""",
    ),
    "points": (
        [("click", 640, 680)],
        """() => { const marker = document.querySelector('#stage .marker');
          const counter = document.querySelector('#stage .label.clicks').textContent;
          if (!marker || marker.textContent !== '1') return 'no numbered marker';
          if (counter !== 'Clicks: 1') return 'the counter reads ' + counter;
          const submit = document.querySelector('#stage [data-role=submit]');
          return submit.disabled ? 'Submit Order still disabled' : ''; }""",
    ),
    "cells": (
        [("cell", 0)],
        """() => document.querySelector('#stage [data-role=cell][data-index="0"]').classList.contains('on') ? ''
          : 'the cell is not selected'""",
    ),
    "swap": (
        [("cell", 0)],
        """() => document.querySelector('#stage [data-role=cell][data-index="0"]').classList.contains('picked') ? ''
          : 'the cell is not picked'""",
    ),
    "cycle": (
        [("role", "next")],
        """() => { const dots = [...document.querySelectorAll('#stage .option-dot')];
          return dots.findIndex(d => d.classList.contains('active')) === 1 ? '' : 'the second dot is not active'; }""",
    ),
    "drag": (
        [("slide", 100)],  # measured: the handle +100 px moved the piece +96 (a 500 px background)
        """() => { const handle = document.querySelector('#stage [data-role=slider]').getBoundingClientRect();
          const piece = document.querySelector('#stage [data-role=piece]').getBoundingClientRect();
          return Math.round(handle.x) === 393 && Math.abs(piece.x - 388) <= 1 ? ''
            : `handle at ${handle.x}, piece at ${piece.x}`; }""",
    ),
    "text": (
        [("type", "12")],
        "() => document.querySelector('#stage [data-role=text]').value === '12' ? '' : 'the box does not read 12'",
    ),
}


def interaction_of(puzzle_type: str, widget: str) -> str:
    if widget == "point":
        return "point-click" if puzzle_type != "Place_Dot" else "point-dot"
    return {"option": "cycle", "rotate": "cycle"}.get(widget, widget)


async def interact(page, step) -> None:
    kind, *args = step
    if kind == "click":
        await page.mouse.click(*args)
    elif kind in ("cell", "role"):
        selector = (
            f'#stage [data-role=cell][data-index="{args[0]}"]' if kind == "cell" else f"#stage [data-role={args[0]}]"
        )
        await page.click(selector)
    elif kind == "slide":
        box = await page.locator("#stage [data-role=slider]").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        await page.mouse.move(x, y)
        await page.mouse.down()
        await page.mouse.move(x + args[0], y, steps=10)
        await page.mouse.up()
    elif kind == "type":
        await page.click("#stage [data-role=text]")
        await page.keyboard.type(args[0])


def test_one_interaction_shows_what_the_published_page_shows(puzzles_of, site):
    boxes = json.loads(REFERENCE.read_text())
    puzzles_of()
    user, participant = agent_view()
    shots = os.environ.get("PAGE_PARITY_SHOTS")

    async def scenario():
        problems = []
        async with chromium() as browser:
            context = await signed_in_context(browser, site, user)
            page = await context.new_page()
            for name in type_names():
                puzzle = await measured_puzzle(name, boxes[name])
                widget = get_type(name).widget
                if widget == "hold":
                    continue  # its feedback comes from the server while held: test_hold_progress_shows_while_held
                attempt = await sync_to_async(attempt_start)(participant=participant, puzzle=puzzle)
                await open_attempt(page, attempt.uid)
                steps, check = INTERACTIONS[interaction_of(name, widget)]
                for step in steps:
                    await interact(page, step)
                await page.wait_for_timeout(150)
                problem = await page.evaluate(check)
                if problem:
                    problems.append(f"{name}: {problem}")
                if shots:
                    await page.mouse.move(5, 1075)
                    await page.screenshot(path=str(Path(shots) / f"{name}-after.png"))
        return problems

    problems = run(scenario())
    assert not problems, "\n".join(problems)


def test_hold_progress_shows_while_held(puzzles_of, site):
    """The HOLD button darkens while pressed and its bar grows with the server's progress."""
    puzzles_of("Hold_Button")
    user, participant = agent_view()
    puzzle = Puzzle.objects.get(type="Hold_Button", index=0, dataset="generated:11")

    async def scenario():
        async with chromium() as browser:
            context = await signed_in_context(browser, site, user)
            page = await context.new_page()
            attempt = await sync_to_async(attempt_start)(participant=participant, puzzle=puzzle)
            await open_attempt(page, attempt.uid)
            box = await page.locator("#stage [data-role=hold]").bounding_box()
            await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            await page.mouse.down()
            await page.wait_for_function("() => document.querySelector('#stage .hold .bar').offsetWidth > 20")
            held = await page.evaluate(
                "() => [document.querySelector('#stage .hold').classList.contains('holding'),"
                " getComputedStyle(document.querySelector('#stage .hold .bar')).height]"
            )
            await page.mouse.up()
            return held

    assert run(scenario()) == [True, "8px"]
