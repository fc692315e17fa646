"""Everything an annotator's page fetches or receives, searched for the truth."""

import json
import re

import pytest

from annotation.agents.browser import perform, wait_submitted

from .conftest import chromium, page_for, run
from .test_live_page import reference_actions

pytestmark = pytest.mark.browser

PAGE_DATA_KEYS = {
    "attempt",
    "widget",
    "auto_submit",
    "instruction",
    "layout",
    "images",
    "flag_reasons",
    "flag_note_max",
    "text_max",
    "key_max",
    "batch_max",
    "post_max",
    "seq_block",
    "beat_ms",
    "play_url",
    "play_data_url",
    "socket",
    "events_url",
    "csrf",
    "submitted",
    "next_seq",
    "acked",
    "piece",
    "flag_url",
    "study",
    "single_choice",
    "person",
    "show_verdict",
    "stats",
}
SERVER_FRAMES = {"ack", "hold", "submitted", "error"}
# Every key the page data may hold at any depth (docs/events.md): a whitelist, so nothing new
# can slip in unnoticed.
NESTED_KEYS = PAGE_DATA_KEYS | {
    # the layout (puzzles/layout.py): the published page's boxes and labels
    "stage",
    "family",
    "steps",
    "title",
    "steps_box",
    "card",
    "instruction_style",
    "result",
    "cells",
    "submit_label",
    "labels",
    "text",
    "dots",
    "slider",
    "handle_range",
    "piece_range",
    "piece",
    "track",
    "reset",
    "border",
    "correct",  # the stats bar's count of earlier answers
    "image",
    "reference",
    "grid",
    "controls",
    "x",
    "y",
    "w",
    "h",
    "natural_w",
    "natural_h",
    "submit",
    "prev",
    "next",
    "hold",
    "options",
    "rotations",
    *(str(angle) for angle in range(0, 360, 45)),
    "size",
    "start",
    "name",
    "practice",  # never whether a puzzle is gold
    "practice_left",
    "done",
    "total",
    "time_limit_s",
    "elapsed_ms",
    "next_url",
    "pause_url",  # a study's bar
}


def secrets_of(puzzle) -> tuple[set[str], list[str], list[str]]:
    """Truth-only keys; truth-only words (for data) and coordinate pairs (for everything)."""
    keys = set(puzzle.truth) - set(puzzle.public)
    words, pairs = [], []
    for key in keys - {"mask"}:  # "mask" only names which stored mask to use
        value = puzzle.truth[key]
        if isinstance(value, str) and len(value) >= 4 and value not in json.dumps(puzzle.public):
            words.append(value)
        if (
            isinstance(value, list)
            and len(value) == 2
            and all(isinstance(v, (int, float)) for v in value)
            and min(value) >= 10
        ):  # a point as JSON writes it (small pairs match too much by chance)
            pairs.append(f"{value[0]}, {value[1]}")
    return keys, words, pairs


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

    static_versions: dict[str, set[bytes]] = {}
    for puzzle, (bodies, sent, received, page_data) in run(scenario()):
        keys, words, pairs = secrets_of(puzzle)
        assert set(page_data) <= PAGE_DATA_KEYS, puzzle.type
        assert walk_keys(page_data) <= NESTED_KEYS, (puzzle.type, walk_keys(page_data) - NESTED_KEYS)
        assert any(url.endswith(f"/play/{page_data['attempt']}/") for url in bodies)
        asset_urls = {a.file.url for a in puzzle.assets.all()}
        for url, body in bodies.items():
            path = re.sub(r"^https?://[^/]+", "", url)
            assert path.startswith(("/play/", "/static/", "/attempts/", "/favicon")) or path in asset_urls, url
            if path.startswith("/static/"):
                static_versions.setdefault(path, set()).add(body)
                continue
            text = body.decode("utf-8", "replace")
            for value in words + pairs:
                assert value not in text, (puzzle.type, url, value)
        for frame in received:
            assert not any(value in frame for value in words + pairs), (puzzle.type, frame)
            message = json.loads(frame)
            assert message["type"] in SERVER_FRAMES
            assert not walk_keys(message) & (keys - {"type"}), (puzzle.type, message)
            if message["type"] == "submitted":
                assert message["verdict"] is None  # verdicts are not shown by default
        for frame in sent:
            assert not walk_keys(json.loads(frame)) & {"correct", "reward", "answer", "duration", "duration_ms"}
        assert received and sent, puzzle.type
    # Scripts and styles are the same bytes for every puzzle, so they can carry no puzzle's truth.
    assert static_versions and all(len(versions) == 1 for versions in static_versions.values())


def test_masks_are_never_files_and_the_media_folder_holds_public_images_only(puzzles_of, settings):
    puzzles = puzzles_of("Geometry_Click", "Pick_Area", "Misleading_Click")
    files = {p.name for p in settings.MEDIA_ROOT.rglob("*") if p.is_file()}
    public = {a.file.name.rsplit("/", 1)[-1] for p in puzzles for a in p.assets.all()}
    assert files == public
    assert all(p.assets.count() == 1 for p in puzzles)  # the image; the mask stays in the database
