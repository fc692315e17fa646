"""Gold placed by the server per person (issue 26): gold came at fixed fractions of the run (the
3rd of 11 in this study, for everyone) and in pk order, so one participant could tell the next
where gold comes and which puzzle it is. Now each enrolment's places and order are drawn from the
server's secret: different between people, the same for one person on every request."""

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from annotation.models import Attempt, Enrollment, Study
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next, gold_plan
from annotation.studies.setup import study_create
from tests.live_stream import submit_answer

PEOPLE = 20
PER_PERSON = 8
GOLDS = 3


@pytest.fixture
def study(verified) -> Study:
    """Eight pool puzzles for each of 30 people, and three gold ones."""
    puzzles = verified(types=("Dice_Count",), per_type=PER_PERSON + GOLDS)
    return study_create(
        name="gold", split="test", puzzles_per_annotator=PER_PERSON, overlap=PEOPLE, gold=puzzles[:GOLDS]
    )


def joined(study: Study, name: str) -> Enrollment:
    user = get_user_model().objects.create_user(name)  # no password: nothing to hash
    enrollment = enrollment_join(study=study, user=user, external_ids={})
    enrollment_consent(enrollment=enrollment)
    return enrollment


def next_step(enrollment: Enrollment):
    """The next step, asked three times as refreshes would: always the same attempt."""
    step = enrollment_next(enrollment=enrollment)
    again = [enrollment_next(enrollment=enrollment) for _ in range(2)]
    assert all((s.kind, s.attempt, s.done, s.total) == (step.kind, step.attempt, step.done, step.total) for s in again)
    return step


def first_gold(enrollment: Enrollment) -> tuple[int, int]:
    """Where this person's first gold comes (puzzles done before it) and which puzzle it is."""
    while True:
        step = next_step(enrollment)
        assert step.kind == "attempt"
        if step.attempt.purpose == Attempt.Purpose.GOLD:
            return step.done, step.attempt.puzzle_id
        submit_answer(step.attempt, True)


def test_gold_comes_at_different_places_and_as_different_puzzles(study):
    seen = [first_gold(joined(study, f"p{i}")) for i in range(PEOPLE)]
    places, puzzles = {place for place, _ in seen}, {puzzle for _, puzzle in seen}
    assert len(places) > 1, f"everyone's first gold came after {places} puzzles"
    assert len(puzzles) > 1, "everyone's first gold was the same puzzle"
    assert 0 not in places  # never the very first puzzle
    assert puzzles <= set(study.gold.values_list("pk", flat=True))


def test_everyone_meets_every_gold_once_and_the_counts_add_up(study):
    golds = set(study.gold.values_list("pk", flat=True))
    for i in range(3):
        enrollment = joined(study, f"full{i}")
        shown = []
        for done in range(PER_PERSON + GOLDS):
            step = next_step(enrollment)
            assert (step.kind, step.done, step.total) == ("attempt", done, PER_PERSON + GOLDS)
            shown.append(step.attempt)
            submit_answer(step.attempt, True)
        end = next_step(enrollment)
        assert (end.kind, end.done, end.total) == ("finished", PER_PERSON + GOLDS, PER_PERSON + GOLDS)
        gold = [a.puzzle_id for a in shown if a.purpose == Attempt.Purpose.GOLD]
        assert sorted(gold) == sorted(golds) and shown[0].purpose == Attempt.Purpose.SCORED
        assert len({a.puzzle_id for a in shown}) == PER_PERSON + GOLDS


def test_the_placement_is_the_servers_secret_and_stable(study):
    """Stable without being stored (the same plan on every call, so after a restart too), and
    drawn under SECRET_KEY: a participant who knows the code and their enrolment cannot compute it."""
    enrollments = [joined(study, f"s{i}") for i in range(PEOPLE)]
    plans = [gold_plan(e) for e in enrollments]
    assert plans == [gold_plan(Enrollment.objects.get(pk=e.pk)) for e in enrollments]
    with override_settings(SECRET_KEY="another deployment's key, long enough to be one"):
        assert plans != [gold_plan(e) for e in enrollments]
