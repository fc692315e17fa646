"""The live page's data (annotation.live.page.PageData) against what attempt_page_data returns."""

import pytest

from annotation.live.page import PageData, attempt_page_data
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create
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
