"""Studies over hosted benchmarks (docs/studies.md, "A hosted benchmark in a study"), without a
browser: only page-checked puzzles are offered, our types and hosted families mix in one pool,
and the staff's study form offers the hosted families beside ours.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.live.page import attempt_page_data
from annotation.models import Attempt, Slot, Study
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import StudySetupError, study_create
from puzzles.models import Puzzle
from puzzles.services import bank_generate
from tests.hosted.conftest import BENCHMARK

pytestmark = pytest.mark.django_db(transaction=True)
DICE = f"{BENCHMARK}:Dice_Roll_Path"


def ours(per_type: int = 2) -> None:
    bank_generate(split="test", per_type=per_type, types=["Dice_Count"], bank_seed=41, workers=1)
    Puzzle.objects.filter(dataset="generated:41").update(status=Puzzle.Status.VERIFIED)


def page_checked(family: str) -> None:
    """As `benchmarks check` leaves a family whose page accepted its truth (its browser tests do it
    for real: test_proxy_browser.py, test_study_browser.py)."""
    Puzzle.objects.filter(type=f"{BENCHMARK}:{family}").update(status=Puzzle.Status.VERIFIED)


def test_a_hosted_family_is_offered_only_once_its_page_check_passed(benchmark):
    with pytest.raises(StudySetupError, match="no replay-verified puzzles"):
        study_create(name="drafts", split="test", types=[DICE], puzzles_per_annotator=1)
    page_checked("Dice_Roll_Path")
    study = study_create(name="checked", split="test", types=[DICE], puzzles_per_annotator=1)
    assert set(study.slots.values_list("puzzle__type", flat=True)) == {DICE}


def test_one_study_mixes_our_types_and_a_hosted_benchmarks_families(benchmark, settings):
    ours()
    page_checked("Dice_Roll_Path")
    study = study_create(
        name="mixed", split="test", types=["Dice_Count", DICE], puzzles_per_annotator=4, order=Study.Order.BLOCKED
    )
    assert study.types == ["Dice_Count", DICE]  # ours by their canonical names, hosted ones as given
    user = get_user_model().objects.create_user(username="ann", password="pw")
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    shown = []
    for _ in range(4):  # the person's run, each answer taken as given
        attempt = enrollment_next(enrollment=enrollment).attempt
        data = attempt_page_data(attempt=attempt, csrf_token="t", site_url="http://arena.example:8000/")
        shown.append((attempt.puzzle.type, "hosted" in data, "layout" in data))
        if attempt.puzzle.type == DICE:
            frame = data["hosted"]["frame"]
            assert frame.startswith("http://a-") and ".localhost:8000/?type=Dice_Roll_Path" in frame
        Attempt.objects.filter(pk=attempt.pk).update(submitted_at=timezone.now(), correct=True)
        Slot.objects.filter(pk=attempt.slot_id).update(done=True)
    assert sorted(set(shown)) == [("Dice_Count", False, True), (DICE, True, False)]  # ours: our stage


def test_the_study_form_offers_hosted_families_beside_ours(benchmark):
    ours(per_type=1)
    page_checked("Red_Dot")
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("staff", is_staff=True))
    page = staff.get("/studies/new/").content.decode()
    assert f"{BENCHMARK}:Red_Dot" in page and f"{BENCHMARK}:Dice_Roll_Path" not in page  # not page-checked
    form = {"name": "Form mix", "split": "test", "puzzles_per_annotator": 2, "overlap": 1, "order": "blocked"}
    created = staff.post(
        "/studies/new/",
        {**form, "seed": 0, "attempts_per_puzzle": 1, "dataset": "", "types": ["Dice_Count", f"{BENCHMARK}:Red_Dot"]},
    )
    assert created.status_code == 302, created.content.decode()[:2000]
    study = Study.objects.get(name="Form mix")
    assert set(study.slots.values_list("puzzle__type", flat=True)) == {"Dice_Count", f"{BENCHMARK}:Red_Dot"}
