"""Staff previews (issue 22): any puzzle opens from its "Try it" (pickers, review, the bank's page),
and a study's whole participant flow is walked without an enrolment: nothing counts, and a draft
stays an editable draft."""

import re

import pytest
from django.test import Client

from annotation.models import Attempt, Enrollment, Slot, Study
from annotation.studies.setup import study_create, study_update
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(verified) -> Study:
    pool = verified(types=("Dice_Count",), per_type=6)
    return study_create(
        name="Draft pilot",
        split="test",
        puzzles_per_annotator=2,
        practice=[pool[0]],
        gold=[pool[1]],
        status=Study.Status.DRAFT,
    )


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def walk(staff: Client, study: Study) -> tuple[list[dict], str]:
    """Through the preview as a participant: agree, then each puzzle answered, to the end page.
    Returns each puzzle page's study bar, and the end page."""
    start = staff.get(f"/studies/{study.pk}/preview/")
    assert "I agree, start" in text(start) and 'id="preview-banner"' in text(start)
    where = staff.post(f"/studies/{study.pk}/preview/")["Location"]
    bars = []
    for _ in range(10):
        page = staff.get(where)
        if page.status_code == 200:
            return bars, text(page)
        play = staff.get(page["Location"])
        assert play.status_code == 200, page["Location"]
        bars.append(play.context["page_data"]["study"])
        submit_answer(Attempt.objects.get(uid=play.context["page_data"]["attempt"]), True)
        where = bars[-1]["next_url"]  # the page's Continue
    raise AssertionError("the preview never ended")


def test_a_draft_is_previewed_end_to_end_without_an_enrolment(draft, staff):
    bars, end = walk(staff, draft)
    assert [bar["practice"] for bar in bars] == [True, False, False, False]  # practice, then 2 + gold
    assert [bar["done"] for bar in bars] == [0, 0, 1, 2] and {bar["total"] for bar in bars} == {3}
    assert all(bar["name"] == "Draft pilot (preview)" for bar in bars)
    assert "Thank you: you have finished" in end and draft.completion_code in end and 'id="preview-banner"' in end
    # Nothing of it counts for the study...
    assert not Enrollment.objects.filter(study=draft).exists()
    assert not Attempt.objects.filter(study=draft).exists()
    assert not Slot.objects.filter(study=draft, enrollment__isnull=False).exists()
    assert "Nobody has joined yet" in text(staff.get(f"/studies/{draft.pk}/annotators/"))
    assert staff.get(f"/studies/{draft.pk}/events.jsonl").getvalue() == b""
    assert len(staff.get(f"/studies/{draft.pk}/participants.csv").content.decode().strip().splitlines()) == 1
    # ...and the draft is still a draft whose set-up can change.
    assert Study.objects.get(pk=draft.pk).status == Study.Status.DRAFT
    study_update(draft, split="test", puzzles_per_annotator=1)


def test_a_preview_begins_again_and_its_pause_page_continues_it(draft, staff):
    staff.post(f"/studies/{draft.pk}/preview/")
    first = staff.get(f"/studies/{draft.pk}/preview/next/")["Location"]
    assert staff.get(f"/s/{draft.token}/next/")["Location"] == f"/studies/{draft.pk}/preview/next/"
    assert staff.get(f"/studies/{draft.pk}/preview/next/")["Location"] == first  # the same puzzle again
    staff.post(f"/studies/{draft.pk}/preview/")
    assert staff.get(f"/studies/{draft.pk}/preview/next/")["Location"] != first  # a new walk


def test_only_staff_preview_and_only_their_own_puzzles(draft, staff, person):
    user, _ = person("ann")
    someone = Client()
    someone.force_login(user)
    assert someone.get(f"/studies/{draft.pk}/preview/").status_code == 302  # to sign in
    assert someone.post(f"/studies/{draft.pk}/preview/").status_code == 302
    assert "preview" not in text(someone.get(f"/s/{draft.token}/")).lower()
    invite = text(staff.get(f"/s/{draft.token}/"))
    assert "This study has not started yet" in invite and f"/studies/{draft.pk}/preview/" in invite
    staff.post(f"/studies/{draft.pk}/preview/")
    tried = staff.post(f"/puzzles/{draft.practice.get().uid}/try/")["Location"].split("/")[2]
    assert staff.get(f"/studies/{draft.pk}/preview/play/{tried}/").status_code == 404  # theirs, not the preview's


def test_every_try_it_opens_the_puzzle(draft, staff):
    practice = draft.practice.get()
    form = staff.get(f"/studies/{draft.pk}/edit/").content.decode()
    assert '<form id="try-puzzle" method="post"' in form
    button = re.search(rf'<button type="submit" form="try-puzzle" formaction="(/puzzles/{practice.uid}/try/)"', form)
    assert button, "the picker's Try it is a button of the try form"
    opened = staff.post(button[1])
    assert opened.status_code == 302 and staff.get(opened["Location"]).status_code == 200
    review = staff.get(f"/review/{practice.uid}/").content.decode()
    assert re.search(rf'<form method="post" action="/puzzles/{practice.uid}/try/"', review)
    detail = staff.get(f"/studies/{draft.pk}/").content.decode()
    assert f'action="/puzzles/{practice.uid}/try/"' in detail
    bank = staff.get("/").content.decode()
    assert 'action="/puzzles/types/Dice_Count/try/"' in bank and "/puzzles/types/Bingo/try/" not in bank
    tried = staff.post("/puzzles/types/Dice_Count/try/")
    assert tried.status_code == 302 and staff.get(tried["Location"]).status_code == 200
    assert "/puzzles/types/" not in Client().get("/").content.decode()  # staff only


def test_staff_tries_are_practice_and_count_in_no_pass_rate(draft, staff):
    """ "Try it" (a puzzle) and "Try one" (a type) make the staff member's own practice attempts:
    a scored one would count as a person's attempt (human pass rates, labels)."""
    from annotation.environment.episodes import human_pass_rates

    puzzle = draft.practice.get()
    uids = [
        staff.post(url)["Location"].split("/")[2]
        for url in (f"/puzzles/{puzzle.uid}/try/", "/puzzles/types/Dice_Count/try/")
    ]
    tries = Attempt.objects.filter(uid__in=uids)
    assert sorted(tries.values_list("purpose", flat=True)) == [Attempt.Purpose.PRACTICE] * 2
    for attempt in tries:
        submit_answer(attempt)
    assert human_pass_rates(list(tries.values_list("puzzle_id", flat=True))) == {}
