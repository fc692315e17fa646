"""The per-participant export: one CSV row per participant of a study, for approving and paying
people on a crowd platform (docs/reports.md, "Per-participant export"). It lives with the
participants: their crowd ids (access.CROWD_IDS) and quality marks (quality.MARKS,
attempt_marks) are read where they are stated, not copied."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count

from annotation.live.attempts import last_heard
from annotation.models import Attempt, Enrollment, Flag, Slot, Study
from annotation.reporting.render import csv_number
from annotation.reporting.reports import submitted_late
from annotation.studies.access import CROWD_IDS
from annotation.studies.quality import MARKS, attempt_marks
from arena_site.csv_cells import csv_text

CHUNK = 2000  # attempt rows per database round trip; a server-side cursor on PostgreSQL
# Every crowd id kind (CROWD_IDS) and every mark (MARKS) is a column, even when no one has it;
# a key found in an enrolment's external_ids, or a mark, that the site does not know gets a
# column too, after these.

PARTICIPANT_HEAD = ("enrollment", "name", "crowd_id")
PARTICIPANT_TAIL = (
    "status",
    "excluded_reason",
    "joined_at",
    "consented_at",
    "last_seen_at",
    "finished_at",
    "puzzles_done",
    "puzzles_total",
    "completion",
    "attempts",
    "correct",
    "wrong",
    "timed_out",
    "not_submitted",
    "accuracy",
    "puzzles_solved",
    "gold_answered",
    "gold_correct",
    "gold_accuracy",
)
PARTICIPANT_END = (
    "marked_attempts",
    "gold_no_input",
    "practice_no_input",
    "flags",
    "active_minutes",
    "median_active_s",
)
PARTICIPANT_DIGITS = {"active_minutes": 1, "median_active_s": 1}  # proportions: 4 decimals


def participant_status(enrollment: Enrollment) -> str:
    """excluded (left out of reports), finished, working (consented, not finished) or joined (not consented)."""
    if enrollment.excluded:
        return "excluded"
    if enrollment.finished_at:
        return "finished"
    return "working" if enrollment.consented_at else "joined"


def participant_rows(*, study: Study, marks: Mapping[int, Sequence[str]]) -> tuple[list[str], list[dict]]:
    """The columns, and one row per enrolment of the study (excluded ones too, by join time).

    Attempts and accuracy count the person's scored attempts as the quality page does: every
    submitted scored attempt, retries and retired puzzles included (with one attempt per puzzle,
    their first answers); wrong and timed out part the ones not correct (reports.submitted_late);
    not_submitted: scored attempts started and never submitted. Gold: every submitted gold attempt.
    marks: the quality marks per attempt (attempt_marks), counted per mark over scored attempts;
    gold_no_input and practice_no_input: the person's gold and practice attempts marked no_input.
    """
    by_participant = _attempt_rows(study)
    no_input = {purpose: _no_input_on(study, purpose, marks) for purpose in ("gold", "practice")}
    enrollments = list(
        Enrollment.objects.filter(study=study).select_related("participant__user").order_by("joined_at", "pk")
    )
    crowd_kinds = list(CROWD_IDS) + sorted(
        {key for e in enrollments for key in (e.external_ids or {})} - set(CROWD_IDS)
    )
    mark_kinds = list(MARKS) + sorted({m for found in marks.values() for m in found} - set(MARKS))
    columns = [
        *PARTICIPANT_HEAD,
        *crowd_kinds,
        *PARTICIPANT_TAIL,
        *(f"marks_{mark}" for mark in mark_kinds),
        *PARTICIPANT_END,
    ]
    done = dict(
        Slot.objects.filter(study=study, done=True, enrollment__isnull=False)
        .values("enrollment_id")
        .annotate(n=Count("id"))
        .values_list("enrollment_id", "n")
    )
    flags = dict(
        Flag.objects.filter(attempt__study=study)
        .values("participant_id")
        .annotate(n=Count("id"))
        .values_list("participant_id", "n")
    )
    events_seen = last_heard(Attempt.objects.filter(study=study))
    total = study.puzzles_total()
    rows = []
    for enrollment in enrollments:
        mine = by_participant.get(enrollment.participant_id, [])
        scored = [a for a in mine if a["purpose"] == Attempt.Purpose.SCORED]
        answered = [a for a in scored if a["submitted_at"] is not None]
        gold = [a for a in mine if a["purpose"] == Attempt.Purpose.GOLD and a["submitted_at"] is not None]
        correct = sum(bool(a["correct"]) for a in answered)
        gold_correct = sum(bool(a["correct"]) for a in gold)
        late = sum(bool(a["late"]) and not a["correct"] for a in answered)
        counted: dict[str, int] = defaultdict(int)
        for attempt in answered:
            for mark in marks.get(attempt["pk"], ()):
                counted[mark] += 1
        active = [a["active_ms"] for a in answered if a["active_ms"] is not None]
        puzzles_done = done.get(enrollment.pk, 0) + len(gold)
        seen = [
            enrollment.joined_at,
            enrollment.consented_at,
            enrollment.finished_at,
            *(a[key] for a in mine for key in ("opened_at", "submitted_at")),
        ]
        if enrollment.participant_id in events_seen:
            seen.append(events_seen[enrollment.participant_id])
        row = {
            "enrollment": enrollment.pk,
            "name": enrollment.participant.user.username,
            "crowd_id": enrollment.crowd_id,
            **{kind: (enrollment.external_ids or {}).get(kind, "") for kind in crowd_kinds},
            "status": participant_status(enrollment),
            "excluded_reason": enrollment.excluded_reason,
            "joined_at": enrollment.joined_at,
            "consented_at": enrollment.consented_at,
            "last_seen_at": max(t for t in seen if t is not None),
            "finished_at": enrollment.finished_at,
            "puzzles_done": puzzles_done,
            "puzzles_total": total,
            "completion": min(1.0, puzzles_done / total) if total else None,
            "attempts": len(answered),
            "correct": correct,
            "wrong": len(answered) - correct - late,
            "timed_out": late,
            "not_submitted": len(scored) - len(answered),
            "accuracy": correct / len(answered) if answered else None,
            "puzzles_solved": len({a["puzzle_id"] for a in answered if a["correct"]}),
            "gold_answered": len(gold),
            "gold_correct": gold_correct,
            "gold_accuracy": gold_correct / len(gold) if gold else None,
            **{f"marks_{mark}": counted[mark] for mark in mark_kinds},
            "marked_attempts": sum(1 for a in answered if marks.get(a["pk"])),
            **{f"{purpose}_no_input": found.get(enrollment.participant_id, 0) for purpose, found in no_input.items()},
            "flags": flags.get(enrollment.participant_id, 0),
            "active_minutes": sum(a["active_ms"] for a in mine if a["submitted_at"] and a["active_ms"]) / 60000,
            "median_active_s": statistics.median(active) / 1000 if active else None,
        }
        rows.append(row)
    return columns, rows


def _no_input_on(study: Study, purpose: str, marks: Mapping[int, Sequence[str]]) -> dict[int, int]:
    """Per participant, their submitted attempts of this purpose that carry the no_input mark."""
    counted: dict[int, int] = defaultdict(int)
    submitted = Attempt.objects.filter(study=study, purpose=purpose, submitted_at__isnull=False)
    for pk, participant in submitted.values_list("pk", "participant_id").order_by():
        counted[participant] += "no_input" in marks.get(pk, ())
    return counted


def _attempt_rows(study: Study) -> dict[int, list[dict]]:
    """The study's scored and gold attempts by participant, oldest first, each with whether its
    submit came late (reports.submitted_late)."""
    rows = (
        Attempt.objects.filter(study=study, purpose__in=[Attempt.Purpose.SCORED, Attempt.Purpose.GOLD])
        .order_by("created_at", "pk")
        .annotate(late=submitted_late(study.time_limit_s))
        .values(
            "pk",
            "participant_id",
            "puzzle_id",
            "purpose",
            "submitted_at",
            "correct",
            "active_ms",
            "served_at",
            "created_at",
            "late",
        )
    )
    by_participant: dict[int, list[dict]] = defaultdict(list)
    for row in rows.iterator(chunk_size=CHUNK):
        by_participant[row["participant_id"]].append({**row, "opened_at": row["served_at"] or row["created_at"]})
    return by_participant


def participant_cell(value: object, column: str) -> Any:
    """A participant row's value as a CSV cell: times in ISO 8601 UTC to the second, numbers
    rounded (PARTICIPANT_DIGITS, else 4 decimals); text as it is (csv_write escapes formulas)."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return csv_number(value, PARTICIPANT_DIGITS.get(column, 4))


def participants_csv(*, study: Study, marks: Mapping[int, Sequence[str]] | None = None) -> str:
    """The per-participant export as CSV: a header and one row per enrolment (participant_rows).
    marks: the quality marks per attempt; by default quality control's own (attempt_marks)."""
    marks = attempt_marks(study=study) if marks is None else marks
    columns, rows = participant_rows(study=study, marks=marks)
    return csv_text([columns, *([participant_cell(row[column], column) for column in columns] for row in rows)])
