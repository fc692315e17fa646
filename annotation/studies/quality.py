"""Quality control: marks on suspicious attempts, each annotator's record, and exclusion.

Marks: fast (active time under a floor or a share of the type's median), hidden (the page hidden,
or silent, for long), tabs (hidden often), no_input (semantic actions without the raw pointer or
key input a hand leaves, live/evidence.py; such attempts are also left out of the report's Pass@1).
An excluded annotator's attempts stay stored and are left out of reports; excluding and
including again are logged and reversible.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from django.db import transaction
from django.db.models import Count, Q

from annotation.models import Attempt, AuditLog, Enrollment, Flag, Study

FAST_FLOOR_MS = 800.0  # faster than a person can look, aim and click
FAST_SHARE = 0.2  # ...or a fifth of the type's median active time, whichever is larger
HIDDEN_MS = 30_000.0  # the page was hidden for more than half a minute
TAB_SWITCHES = 3  # the page was hidden this many times or more


def attempt_marks(*, study: Study) -> dict[int, list[str]]:
    """Marks per scored, submitted attempt of the study: fast, hidden, tabs, no_input."""
    rows = list(
        Attempt.objects.filter(study=study, purpose=Attempt.Purpose.SCORED, submitted_at__isnull=False)
        .annotate(hidden_count=Count("events", filter=Q(events__kind="visibilitychange", events__data__state="hidden")))
        .values("pk", "puzzle__type", "wall_ms", "active_ms", "hidden_count", "input_ok")
    )
    medians = _median_active_by_type(rows)
    marks: dict[int, list[str]] = {}
    for row in rows:
        found = []
        active, wall = row["active_ms"] or 0.0, row["wall_ms"] or 0.0
        if active < max(FAST_FLOOR_MS, FAST_SHARE * medians.get(row["puzzle__type"], 0.0)):
            found.append("fast")
        if wall - active > HIDDEN_MS:
            found.append("hidden")
        if row["hidden_count"] >= TAB_SWITCHES:
            found.append("tabs")
        if row["input_ok"] is False:  # None: scored before the evidence was kept
            found.append("no_input")
        if found:
            marks[row["pk"]] = found
    return marks


def _median_active_by_type(rows: list[dict]) -> dict[str, float]:
    by_type: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row["active_ms"] is not None:
            by_type[row["puzzle__type"]].append(row["active_ms"])
    return {name: statistics.median(values) for name, values in by_type.items()}


def annotator_table(*, study: Study) -> list[dict]:
    """One row per annotator: accuracy, speed, gold accuracy, flags raised, marks, exclusion."""
    marks = attempt_marks(study=study)
    attempts = Attempt.objects.filter(study=study, submitted_at__isnull=False).values(
        "pk", "participant_id", "purpose", "correct", "active_ms"
    )
    by_participant: dict[int, list[dict]] = defaultdict(list)
    for row in attempts:
        by_participant[row["participant_id"]].append(row)
    flags = dict(
        Flag.objects.filter(attempt__study=study)
        .values("participant_id")
        .annotate(n=Count("id"))
        .values_list("participant_id", "n")
    )
    table = []
    for enrollment in Enrollment.objects.filter(study=study).select_related("participant__user").order_by("joined_at"):
        rows = by_participant.get(enrollment.participant_id, [])
        scored = [r for r in rows if r["purpose"] == Attempt.Purpose.SCORED]
        gold = [r for r in rows if r["purpose"] == Attempt.Purpose.GOLD]
        counted = defaultdict(int)
        for r in scored:
            for mark in marks.get(r["pk"], []):
                counted[mark] += 1
        active = [r["active_ms"] for r in scored if r["active_ms"] is not None]
        table.append(
            {
                "enrollment": enrollment,
                "name": enrollment.participant.user.username,
                "external_ids": enrollment.external_ids,
                "attempts": len(scored),
                "accuracy": sum(bool(r["correct"]) for r in scored) / len(scored) if scored else None,
                "median_active_ms": statistics.median(active) if active else None,
                "gold": len(gold),
                "gold_accuracy": sum(bool(r["correct"]) for r in gold) / len(gold) if gold else None,
                "flags": flags.get(enrollment.participant_id, 0),
                "fast": counted["fast"],
                "hidden": counted["hidden"],
                "tabs": counted["tabs"],
                "no_input": counted["no_input"],
                "excluded": enrollment.excluded,
                "excluded_reason": enrollment.excluded_reason,
                "finished": enrollment.finished_at is not None,
            }
        )
    return table


def enrollment_exclude(*, enrollment: Enrollment, by, reason: str) -> None:
    with transaction.atomic():
        Enrollment.objects.filter(pk=enrollment.pk).update(excluded=True, excluded_reason=reason[:300])
        AuditLog.objects.create(
            action=AuditLog.Action.ANNOTATOR_EXCLUDED, enrollment=enrollment, by=by, details={"reason": reason}
        )


def enrollment_include(*, enrollment: Enrollment, by) -> None:
    with transaction.atomic():
        Enrollment.objects.filter(pk=enrollment.pk).update(excluded=False, excluded_reason="")
        AuditLog.objects.create(
            action=AuditLog.Action.ANNOTATOR_INCLUDED,
            enrollment=enrollment,
            by=by,
            details={"reason_was": enrollment.excluded_reason},
        )
