"""Everything an annotator's page fetches or receives, searched for the truth."""
import json
import re

import pytest

from annotation.runners.browser import perform, wait_submitted
from puzzles.registry import get_type

from .conftest import chromium, page_for, run
from .test_live_page import reference_actions

pytestmark = pytest.mark.browser

PAGE_DATA_KEYS = {"attempt", "widget", "auto_submit", "instruction", "layout", "images", "socket", "events_url",
                  "csrf", "submitted", "next_seq", "piece"}
SERVER_FRAMES = {"ack", "hold", "submitted", "error"}


def secrets_of(puzzle) -> tuple[set[str], list[str]]:
    """Truth-only keys, and truth-only text values and coordinate pairs, as they would be written."""
    keys = set(puzzle.truth) - set(puzzle.public)
    values = []
    for key in keys:
        value = puzzle.truth[key]
        if isinstance(value, str) and len(value) >= 4 and value not in json.dumps(puzzle.public):
            values.append(value)
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
            values.append(f"{value[0]}, {value[1]}")  # a point or size as JSON writes it
    return keys, values


def walk_keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in walk_keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in walk_keys(v)}
    return set()


def test_no_url_or_message_of_the_page_carries_the_truth(site, puzzles_of, annotator, settings):
    puzzles = puzzles_of()
    user, _ = annotator()

    async def visit(browser, puzzle):
        bodies, sent, received = {}, [], []

        async def keep(response):
            try:
                bodies[response.url] = await response.body()
            except Exception:  # redirects and aborted loads have no body
                bodies[response.url] = b""

        def watch(socket):
            socket.on("framesent", lambda payload: sent.append(payload))
            socket.on("framereceived", lambda payload: received.append(payload))

        page, _ = await page_for(browser, site, user, puzzle)
        page.on("response", keep)
        page.on("websocket", watch)
        await page.reload()  # load again with the listeners in place: page, scripts, data, assets
        await page.wait_for_selector("#status[data-state]", state="attached")
        for action in reference_actions(puzzle):
            await perform(page, action)
        await wait_submitted(page, 15)
        page_data = json.loads(await page.locator("#page-data").text_content())
        await page.context.close()
        return bodies, sent, received, page_data

    async def scenario():
        async with chromium() as browser:
            return [(puzzle, await visit(browser, puzzle)) for puzzle in puzzles]

    for puzzle, (bodies, sent, received, page_data) in run(scenario()):
        keys, values = secrets_of(puzzle)
        assert set(page_data) <= PAGE_DATA_KEYS, puzzle.type
        assert not walk_keys(page_data) & keys, puzzle.type
        assert any(url.endswith(f"/play/{page_data['attempt']}/") for url in bodies)
        asset_urls = {a.file.url for a in puzzle.assets.all()}
        for url, body in bodies.items():
            path = re.sub(r"^https?://[^/]+", "", url)
            assert path.startswith(("/play/", "/static/", "/attempts/", "/favicon")) or path in asset_urls, url
            text = body.decode("utf-8", "replace")
            for value in values:
                assert value not in text, (puzzle.type, url, value)
        for frame in received:
            message = json.loads(frame)
            assert message["type"] in SERVER_FRAMES
            assert not walk_keys(message) & (keys - {"type"}), (puzzle.type, message)
            if message["type"] == "submitted":
                assert message["verdict"] is None  # verdicts are not shown by default
        for frame in sent:
            assert not walk_keys(json.loads(frame)) & {"correct", "reward", "answer", "duration", "duration_ms"}
        assert received and sent, puzzle.type


def test_masks_are_never_files_and_the_media_folder_holds_public_images_only(puzzles_of, settings):
    puzzles = puzzles_of("Geometry_Click", "Pick_Area", "Misleading_Click")
    files = {p.name for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()}
    public = {a.file.name.rsplit("/", 1)[-1] for p in puzzles for a in p.assets.all()}
    assert files == public
    assert all(p.assets.count() == 1 for p in puzzles)  # the image; the mask stays in the database
