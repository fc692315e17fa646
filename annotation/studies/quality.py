"""Quality control: marks on suspicious attempts, each annotator's record, and exclusion.

Marks: fast (active time under a floor or a share of the type's median), hidden (the page hidden,
or silent, for long), tabs (hidden often), no_input (semantic actions without the raw pointer or
key input a hand leaves, live/evidence.py; such attempts are also left out of the report's Pass@1).
Gold and practice attempts get the same marks; an annotator's row counts no_input on them apart.
An excluded annotator's attempts stay stored and are left out of reports; excluding and
including again are logged and reversible.

Each annotator's row also says when they joined and were last seen (their page's newest event),
their device (the browser they joined with, the window their page last loaded in) and whether
they are stuck: enrolled in an open study, not finished, and no answer for STUCK_AFTER (a page
that never shows its puzzle looks like this). `annotator_attempts` is one annotator's attempts
with their answers, to draw over each puzzle's image.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, IntegerField, JSONField, Max, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.live.attempts import last_heard
from annotation.models import Attempt, AuditLog, Enrollment, Event, Flag, Study
from annotation.reporting.reports import submitted_late
from annotation.reporting.wording import fmt_seconds
from annotation.studies.access import CROWD_IDS, PERSON_IDS
from annotation.studies.queue import enrollment_places_reopen, enrollment_places_restore
from puzzles.answer_marks import answer_marks
from puzzles.hosted_names import split_hosted_type
from puzzles.models import Asset, Puzzle
from puzzles.registry import get_type

FAST_FLOOR_MS = 800.0  # faster than a person can look, aim and click
FAST_SHARE = 0.2  # ...or a fifth of the type's median active time, whichever is larger
HIDDEN_MS = 30_000.0  # the page was hidden for more than half a minute
TAB_SWITCHES = 3  # the page was hidden this many times or more
STUCK_AFTER = timedelta(minutes=10)  # enrolled, unfinished, and no answer for this long
MARKS = ("fast", "hidden", "tabs", "no_input")  # what attempt_marks may say, in this order


def attempt_marks(*, study: Study) -> dict[int, list[str]]:
    """Marks per submitted attempt of the study, scored, gold and practice alike: fast, hidden,
    tabs, no_input. A script answers gold as readily as anything else; "fast" is judged against
    the type's median over scored attempts."""
    rows = list(
        Attempt.objects.filter(study=study, submitted_at__isnull=False)
        .annotate(hidden_count=times_hidden())
        .values("pk", "purpose", "puzzle__type", "wall_ms", "active_ms", "hidden_count", "input_ok")
        .order_by()
    )
    medians = _median_active_by_type([r for r in rows if r["purpose"] == Attempt.Purpose.SCORED])
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


def times_hidden() -> Coalesce:
    """How often an attempt's page was hidden: its visibility changes to "hidden", counted per
    attempt through their partial index (a join with every event of the study read them all)."""
    hidden = (
        Event.objects.filter(attempt=OuterRef("pk"), kind="visibilitychange", data__state="hidden")
        .order_by()
        .values("attempt")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(hidden, output_field=IntegerField()), 0)


def _median_active_by_type(rows: list[dict]) -> dict[str, float]:
    by_type: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row["active_ms"] is not None:
            by_type[row["puzzle__type"]].append(row["active_ms"])
    return {name: statistics.median(values) for name, values in by_type.items()}


