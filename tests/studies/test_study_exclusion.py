"""Excluding an annotator reopens their places (issue 22): their answers are left out of reports,
so the places go back to the queue for someone else, and the study's page says how many and
whom to recruit, instead of "100 % complete" with nothing asked."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation.live.intake import AttemptClosed
from annotation.models import Attempt, Enrollment, Slot, Study
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next
from annotation.studies.setup import study_create, study_progress
from tests.live_stream import submit_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(verified) -> Study:
    """Two puzzles, one person each, two per person: one person fills it."""
    verified(types=("Dice_Count",), per_type=2)
    return study_create(name="Excl", split="test", puzzles_per_annotator=2)


def joined(person, study: Study, name: str) -> Enrollment:
    user, _ = person(name)
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    return enrollment


def work_through(enrollment: Enrollment) -> None:
    for _ in range(5):
        step = enrollment_next(enrollment=enrollment)
        if step.kind != "attempt":
            return
        submit_answer(step.attempt, True)


def page(staff: Client, study: Study) -> str:
    return re.sub(r"\s+", " ", staff.get(f"/studies/{study.pk}/").content.decode())


def exclude(staff: Client, study: Study, enrollment: Enrollment) -> str:
    url = f"/studies/{study.pk}/annotators/{enrollment.pk}/"
    return staff.post(url, {"action": "exclude", "reason": "bot"}, follow=True).content.decode()


def test_excluding_someone_reopens_their_places_and_the_study_page_asks_for_a_replacement(study, person, staff):
    first = joined(person, study, "first")
    work_through(first)
    assert study_progress([study])[study.pk].complete
    assert "Still to recruit</dt><dd>0 people" in page(staff, study)
    said = exclude(staff, study, first)
    assert "their 2 places went back to the queue" in said
    assert Slot.objects.filter(study=study, enrollment__isnull=True, done=False).count() == 2
    progress = study_progress([study])[study.pk]
    assert not progress.complete and progress.places_done == 0 and progress.finished == 0
    shown = page(staff, study)
    assert 'Excluded</dt><dd>1 <small class="muted">(2 places reopened)' in shown
    assert "Still to recruit</dt><dd>1 person" in shown and 'id="replacements"' in shown
    second = joined(person, study, "second")  # the study was full; now there is room
    work_through(second)
    assert Slot.objects.filter(study=study, enrollment=second, done=True).count() == 2
    assert study_progress([study])[study.pk].complete
    assert 'id="replacements"' not in page(staff, study)


def test_an_excluded_persons_open_puzzle_is_closed_and_its_late_answer_takes_nothing(study, person, staff):
    first = joined(person, study, "first")
    attempt = enrollment_next(enrollment=first).attempt
    exclude(staff, study, first)
    assert Attempt.objects.get(pk=attempt.pk).abandoned_at is not None
    with pytest.raises(AttemptClosed):
        submit_answer(Attempt.objects.get(pk=attempt.pk), True)
    assert not Slot.objects.filter(study=study, done=True).exists()


def test_including_again_gives_back_the_answered_places_nobody_took(study, person, staff):
    first = joined(person, study, "first")
    work_through(first)
    exclude(staff, study, first)
    second = joined(person, study, "second")
    taken = enrollment_next(enrollment=second).attempt  # one of the two reopened places
    said = staff.post(f"/studies/{study.pk}/annotators/{first.pk}/", {"action": "include"}, follow=True)
    assert "1 answered place nobody had taken since" in said.content.decode()
    mine = Slot.objects.get(study=study, enrollment=first)
    assert mine.done and mine.puzzle_id != taken.puzzle_id


def test_a_reopened_place_expires_from_its_new_holder_despite_the_excluded_answer(study, person, staff):
    first = joined(person, study, "first")
    work_through(first)
    exclude(staff, study, first)
    held = enrollment_next(enrollment=joined(person, study, "second")).attempt  # then idle
    other = enrollment_next(enrollment=joined(person, study, "fourth")).attempt
    submit_answer(other, True)  # the other reopened place, answered by its new holder
    later = timezone.now() + timedelta(minutes=study.hold_minutes + 1)
    # The first person's answer on the idle one's place is not its holder's: it expires as any other.
    third = enrollment_next(enrollment=joined(person, study, "third"), now=later)
    assert third.kind == "attempt" and third.attempt.puzzle_id == held.puzzle_id


def test_excluding_twice_then_including_gives_back_what_the_first_exclusion_took(study, person, staff):
    """A double POST of Exclude: the second changes the reason only; including again still gives
    back the answered places nobody took (the second used to log none, so nothing came back)."""
    first = joined(person, study, "first")
    work_through(first)
    exclude(staff, study, first)
    url = f"/studies/{study.pk}/annotators/{first.pk}/"
    said = staff.post(url, {"action": "exclude", "reason": "a bot, surely"}, follow=True).content.decode()
    assert "their 2 places went back to the queue" in said
    assert Enrollment.objects.get(pk=first.pk).excluded_reason == "a bot, surely"
    assert 'Excluded</dt><dd>1 <small class="muted">(2 places reopened)' in page(staff, study)
    said = staff.post(url, {"action": "include"}, follow=True).content.decode()
    assert "2 answered places nobody had taken since" in said
    assert Slot.objects.filter(study=study, enrollment=first, done=True).count() == 2
