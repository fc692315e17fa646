"""The live admin dashboard's numbers: summaries only, never raw events, answers or truth.

Everything is a handful of aggregate queries (values/annotate/Count), so one summary stays cheap
at tens of thousands of attempts and can be recomputed every second.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from annotation.live.attempts import newest_received
from annotation.models import Attempt, Enrollment, Flag, Participant, Slot, Study

ACTIVE_WINDOW_S = 60
# How long a summary waits for a database connection (arena_site/postgresql, pool_wait): the pool's
# timeout is 10 s, and the dashboard would rather say "database unavailable" within a second.
DATABASE_WAIT_S = 1.0
THROUGHPUT_WINDOWS_S = (60, 600)
LATEST_FLAGS = 5


class DashboardSummary(TypedDict):
    """What the dashboard shows, and its socket's "summary" frame (consumers.py) carries."""

    generated_at: str
    active_annotators: int
    studies: list[dict]
    pass1_by_type: list[dict]
    throughput: dict
    new_flags: dict
    latest_submit_ms: float | None


def dashboard_summary(*, since_s: int = 300, now: datetime | None = None) -> DashboardSummary:
    """Where the open studies stand right now (JSON-ready).

    since_s: how far back a flag counts as new (`new_flags.recent`).
    now: the moment to summarise at; the wall clock unless given.
    """
    now = now or datetime.now(UTC)
    return {
        "generated_at": now.isoformat(timespec="seconds"),
        "active_annotators": active_annotators(now=now),
        "studies": open_studies(),
        "pass1_by_type": pass1_by_type(),
        "throughput": throughput(now=now),
        "new_flags": new_flags(now=now, since_s=since_s),
        "latest_submit_ms": latest_submit_ms(),
    }


def _human_attempts() -> QuerySet[Attempt]:
    return Attempt.objects.filter(participant__kind=Participant.Kind.HUMAN)


def active_annotators(*, now: datetime) -> int:
    """Distinct people with an event received in the last minute.

    Event.received has no index of its own, and the event table is by far the largest, so this
    never scans it by time: it takes the attempts that can still be receiving (open, or submitted
    within the window) and reads each one's newest batch through the (attempt, seq, index)
    unique index, one index probe per attempt.
    """
    cutoff = now - timedelta(seconds=ACTIVE_WINDOW_S)
    return (
        _human_attempts()
        .filter(abandoned_at__isnull=True, max_seq__gt=0)
        .filter(Q(submitted_at__isnull=True) | Q(submitted_at__gte=cutoff))
        .annotate(newest_ms=newest_received())
        .filter(newest_ms__gte=cutoff.timestamp() * 1000)
        .order_by()
        .values("participant_id")
        .distinct()
        .count()
    )  # no default ordering in the DISTINCT


def open_studies() -> list[dict]:
    """Each open study's enrolment and slot progress (three grouped queries, whatever the count)."""
    studies = list(Study.objects.filter(is_open=True).order_by("-created_at").values("id", "name"))
    ids = [s["id"] for s in studies]
    people = {
        row["study_id"]: row
        for row in Enrollment.objects.filter(study_id__in=ids)
        .values("study_id")
        .annotate(enrolled=Count("id"), finished=Count("id", filter=Q(finished_at__isnull=False)))
    }
    slots = {
        row["study_id"]: row
        for row in Slot.objects.filter(study_id__in=ids)
        .values("study_id")
        .annotate(total=Count("id"), done=Count("id", filter=Q(done=True)))
    }
    return [_study_row(s, people.get(s["id"], {}), slots.get(s["id"], {})) for s in studies]


def _study_row(study: Mapping[str, Any], people: Mapping[str, Any], slots: Mapping[str, Any]) -> dict[str, Any]:
    total, done = slots.get("total", 0), slots.get("done", 0)
    return {
        "id": study["id"],
        "name": study["name"],
        "enrolled": people.get("enrolled", 0),
        "finished": people.get("finished", 0),
        "slots_done": done,
        "slots_total": total,
        "progress": done / total if total else 0.0,
    }


def pass1_by_type() -> list[dict]:
    """Share of correct answers per puzzle type, over the open studies' scored attempts so far.

    An approximation of the report's Pass@1, good enough to watch a study run: it counts every
    submitted scored attempt (not only each person's first on a puzzle, which differs only when
    a study allows k > 1 attempts), and keeps retired puzzles. Practice, gold and expired
    attempts, attempts without input evidence and excluded annotators are left out, as in the
    report. The report is the figure to publish.
    """
    excluded = Enrollment.objects.filter(
        study_id=OuterRef("study_id"), participant_id=OuterRef("participant_id"), excluded=True
    )
    rows = (
        _human_attempts()
        .filter(
            study__is_open=True, purpose=Attempt.Purpose.SCORED, submitted_at__isnull=False, abandoned_at__isnull=True
        )
        .exclude(Exists(excluded))
        .exclude(input_ok=False)
        .values("puzzle__type")
        .annotate(attempts=Count("id"), correct=Count("id", filter=Q(correct=True)))
        .order_by("puzzle__type")
    )
    return [
        {
            "type": r["puzzle__type"],
            "attempts": r["attempts"],
            "correct": r["correct"],
            "pass1": r["correct"] / r["attempts"],
        }
        for r in rows
    ]


def throughput(*, now: datetime) -> dict:
    """People's submitted attempts in the last minute and the last ten, and each as a rate per
    minute (one range query on the submitted_at index)."""
    short, long = THROUGHPUT_WINDOWS_S
    counts = (
        _human_attempts()
        .filter(submitted_at__gte=now - timedelta(seconds=long), submitted_at__lte=now)
        .aggregate(
            last_1m=Count("id", filter=Q(submitted_at__gte=now - timedelta(seconds=short))), last_10m=Count("id")
        )
    )
    return {
        "last_1m": counts["last_1m"],
        "last_10m": counts["last_10m"],
        "per_min_1m": counts["last_1m"] / (short / 60),
        "per_min_10m": counts["last_10m"] / (long / 60),
    }


def new_flags(*, now: datetime, since_s: int) -> dict:
    """Open flags: how many, how many came in the last since_s seconds, and the latest few."""
    open_flags = Flag.objects.filter(status=Flag.Status.OPEN)
    counts = open_flags.aggregate(
        open=Count("id"), recent=Count("id", filter=Q(created_at__gte=now - timedelta(seconds=since_s)))
    )
    latest = open_flags.order_by("-created_at", "-pk").values(
        "id", "puzzle__type", "puzzle__uid", "reason", "created_at"
    )[:LATEST_FLAGS]
    return {
        "open": counts["open"],
        "recent": counts["recent"],
        "since_s": since_s,
        "latest": [
            {
                "id": f["id"],
                "puzzle_type": f["puzzle__type"],
                "puzzle_uid": f["puzzle__uid"],
                "reason": f["reason"],
                "created_at": f["created_at"].isoformat(timespec="seconds"),
            }
            for f in latest
        ],
    }


def latest_submit_ms() -> float | None:
    """When a person last submitted, epoch ms: a client compares it with its own clock to see how
    far behind the dashboard is (bench/dashboard.py does)."""
    newest = (
        _human_attempts()
        .filter(submitted_at__isnull=False)
        .order_by("-submitted_at")
        .values_list("submitted_at", flat=True)
        .first()
    )
    return newest.timestamp() * 1000 if newest else None


def summary_key(summary: Mapping[str, Any]) -> str:
    """What the summary says, without when it was made: equal keys mean nothing changed."""
    return json.dumps({k: v for k, v in summary.items() if k != "generated_at"}, sort_keys=True)