def annotator_table(*, study: Study, now: datetime | None = None) -> list[dict]:
    """One row per annotator: accuracy, speed, gold accuracy, flags raised, marks, exclusion; crowd
    ids, joined and last seen, device, and their state (excluded, finished, stuck, in progress)."""
    marks = attempt_marks(study=study)
    activity = enrollment_activity(study=study)
    now = now or timezone.now()
    attempts = Attempt.objects.filter(study=study, submitted_at__isnull=False).values(
        "pk", "participant_id", "purpose", "correct", "active_ms"
    )
    by_participant: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for row in attempts:
        by_participant[row["participant_id"]].append(row)
    flags = dict(
        Flag.objects.filter(attempt__study=study)
        .values("participant_id")
        .annotate(n=Count("id"))
        .values_list("participant_id", "n")
    )
    table = []
    # Through the study: every enrolment's .study is this object, not a query each (is_stuck reads it).
    for enrollment in study.enrollments.select_related("participant__user").order_by("joined_at"):
        rows = by_participant.get(enrollment.participant_id, [])
        scored = [r for r in rows if r["purpose"] == Attempt.Purpose.SCORED]
        gold = [r for r in rows if r["purpose"] == Attempt.Purpose.GOLD]
        counted: dict[str, int] = defaultdict(int)
        for r in scored:
            for mark in marks.get(r["pk"], []):
                counted[mark] += 1
        no_input = {purpose: _marked(rows, marks, purpose, "no_input") for purpose in (GOLD, PRACTICE)}
        active = [r["active_ms"] for r in scored if r["active_ms"] is not None]
        seen = activity.get(enrollment.participant_id, {})
        stuck = is_stuck(enrollment, last_answer=seen.get("last_answer"), now=now)
        table.append(
            {
                "enrollment": enrollment,
                "name": enrollment.participant.user.username,
                "external_ids": enrollment.external_ids,
                "crowd": crowd_id_list(enrollment.external_ids),
                "joined_at": enrollment.joined_at,
                "last_seen": seen.get("last_seen") or enrollment.joined_at,
                "seen_ago": ago(seen.get("last_seen") or enrollment.joined_at, now),
                "person": enrollment.crowd_id or person_label(enrollment.external_ids),
                "last_answer": seen.get("last_answer"),
                "user_agent": enrollment.user_agent,
                "device": device_summary(enrollment.user_agent),
                "viewport": seen.get("viewport"),
                "stuck": stuck,
                "state": _state(enrollment, stuck),
                "attempts": len(scored),
                "accuracy": sum(bool(r["correct"]) for r in scored) / len(scored) if scored else None,
                "median_active": seconds_text(statistics.median(active) if active else None),
                "gold": len(gold),
                "gold_accuracy": sum(bool(r["correct"]) for r in gold) / len(gold) if gold else None,
                "flags": flags.get(enrollment.participant_id, 0),
                "fast": counted["fast"],
                "hidden": counted["hidden"],
                "tabs": counted["tabs"],
                "no_input": counted["no_input"],
                "gold_no_input": no_input[GOLD],
                "practice_no_input": no_input[PRACTICE],
                "excluded": enrollment.excluded,
                "excluded_reason": enrollment.excluded_reason,
                "finished": enrollment.finished_at is not None,
            }
        )
    return table


GOLD, PRACTICE = Attempt.Purpose.GOLD, Attempt.Purpose.PRACTICE


def _marked(rows: list[Mapping[str, Any]], marks: dict[int, list[str]], purpose: str, mark: str) -> int:
    """How many of the rows' attempts of this purpose carry the mark."""
    return sum(1 for r in rows if r["purpose"] == purpose and mark in marks.get(r["pk"], ()))


def _state(enrollment: Enrollment, stuck: bool) -> str:
    if enrollment.excluded:
        return "excluded"
    if enrollment.finished_at is not None:
        return "finished"
    return "stuck" if stuck else "in progress"


def is_stuck(enrollment: Enrollment, *, last_answer: datetime | None, now: datetime) -> bool:
    """Enrolled in an open study, not finished nor excluded, and no answer for STUCK_AFTER since
    they joined (or since their last answer): they may be looking at a page that does not work."""
    if enrollment.excluded or enrollment.finished_at is not None or not enrollment.study.accepts_work:
        return False
    since = max(filter(None, (enrollment.consented_at, enrollment.joined_at, last_answer)))
    return now - since >= STUCK_AFTER


def stuck_count(*, study: Study, now: datetime | None = None) -> int:
    """How many annotators are stuck (is_stuck), as the QC table counts them, without building it:
    the study page shows this one number."""
    if not study.accepts_work:
        return 0
    now = now or timezone.now()
    last_answers = dict(
        Attempt.objects.filter(study=study, submitted_at__isnull=False)
        .values("participant_id")
        .annotate(last=Max("submitted_at"))
        .values_list("participant_id", "last")
    )
    waiting = study.enrollments.filter(excluded=False, finished_at__isnull=True)
    return sum(is_stuck(e, last_answer=last_answers.get(e.participant_id), now=now) for e in waiting)


def enrollment_activity(*, study: Study) -> dict[int, dict]:
    """Per participant of the study: when their page was last heard from (its newest event, else
    their newest attempt's start), their last answer, and the window their newest attempt's page
    loaded in ({w, h, scale} of its `load` event, docs/events.md).

    Summed up per participant in the database: reading every attempt's times into Python cost
    more than the queries (a timestamp takes psycopg about 7 us to parse, two per attempt)."""
    attempts = Attempt.objects.filter(study=study)
    per_person = (
        attempts.values("participant_id")
        .annotate(last_start=Max("created_at"), last_answer=Max("submitted_at"))
        .order_by()
    )
    heard = last_heard(attempts)
    windows = _last_windows(study=study)
    found: dict[int, dict] = {}
    for row in per_person:
        found[row["participant_id"]] = {
            "last_seen": max(filter(None, (heard.get(row["participant_id"]), row["last_start"]))),
            "last_answer": row["last_answer"],
            "viewport": windows.get(row["participant_id"]),
        }
    return found


