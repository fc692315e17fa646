"""Agent-over-human effort (annotation/reporting/effort.py), worked by hand."""

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.live.attempts import participant_for_user
from annotation.models import AgentRun, Attempt, Enrollment, Participant, Rollout, Study
from annotation.reporting.effort import study_effort

pytestmark = pytest.mark.django_db


def person(name: str, study: Study, *, excluded: bool = False) -> Participant:
    participant = participant_for_user(user=get_user_model().objects.create_user(name))
    Enrollment.objects.create(study=study, participant=participant, excluded=excluded)
    return participant


def answered(participant, puzzle, study, actions: int, seconds: float, **fields) -> Attempt:
    return Attempt.objects.create(
        participant=participant,
        puzzle=puzzle,
        study=study,
        submitted_at=timezone.now(),
        correct=True,
        input_ok=True,
        action_count=actions,
        active_ms=seconds * 1000,
        **fields,
    )


def test_multiples_of_people_s_median_per_puzzle_and_type(dice):
    """P0: people 2, 4, 3 actions (median 3) in 10, 20, 30 s (20); the run's two rollouts 6 and 9
    actions (7.5: 2.5x) in 40 and 60 s (50: 2.5x). P1: people 2 and 2 actions in 10 and 12 s (11);
    the run 3 and 3 (1.5x) in 22 s each (2x). Dice_Count: the medians 2.0x actions, 2.25x time.
    Left out: an excluded person, a person's second attempt, a failed rollout, a rollout past k."""
    p0, p1, untouched, _ = dice(4)
    study = Study.objects.create(name="Effort", split="test", puzzles_per_annotator=2)
    ann, bob, cat = (person(name, study) for name in ("ann", "bob", "cat"))
    for who, actions, seconds in ((ann, 2, 10), (bob, 4, 20), (cat, 3, 30)):
        answered(who, p0, study, actions, seconds)
    answered(ann, p1, study, 2, 10)
    answered(bob, p1, study, 2, 12)
    answered(bob, p1, study, 40, 400)  # bob's second attempt: not a first answer
    answered(person("eve", study, excluded=True), p1, study, 50, 500)

    run = AgentRun.objects.create(name="model A", model="m", rollouts_per_puzzle=2)
    agent = participant_for_user(user=get_user_model().objects.create_user("agent"))
    Participant.objects.filter(pk=agent.pk).update(kind=Participant.Kind.AGENT)
    plan = {p0: [(6, 40), (9, 60)], p1: [None, (3, 22), (3, 22), (100, 900)]}  # None: a failed rollout
    for puzzle, rollouts in plan.items():
        for index, effort in enumerate(rollouts):
            if effort is None:
                Rollout.objects.create(run=run, puzzle=puzzle, index=index, status=Rollout.Status.FAILED)
                continue
            attempt = answered(agent, puzzle, None, *effort)
            Rollout.objects.create(run=run, puzzle=puzzle, index=index, status="done", attempt=attempt, correct=True)

    puzzles, types = study_effort([study.pk], {p.pk: p.type for p in (p0, p1, untouched)})
    by_puzzle = {row["puzzle"]: row for row in puzzles}
    assert set(by_puzzle) == {p0.pk, p1.pk}  # nobody played the third
    first = by_puzzle[p0.pk]
    assert (first["agent_actions"], first["people_actions"], first["actions_ratio"]) == (7.5, 3.0, 2.5)
    assert (first["agent_active_s"], first["people_active_s"], first["time_ratio"]) == (50.0, 20.0, 2.5)
    second = by_puzzle[p1.pk]
    assert (second["rollouts"], second["people"]) == (2, 2)
    assert (second["actions_ratio"], second["time_ratio"]) == (1.5, 2.0)
    (dice_count,) = types
    assert dice_count == {
        "run": "model A",
        "type": "Dice_Count",
        "puzzles": 2,
        "actions_ratio": 2.0,
        "time_puzzles": 2,
        "time_ratio": 2.25,
    }
