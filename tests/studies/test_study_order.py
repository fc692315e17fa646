"""Each person's own order in a shuffled study, balanced over people (issue 22): different orders,
every type about as often early as late across people, stable across refreshes, the place stored."""

import statistics
from itertools import pairwise

import pytest

from annotation.models import Attempt, Slot, Study
from annotation.studies.queue import balanced_latin_square, enrollment_next, run_plan
from annotation.studies.setup import study_create
from tests.studies.test_studies import annotator, submit

pytestmark = pytest.mark.django_db
TYPES = ("Dice_Count", "Object_Match", "Bingo")


def work_through(enrollment) -> list[Attempt]:
    """Every attempt of a person's run, in the order given, each answered as it comes."""
    given = []
    while (step := enrollment_next(enrollment=enrollment)).kind == "attempt":
        given.append(step.attempt)
        submit(step.attempt)
    assert step.kind == "finished"
    return given


def test_three_enrolments_get_three_different_orders(verified, person):
    verified(types=TYPES, per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=3, overlap=3, types=list(TYPES))
    runs = [work_through(annotator(person, study, f"p{i}")) for i in range(3)]
    assert len({tuple(a.puzzle_id for a in run) for run in runs}) == 3
    assert len({tuple(a.puzzle.type for a in run) for run in runs}) == 3  # each a row of its own
    assert all(sorted(a.puzzle.type for a in run) == sorted(TYPES) for run in runs)  # one of each type


def test_across_twenty_people_each_type_sits_near_the_middle_of_the_run(verified, person):
    verified(types=TYPES, per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=3, overlap=20, types=list(TYPES))
    places: dict[str, list[int]] = {name: [] for name in TYPES}
    for i in range(20):
        for attempt in work_through(annotator(person, study, f"p{i}")):
            places[attempt.puzzle.type].append(attempt.position)
    middle = (study.puzzles_per_annotator + 1) / 2
    for name, found in places.items():
        assert abs(statistics.mean(found) - middle) <= 0.15 * middle, (name, found)
    taken = Slot.objects.filter(study=study, done=True)
    assert all(taken.filter(puzzle_id=p).count() <= study.overlap for p in taken.values_list("puzzle_id", flat=True))


def test_the_place_is_stored_gold_counts_practice_does_not(verified, person):
    pool = verified(types=("Dice_Count",), per_type=6)
    study = study_create(
        name="s", split="test", puzzles_per_annotator=3, practice=[pool[0]], gold=[pool[1]], types=["Dice_Count"]
    )
    run = work_through(annotator(person, study, "ann"))
    assert run[0].purpose == Attempt.Purpose.PRACTICE and run[0].position is None
    assert sorted(a.position for a in run[1:]) == [1, 2, 3, 4]  # three scored places and the gold one
    stored = Attempt.objects.filter(study=study, purpose=Attempt.Purpose.GOLD).get()
    assert stored.position == next(a.position for a in run if a.purpose == Attempt.Purpose.GOLD)


def test_a_refresh_gives_the_same_attempt_at_the_same_place(verified, person):
    verified(types=TYPES, per_type=2)
    study = study_create(name="s", split="test", puzzles_per_annotator=3, overlap=2, types=list(TYPES))
    enrollment = annotator(person, study, "ann")
    submit(enrollment_next(enrollment=enrollment).attempt)
    second = enrollment_next(enrollment=enrollment).attempt
    assert second.position == 2
    again = enrollment_next(enrollment=enrollment).attempt
    assert (again.pk, again.position) == (second.pk, 2)
    assert run_plan(enrollment) == run_plan(enrollment)  # drawn again, the same plan


def test_a_fixed_order_stays_the_same_for_everyone(verified, person):
    verified(types=TYPES, per_type=2)
    study = study_create(
        name="s", split="test", puzzles_per_annotator=3, overlap=3, types=list(TYPES), order=Study.Order.BLOCKED
    )
    runs = [[a.puzzle_id for a in work_through(annotator(person, study, f"p{i}"))] for i in range(2)]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_the_latin_square_puts_each_type_once_in_every_row_and_column(n):
    rows = balanced_latin_square(n)
    assert len(rows) == (2 * n if n % 2 else n)
    assert all(sorted(row) == list(range(n)) for row in rows)
    assert all(sorted(column) == sorted(list(range(n)) * (len(rows) // n)) for column in zip(*rows, strict=True))
    neighbours = [pair for row in rows for pair in pairwise(row)]
    assert len(set(neighbours)) == n * (n - 1) and all(
        neighbours.count(p) == neighbours.count(neighbours[0]) for p in neighbours
    )
