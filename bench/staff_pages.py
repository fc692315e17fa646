"""Staff pages over a large study: the study page, quality control (every annotator's row) and
one annotator's attempts, each asked for --runs times through Django's test client as a signed-in
staff member. Goal: every page in under 1 s.

Setup (not timed as the figure): --per-type puzzles of each of the 20 types, replay-verified by
fiat; a study over them with overlap --annotators, every slot taken and answered (4,000 attempts at
the defaults); each attempt with the events a page leaves (a load with its window, --samples
pointer samples, a press, a semantic action, a submit, beats; one attempt in five hidden once,
one in fifty three times), as the quality marks and the last-seen column read them.

    python bench/staff_pages.py [--per-type 5] [--annotators 40] [--samples 120] [--runs 5]

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures).
"""

import argparse
import random
import statistics
import time
from datetime import timedelta

from _setup import django_for_bench, planner_statistics

BATCH = 5000


def page_events(attempt_id: int, t0: float, samples: int, hidden: int, rng: random.Random) -> list:
    """The events of one attempt, as a page logs them (docs/events.md), in batches of 10."""
    from annotation.models import Event

    kinds = [("load", {"w": 1366, "h": 768, "scale": 0.66})]
    x, y = 300.0, 700.0
    for _ in range(samples):
        x, y = x + rng.uniform(-2, 6), y + rng.uniform(-6, 2)
        kinds.append(("pointermove", {"x": round(x, 1), "y": round(y, 1), "pointer": "mouse"}))
    for _ in range(hidden):
        kinds += [("visibilitychange", {"state": "hidden"}), ("visibilitychange", {"state": "visible"})]
    kinds += [
        ("pointerdown", {"x": round(x, 1), "y": round(y, 1), "button": 0, "pointer": "mouse"}),
        ("pointerup", {"x": round(x, 1), "y": round(y, 1), "button": 0, "pointer": "mouse"}),
        ("act.click", {"x": 10, "y": 10}),
        ("beat", {}),
        ("act.submit", {}),
    ]
    return [
        Event(
            attempt_id=attempt_id,
            seq=1 + n // 10,
            index=n % 10,
            kind=kind,
            t=t0 + 16 * n,
            received=t0 + 16 * n + 40,
            data=data,
        )
        for n, (kind, data) in enumerate(kinds)
    ]


def setup(per_type: int, annotators: int, samples: int, seed: int):
    from django.utils import timezone

    from annotation.studies.setup import study_create
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    started = time.perf_counter()
    bank_generate(split="test", per_type=per_type, workers=2)
    Puzzle.objects.filter(split="test").update(status=Puzzle.Status.VERIFIED)
    puzzles = Puzzle.objects.filter(split="test", status=Puzzle.Status.VERIFIED).count()
    study = study_create(name="bench-staff", split="test", puzzles_per_annotator=puzzles, overlap=annotators)
    study.status = study.Status.OPEN
    study.save(update_fields=["status"])
    now, rng = timezone.now(), random.Random(seed)
    enrollments = crowd(study, annotators, now)
    attempts = answers(study, enrollments, now, rng)
    events = events_of(attempts, samples, rng)
    planner_statistics()
    print(
        f"setup: {puzzles} puzzles, {annotators} annotators, {len(attempts)} attempts, {events} events "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return study


def crowd(study, annotators: int, now) -> list:
    """The study's annotators with their crowd ids and browser; most finished, the last three
    still at work. Copy c of every puzzle is annotator c's."""
    from django.contrib.auth import get_user_model

    from annotation.models import Enrollment, Participant, Slot

    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"bench-staff-{i}") for i in range(annotators)]
    )
    participants = Participant.objects.bulk_create([Participant(user=u) for u in users])
    enrollments = Enrollment.objects.bulk_create(
        [
            Enrollment(
                study=study,
                participant=p,
                consented_at=now - timedelta(hours=1),
                finished_at=now if i < annotators - 3 else None,
                user_agent="Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36",
                external_ids={"PROLIFIC_PID": f"pid{i:04d}"},
                crowd_id=f"pid{i:04d}",
            )
            for i, p in enumerate(participants)
        ]
    )
    for copy, enrollment in enumerate(enrollments):
        Slot.objects.filter(study=study, copy=copy).update(enrollment=enrollment, assigned_at=now, done=True)
    return enrollments


def answers(study, enrollments: list, now, rng: random.Random) -> list:
    """Every place answered by its annotator a minute ago (the last annotator half an hour ago:
    stuck), four in five right, one in a hundred without input evidence."""
    from annotation.models import Attempt, Slot

    slots = Slot.objects.filter(study=study).order_by("rank", "copy").values_list("pk", "puzzle_id", "copy")
    attempts = []
    for slot_id, puzzle_id, copy in slots:
        wall = rng.lognormvariate(9.0, 0.6)
        answered = now - timedelta(minutes=30 if copy == len(enrollments) - 1 else 1)
        attempts.append(
            Attempt(
                participant_id=enrollments[copy].participant_id,
                puzzle_id=puzzle_id,
                study=study,
                slot_id=slot_id,
                served_at=answered - timedelta(milliseconds=wall),
                submitted_at=answered,
                correct=rng.random() < 0.8,
                wall_ms=wall,
                active_ms=wall * rng.uniform(0.8, 1.0),
                action_count=2,
                clock_ok=True,
                input_ok=rng.random() > 0.01,
            )
        )
    return Attempt.objects.bulk_create(attempts, batch_size=BATCH)


def events_of(attempts: list, samples: int, rng: random.Random) -> int:
    """Each attempt's page events stored, a few hundred attempts at a time; how many."""
    from annotation.models import Event
    from puzzles.workers import batched

    stored = 0
    for group in batched(attempts, 200):
        rows = []
        for attempt in group:
            hidden = 3 if rng.random() < 0.02 else (1 if rng.random() < 0.2 else 0)
            rows += page_events(attempt.pk, attempt.served_at.timestamp() * 1000, samples, hidden, rng)
        Event.objects.bulk_create(rows, batch_size=BATCH)
        stored += len(rows)
    return stored


def time_pages(study, runs: int) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    staff = get_user_model().objects.create_user("bench-staff-boss", is_staff=True)
    client = Client()
    client.force_login(staff)
    one = study.enrollments.order_by("joined_at").first()
    pages = {
        "study page": f"/studies/{study.pk}/",
        "quality control": f"/studies/{study.pk}/annotators/",
        "one annotator": f"/studies/{study.pk}/annotators/{one.pk}/attempts/",
    }
    for name, url in pages.items():
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            with CaptureQueriesContext(connection) as queries:
                response = client.get(url, HTTP_HOST="localhost")
            times.append(time.perf_counter() - started)
            assert response.status_code == 200, (url, response.status_code)
        print(
            f"{name:16s} best {min(times):.3f} s, median {statistics.median(times):.3f} s "
            f"({len(queries.captured_queries)} queries, {len(response.content) // 1024} KiB; goal under 1 s)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-type", type=int, default=5, help="puzzles per type (20 types)")
    parser.add_argument("--annotators", type=int, default=40, help="annotators, each answering every puzzle")
    parser.add_argument("--samples", type=int, default=120, help="pointer samples per attempt")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    django_for_bench()
    from django.db import connection

    print(f"database: {connection.vendor}", flush=True)
    study = setup(args.per_type, args.annotators, args.samples, args.seed)
    time_pages(study, args.runs)


if __name__ == "__main__":
    main()