def _last_windows(*, study: Study) -> dict[int, dict]:
    """Per participant: the window of the newest `load` of their newest attempt that has one
    (through the events' partial index on loads)."""
    newest_load = (
        Event.objects.filter(attempt__study=study, attempt__participant=OuterRef("participant_id"), kind="load")
        .order_by("-attempt__created_at", "-seq", "-index")
        .values("data")[:1]
    )
    loads = Enrollment.objects.filter(study=study).annotate(load=Subquery(newest_load, output_field=JSONField()))
    return {
        participant_id: {k: load.get(k) for k in ("w", "h", "scale")}
        for participant_id, load in loads.values_list("participant_id", "load")
        if isinstance(load, dict)
    }


def ago(then: datetime, now: datetime) -> str:
    """How long ago, in a few characters: just now, 4 min ago, 3 h ago, 2 days ago."""
    seconds = max(0.0, (now - then).total_seconds())
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


def person_label(external_ids: dict) -> str:
    """The id that names the person (PROLIFIC_PID, else workerId), or ""."""
    return next((str(external_ids[k]) for k in PERSON_IDS if external_ids.get(k)), "")


def crowd_id_list(external_ids: dict) -> list[tuple[str, str]]:
    """Every crowd id the invite link carried, in a fixed order (PROLIFIC_PID, workerId, ...)."""
    return [(key, str(external_ids[key])) for key in CROWD_IDS if external_ids.get(key)]


_BROWSERS = (
    ("Edg/", "Edge"),
    ("OPR/", "Opera"),
    ("SamsungBrowser/", "Samsung Internet"),
    ("Firefox/", "Firefox"),
    ("CriOS/", "Chrome"),
    ("FxiOS/", "Firefox"),
    ("Chrome/", "Chrome"),
    ("Version/", "Safari"),
)


def device_summary(user_agent: str) -> str:
    """A user agent in a few words: browser and version, system, and phone or tablet when it says."""
    if not user_agent:
        return ""
    browser = ""
    for token, name in _BROWSERS:
        found = re.search(re.escape(token) + r"(\d+)", user_agent)
        if found:
            browser = f"{name} {found.group(1)}"
            break
    if "HeadlessChrome" in user_agent:
        browser = browser.replace("Chrome", "Headless Chrome")
    if "Android" in user_agent:
        system = "Android"
    elif re.search(r"iPhone|iPad|iPod", user_agent):
        system = "iOS"
    elif "Windows" in user_agent:
        system = "Windows"
    elif "Mac OS X" in user_agent or "Macintosh" in user_agent:
        system = "macOS"
    elif "CrOS" in user_agent:
        system = "ChromeOS"
    elif "Linux" in user_agent:
        system = "Linux"
    else:
        system = ""
    form = "tablet" if re.search(r"iPad|Tablet", user_agent) else "phone" if "Mobi" in user_agent else ""
    return " · ".join(part for part in (browser, system, form) if part) or user_agent[:40]


def annotator_attempts(*, enrollment: Enrollment) -> list[dict]:
    """One annotator's attempts in their study, in the order they were shown: the puzzle and its
    own instruction, the answer and verdict, times, marks, and shapes to draw the answer over the
    puzzle's image (natural pixels)."""
    study = enrollment.study
    marks = attempt_marks(study=study)
    attempts = list(
        Attempt.objects.filter(study=study, participant_id=enrollment.participant_id)
        .select_related("puzzle")
        .annotate(late=submitted_late(study.time_limit_s))
        .order_by("created_at")
    )
    images = thumbnail_urls([a.puzzle for a in attempts])
    rows = []
    for number, attempt in enumerate(attempts, start=1):
        public = attempt.puzzle.public
        answers = [{"answer": attempt.answer, "correct": attempt.correct}] if attempt.is_submitted else []
        rows.append(
            {
                "number": number,
                "attempt": attempt,
                "puzzle": attempt.puzzle,
                "instruction": _instruction(attempt.puzzle),
                "state": _attempt_state(attempt, late=attempt.late),
                "times": _attempt_times(attempt),
                "marks": marks.get(attempt.pk, []),
                "image_url": images.get(attempt.puzzle_id),
                "size": public.get("image_size"),
                "dot_r": max(8, round((public.get("image_size") or [0])[0] / 28)),  # seen at thumbnail size
                "drawn": answer_marks(answers, public.get("grid_size"), public.get("image_size") or [0, 0]),
            }
        )
    return rows


