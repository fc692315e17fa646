"""Pointer motion, people beside agents: per type and group, the medians of the motion features
each attempt kept when it was scored (`Attempt.motion`, live/motion.py), the mean human-likeness
score and the share of attempts scoring 0.75 or more.

A group is "people" or "agent: <run name>". Who counts as people is the caller's rule (the study
report's counted answers, the labels' people); agents are the runs' rollouts that reached the page
(neither pending nor failed). An attempt scored before motion was kept has none: it counts in
`attempts` and not in `measured`.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from django.db.models import FloatField, QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from annotation.live.motion import RULE
from annotation.models import Rollout
from annotation.reporting.report_types import MotionRow, MotionSection

FEATURES = ("path_px", "straightness", "peak_speed", "pause_ms", "density")
KEPT = ("samples", *FEATURES, "human_likeness")  # what summaries read of Attempt.motion
COLUMNS = ("attempts", "measured", "with_path", *FEATURES, "human_likeness", "humanlike_share")
HUMANLIKE_AT = 0.75
PEOPLE = "people"

Groups = dict[tuple[str, str], list[dict | None]]  # (type, group) -> each attempt's kept motion


def motion_values(field: str = "motion") -> dict[str, Cast]:
    """Annotations that read the kept numbers of a motion field (`motion`, `attempt__motion`) in the
    database, as floats: parsing each attempt's JSON in Python took most of a report's time."""
    return {f"motion_{name}": Cast(KeyTextTransform(name, field), FloatField()) for name in KEPT}


def motion_from(values: tuple | list) -> dict | None:
    """A motion dict from the values of motion_values() in their order; None when not measured."""
    return None if values[0] is None else dict(zip(KEPT, values, strict=True))


def agent_group(run_name: str) -> str:
    return f"agent: {run_name}"


def add_agents(groups: Groups, rollouts: QuerySet[Rollout]) -> Groups:
    """The rollouts' attempts added to the groups, one group per run."""
    values = motion_values("attempt__motion")
    reached = (
        rollouts.filter(attempt__isnull=False)
        .exclude(status__in=[Rollout.Status.PENDING, Rollout.Status.FAILED])
        .annotate(**values)
        .values_list("puzzle__type", "run__name", *values)
    )
    for type_name, run_name, *motion in reached.iterator(chunk_size=5000):
        groups[(type_name, agent_group(run_name))].append(motion_from(motion))
    return groups


def motion_rows(groups: Groups) -> list[MotionRow]:
    """One row per type and group: people first in each type, then the runs by name."""
    rows = [summarize(type_name, group, motions) for (type_name, group), motions in groups.items()]
    rows.sort(key=lambda r: (r["type"], r["group"] != PEOPLE, r["group"]))
    return rows


def motion_overall(groups: Groups) -> list[MotionRow]:
    """One row per group over every type (each attempt weighs the same)."""
    pooled: dict[str, list[dict | None]] = defaultdict(list)
    for (_, group), motions in groups.items():
        pooled[group] += motions
    rows = [summarize("all types", group, motions) for group, motions in pooled.items()]
    rows.sort(key=lambda r: (r["group"] != PEOPLE, r["group"]))
    return rows


def motion_section(groups: Groups) -> MotionSection:
    """What a report or a page shows: the rows per type, the rows over all types, and the rule."""
    return {"rows": motion_rows(groups), "overall": motion_overall(groups), "rule": RULE}


def summarize(type_name: str, group: str, motions: list[dict[str, Any] | None]) -> MotionRow:
    measured = [m for m in motions if m is not None]
    scores = [m["human_likeness"] for m in measured if m.get("human_likeness") is not None]

    def median(name: str) -> float | None:
        values = [m[name] for m in measured if m.get(name) is not None]
        return statistics.median(values) if values else None

    return {
        "type": type_name,
        "group": group,
        "attempts": len(motions),
        "measured": len(measured),
        "with_path": len(scores),
        "path_px": median("path_px"),
        "straightness": median("straightness"),
        "peak_speed": median("peak_speed"),
        "pause_ms": median("pause_ms"),
        "density": median("density"),
        "human_likeness": sum(scores) / len(scores) if scores else None,
        "humanlike_share": sum(s >= HUMANLIKE_AT for s in scores) / len(scores) if scores else None,
    }
