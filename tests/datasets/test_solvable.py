"""People-solvable puzzles (annotation/live/solvable.py): k of n people within K attempts, and
the rule as a filter where puzzles are drawn."""

import pytest
from django.core.management import CommandError, call_command

from annotation.live.solvable import ARC_AGI_2, SolvableRule, people_solved, solvable_ids, solvable_selection
from annotation.models import Study
from annotation.studies.quality import enrollment_exclude
from annotation.studies.setup import StudySetupError, study_create

from .conftest import People

pytestmark = pytest.mark.django_db


@pytest.fixture
def retries(dice):
    """A study with a retry after a wrong answer; four Dice_Count puzzles:

    P0: ann right; bob wrong then right (within 2); cat wrong, wrong, right (within 3 only)
    P1: ann wrong then right; bob's first attempt has no input evidence (never tried), then right
    P2: ann and bob right; cat right but excluded from the study: 2 of 2
    P3: nobody
    """
    p0, p1, p2, p3 = dice(4)
    study = Study.objects.create(name="Retries", split="test", puzzles_per_annotator=4, attempts_per_puzzle=3)
    people = People(study)
    people.answer("ann", p0, True)
    people.answer("bob", p0, False), people.answer("bob", p0, True)
    people.answer("cat", p0, False), people.answer("cat", p0, False), people.answer("cat", p0, True)
    people.answer("ann", p1, False), people.answer("ann", p1, True)
    people.answer_without_input("bob", p1, str(p1.truth["sum"])), people.answer("bob", p1, True)
    for name in ("ann", "bob", "cat"):
        people.answer(name, p2, True)
    boss = people("ann").user.__class__.objects.create_user("boss", is_staff=True)
    enrollment_exclude(enrollment=study.enrollments.get(participant=people("cat")), by=boss, reason="too fast")
    return {"puzzles": (p0, p1, p2, p3), "study": study}


def counts(ids, within, **kwargs):
    found = people_solved(ids, within=within, **kwargs)
    return [(found[pk].solved, found[pk].tried) for pk in ids]


def test_k_of_n_within_k_attempts(retries):
    ids = [p.pk for p in retries["puzzles"]]
    # cat is excluded: P0 counts ann and bob only
    assert counts(ids, 1) == [(1, 2), (0, 1), (2, 2), (0, 0)]
    assert counts(ids, 2) == [(2, 2), (1, 1), (2, 2), (0, 0)]
    assert solvable_ids(ids, ARC_AGI_2) == {ids[0], ids[2]}
    assert solvable_ids(ids, SolvableRule(people=1, attempts=2)) == {ids[0], ids[1], ids[2]}
    other = Study.objects.create(name="Nobody", split="test", puzzles_per_annotator=1)
    assert counts(ids, 2, study_ids=[other.pk]) == [(0, 0)] * 4
    assert counts(ids, 2, study_ids=[other.pk, retries["study"].pk]) == [(2, 2), (1, 1), (2, 2), (0, 0)]


def test_the_rule_is_read_and_refused_with_a_reason():
    assert SolvableRule.parse(" 2:2 ") == ARC_AGI_2 and ARC_AGI_2.spec == "2:2"
    assert str(SolvableRule.parse("3:1")) == "solved by at least 3 people within 1 attempts each"
    for bad in ("2", "two:2", "0:2", "2:0", ""):
        with pytest.raises(ValueError, match="people-solvable rule"):
            SolvableRule.parse(bad)


def test_the_rule_filters_a_study_draw(retries):
    p0, _, p2, _ = retries["puzzles"]
    kept = study_create(
        name="Solvable only", split="test", puzzles_per_annotator=1, people_solvable=ARC_AGI_2, per_type=2
    )
    assert {s.puzzle_id for s in kept.slots.all()} == {p0.pk, p2.pk}
    assert kept.people_solvable == "2:2"
    everything = study_create(name="All", split="test", puzzles_per_annotator=1)
    assert everything.slots.values("puzzle_id").distinct().count() == 4 and everything.people_solvable == ""
    short = r"Dice_Count has 2 \(asked 3\); people-solvable only: solved by at least 2"
    with pytest.raises(StudySetupError, match=short):
        study_create(name="Too many", split="test", puzzles_per_annotator=1, people_solvable=ARC_AGI_2, per_type=3)


def test_an_agent_run_draws_people_solvable_puzzles_before_counting_per_type(retries):
    p0, p1, p2, p3 = retries["puzzles"]
    ids = [p3.pk, p2.pk, p1.pk, p0.pk]  # a selection's order is kept
    assert solvable_selection(ids, ARC_AGI_2) == [p2.pk, p0.pk]
    assert solvable_selection(ids, ARC_AGI_2, per_type=1) == [p2.pk]  # the rule first, then one Dice_Count
    with pytest.raises(CommandError, match="write PEOPLE:ATTEMPTS"):
        call_command(
            "agent",
            "run",
            "--protocol",
            "openai-tools",
            "--model",
            "m",
            "--base-url",
            "http://x",
            "--split",
            "test",
            "--people-solvable",
            "2",
        )
