"""The live page is the published CaptchaArena page: every type rendered at 1280x1080 (as an agent
sees it) puts each element a person or agent sees or acts on within 8 px of the box measured on
the published page (published_page_boxes.json: an extract of
/work/shared/reference/captchaarena-page/boxes.json).

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
from puzzles.registry import type_names

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


def test_every_type_puts_every_element_where_the_published_page_does(puzzles_of, site):
    boxes = json.loads(REFERENCE.read_text())
    puzzles_of()  # one puzzle of every type
    user = get_user_model().objects.create_user(username="agent-view")
    participant = Participant.objects.create(user=user, kind=Participant.Kind.AGENT, label="parity")
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
