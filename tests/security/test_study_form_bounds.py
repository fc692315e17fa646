"""The staff's study form: a number out of any sensible range (or past the database column) is a
form error shown on the page, never a 500. Posted through the real view as a staff user."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Study

pytestmark = pytest.mark.django_db

VALID = {
    "name": "Bounds",
    "split": "test",
    "puzzles_per_annotator": 1,
    "overlap": 1,
    "order": "shuffled",
    "seed": 0,
    "attempts_per_puzzle": 1,
    "dataset": "",
    "show_verdict": "on",  # so k > 1 is allowed and reaches its own bound
}
NUMBERS = ["per_type", "puzzles_per_annotator", "overlap", "seed", "time_limit_s", "attempts_per_puzzle",
           "duration_minutes", "quota_Dice_Count"]  # fmt: skip
OUT_OF_RANGE = [str(10**30), str(2**31), str(-(10**30)), "NaN", "inf", "1e400", "1" + "0" * 5000]


@pytest.fixture
def staff(verified) -> Client:
    verified(types=("Dice_Count",), per_type=2)
    client = Client(raise_request_exception=False)
    client.force_login(get_user_model().objects.create_user("staff", is_staff=True))
    return client


def test_the_valid_form_makes_a_draft(staff):
    assert staff.post("/studies/new/", VALID).status_code == 302


@pytest.mark.parametrize("field", NUMBERS)
def test_an_out_of_range_number_is_a_form_error_never_a_500(staff, field):
    answers = {value[:12]: staff.post("/studies/new/", {**VALID, field: value}) for value in OUT_OF_RANGE}
    assert {value: r.status_code for value, r in answers.items()} == dict.fromkeys(answers, 200)
    for response in answers.values():
        assert "The study was not saved." in response.content.decode()
    assert not Study.objects.exists()