def thumbnail_urls(puzzles: list[Puzzle]) -> dict[int, str]:
    """Each puzzle's main image URL (the first option for option types), by puzzle id."""
    wanted = {(p.pk, p.public.get("image")) for p in puzzles}
    rows = Asset.objects.filter(puzzle_id__in={pk for pk, _ in wanted}, key__in={k for _, k in wanted if k})
    return {a.puzzle_id: a.file.url for a in rows if (a.puzzle_id, a.key) in wanted}


def seconds_text(ms: float | None) -> str:
    """A time as the report writes it, seconds with one decimal ("31.5 s"); "–" when missing."""
    return f"{fmt_seconds(ms)} s" if ms is not None else fmt_seconds(ms)


def _attempt_times(attempt: Attempt) -> str:
    """Active and wall time in seconds ("12.3 · 31.5 s"); "–" before scoring."""
    if attempt.active_ms is None:
        return seconds_text(None)
    return f"{fmt_seconds(attempt.active_ms)} · {seconds_text(attempt.wall_ms)}"


def _instruction(puzzle: Puzzle) -> str:
    """The puzzle's instruction; a hosted family's is the peer's prompt (docs/hosted.md)."""
    public = puzzle.public
    if split_hosted_type(puzzle.type) is not None:
        payload = public.get("payload") or {}
        return str(payload.get("prompt") or public.get("hosted", {}).get("family") or puzzle.type)
    return str(public.get("instruction") or get_type(puzzle.type).instruction)


def _attempt_state(attempt: Attempt, *, late: bool) -> str:
    """The report's words: correct, wrong, timed out (late: reports.submitted_late), expired, open."""
    if attempt.submitted_at is not None:
        if attempt.correct:
            return "correct"
        return "timed out" if late else "wrong"
    if attempt.abandoned_at is not None:
        return "expired"
    return "open"


def enrollment_exclude(*, enrollment: Enrollment, by: User, reason: str) -> dict[str, list[int]]:
    """Excluded: left out of reports, and their places back in the queue for someone else
    (queue.enrollment_places_reopen), logged with the places reopened. Excluding someone already
    excluded (a double POST) changes the reason only: their places stay as the first exclusion
    reopened them, logged again with it, so including them later gives back what it took."""
    with transaction.atomic():
        already = Enrollment.objects.select_for_update().values_list("excluded", flat=True).get(pk=enrollment.pk)
        Enrollment.objects.filter(pk=enrollment.pk).update(excluded=True, excluded_reason=reason[:300])
        if already:
            places = _exclusion_places(enrollment)
        else:
            places = enrollment_places_reopen(enrollment=enrollment, now=timezone.now())
        AuditLog.objects.create(
            action=AuditLog.Action.ANNOTATOR_EXCLUDED,
            enrollment=enrollment,
            by=by,
            details={"reason": reason, **places},
        )
    return places


def _exclusion_places(enrollment: Enrollment) -> dict[str, list[int]]:
    """The places the standing exclusion reopened, as its latest log says."""
    log = AuditLog.objects.filter(enrollment=enrollment, action=AuditLog.Action.ANNOTATOR_EXCLUDED).first()
    details = log.details if log else {}
    return {"reopened": details.get("reopened", []), "done": details.get("done", [])}


def enrollment_include(*, enrollment: Enrollment, by: User) -> int:
    """Included again; the answered places their exclusion reopened and nobody took since are
    theirs again. Returns how many."""
    with transaction.atomic():
        Enrollment.objects.filter(pk=enrollment.pk).update(excluded=False, excluded_reason="")
        done = _exclusion_places(enrollment)["done"] if enrollment.excluded else []
        given_back = enrollment_places_restore(enrollment=enrollment, done=done, now=timezone.now())
        AuditLog.objects.create(
            action=AuditLog.Action.ANNOTATOR_INCLUDED,
            enrollment=enrollment,
            by=by,
            details={"reason_was": enrollment.excluded_reason, "given_back": given_back},
        )
    return given_back


def excluded_places(*, study: Study) -> tuple[int, int]:
    """(people excluded now, places their exclusions reopened), for the study's page."""
    excluded = list(study.enrollments.filter(excluded=True).values_list("pk", flat=True))
    logs = AuditLog.objects.filter(enrollment_id__in=excluded, action=AuditLog.Action.ANNOTATOR_EXCLUDED)
    latest: dict[int, list[int]] = {}
    for enrollment_id, details in logs.order_by("at").values_list("enrollment_id", "details"):
        latest[enrollment_id] = details.get("reopened", [])
    return len(excluded), sum(len(places) for places in latest.values())
