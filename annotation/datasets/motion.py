"""Pointer motion of a dataset's split, people beside each agent run (`labels motion`, the motion
page): people are counted as the labels count them (labels.people_attempts, first_per_person),
each person's first submitted attempt with input evidence; the numbers are the ones each attempt
kept when it was scored (reporting/motion.py summarizes them)."""

from __future__ import annotations

from collections import defaultdict

from annotation.datasets.labels import first_per_person, people_attempts
from annotation.models import Rollout
from annotation.reporting.motion import PEOPLE, Groups, add_agents, motion_from, motion_section, motion_values
from annotation.reporting.report_types import MotionSection


def motion_table(*, dataset: str, split: str, study_id: int | None = None) -> MotionSection:
    """Per type, people's motion beside each agent run's, over the whole split (see
    reporting.motion.motion_section for what it holds)."""
    groups: Groups = defaultdict(list)
    people = people_attempts(
        study_id, puzzle__dataset=dataset, puzzle__split=split, submitted_at__isnull=False
    ).exclude(input_ok=False)
    values = motion_values()
    for _, type_name, *motion in first_per_person(people.annotate(**values), "puzzle__type", *values):
        groups[(type_name, PEOPLE)].append(motion_from(motion))
    add_agents(groups, Rollout.objects.filter(puzzle__dataset=dataset, puzzle__split=split))
    return motion_section(groups)
