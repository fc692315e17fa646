"""The live page's data (annotation.live.page.PageData) against what attempt_page_data returns."""

import json
import re
from pathlib import Path

import pytest
from django.test import Client

from annotation.live.frames import MAX_EVENTS, MAX_KEY_TEXT, MAX_POSTED_BATCHES, MAX_TEXT
from annotation.live.page import PageData, attempt_page_data
from annotation.models import Attempt
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
from puzzles.layout import STAGE_H, STAGE_W
from tests.live_stream import submit_answer
from tests.puzzles.test_contract import shape_problems


@pytest.mark.parametrize("type_name", ["Slide_Puzzle", "Rotation_Match", "Connect_icon", "Bingo", "Hold_Button"])
def test_page_data_has_exactly_the_declared_keys(open_attempt, type_name):
    attempt, _ = open_attempt(type_name)
    data = attempt_page_data(attempt=attempt, csrf_token="token")
    assert shape_problems(data, PageData, "page") == []
    assert ("piece" in data) == (data["widget"] == "drag")
    assert "study" not in data


def test_page_data_in_a_study_has_the_study_bar(verified, person):
    verified(types=("Dice_Count",), per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=2, time_limit_s=60)
    user, _ = person("ann")
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    attempt = enrollment_next(enrollment=enrollment).attempt
    data = attempt_page_data(attempt=attempt, csrf_token="token")
    assert shape_problems(data, PageData, "page") == []
    assert data["study"]["time_limit_s"] == 60


def test_a_gold_puzzle_looks_like_any_other_in_the_page_data(verified, person):
    """Were gold puzzles marked, a person could take care on those alone and pass quality control."""
    pool = verified(types=("Dice_Count",), per_type=4)
    study = study_create(name="s", split="test", puzzles_per_annotator=1, practice=[pool[0]], gold=[pool[1]])
    user, _ = person("ann")
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    bars = {}
    while (step := enrollment_next(enrollment=enrollment)).kind == "attempt":
        bars[step.attempt.purpose] = attempt_page_data(attempt=step.attempt, csrf_token="token")["study"]
        submit_answer(Attempt.objects.get(pk=step.attempt.pk))
    assert set(bars) == {"practice", "gold", "scored"}
    assert bars["practice"]["practice"] is True
    assert bars["gold"]["practice"] is False and bars["gold"].keys() == bars["scored"].keys()
    assert "purpose" not in bars["gold"] and "gold" not in json.dumps(bars["gold"])


def test_the_stats_bar_counts_the_participants_answers_and_practice_apart(verified, person):
    """Practice is not the study: the bar on the study's pages counts the participant's answers in
    it, and a practice page counts the practice before it."""
    pool = verified(types=("Dice_Count",), per_type=4)
    study = study_create(name="s", split="test", puzzles_per_annotator=2, practice=pool[:2])
    user, _ = person("ann")
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    client = Client()
    client.force_login(user)
    bars = []
    while (step := enrollment_next(enrollment=enrollment)).kind == "attempt":
        data = client.get(f"/play/{step.attempt.uid}/data/").json()
        bars.append((step.attempt.purpose, data["stats"]["total"]))
        submit_answer(Attempt.objects.get(pk=step.attempt.pk))
    assert bars == [("practice", 0), ("practice", 1), ("scored", 0), ("scored", 1)]


# --- the page's sizes and limits come from the page data, never from a copy in the scripts -----
ARENA_JS = Path(__file__).resolve().parents[2] / "static" / "arena"
PAGE_SCRIPTS = ("play.js", "stage.js", "widgets.js", "events.js", "device.js")
# The server's numbers the page obeys, by where the page reads them.
SERVER_NUMBERS = {
    "layout.stage.w / device_check.stage.w": STAGE_W,
    "layout.stage.h / device_check.stage.h": STAGE_H,
    "batch_max": MAX_EVENTS,
    "post_max": MAX_POSTED_BATCHES,
    "key_max": MAX_KEY_TEXT,
    "text_max": MAX_TEXT,
}
# The page's own constants that happen to share a value with one of them (no copy of it).
OWN_CONSTANTS = re.compile(r"^const (WINDOW|MIN_DELAY) = \d+;")


def script_code(name: str) -> list[str]:
    """The script's lines with its comments blanked (a comment may name a size; code may not)."""
    source = re.sub(r"/\*.*?\*/", "", (ARENA_JS / name).read_text(encoding="utf-8"), flags=re.S)
    return [re.sub(r"(^|\s)//.*$", "", line) for line in source.splitlines()]


@pytest.mark.parametrize("name", PAGE_SCRIPTS)
def test_the_page_scripts_hold_no_copy_of_the_servers_sizes_and_limits(name):
    copies = [
        f"{name}:{number}: {line.strip()} (read {key} from the page data)"
        for number, line in enumerate(script_code(name), start=1)
        if not OWN_CONSTANTS.match(line.strip())
        for key, value in SERVER_NUMBERS.items()
        if re.search(rf"(?<![\w.]){value}(?![\w.])", line)
    ]
    assert not copies, "\n".join(copies)


def test_the_page_data_carries_the_limits_the_server_enforces(open_attempt):
    attempt, _ = open_attempt("Dice_Count")
    data = attempt_page_data(attempt=attempt, csrf_token="token")
    assert (data["batch_max"], data["key_max"], data["text_max"]) == (MAX_EVENTS, MAX_KEY_TEXT, MAX_TEXT)
    assert data["post_max"] == MAX_POSTED_BATCHES
    assert data["layout"]["stage"] == {"w": STAGE_W, "h": STAGE_H}


def test_the_join_page_gives_the_device_check_the_stage_size(verified):
    verified(types=("Dice_Count",), per_type=1)
    study = study_create(name="s", split="test", puzzles_per_annotator=1)
    page = Client().get(f"/s/{study.token}/").content.decode()
    found = re.search(r'<script id="device-check-data" type="application/json">(.*?)</script>', page)
    assert found, "no device-check-data on the join page"
    assert json.loads(found.group(1)) == {"stage": {"w": STAGE_W, "h": STAGE_H}}
