"""Raw-event export figures: event_lines() over 4 million events, streamed. Goal: peak memory flat in the
event count.

Setup: one study per size (--sizes, default 4,000,000 and 400,000 events) over --attempts attempts
each; events are inserted with COPY on PostgreSQL, bulk_create elsewhere. Each export then runs in a
fresh subprocess (this script with --child STUDY_ID) that writes every line to /dev/null and reports
its elapsed time and peak RSS (getrusage ru_maxrss), so the sizes' peaks can be compared.

    python bench/export.py [--sizes 4000000 400000] [--attempts 400]

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures).
"""

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _setup import ROOT, django_for_bench, planner_statistics

BATCH_EVENTS = 6  # events per batch (seq), as a page sends them
KINDS = ["pointermove"] * 8 + ["pointerdown", "pointerup", "act.click", "visibility"]


def peak_rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def reset_peak() -> bool:
    """Start the peak (ru_maxrss) afresh at the current RSS, so it measures the export alone (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def child(study_id: int) -> None:
    """Export one study's events to /dev/null; print one JSON line of figures."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
    import django

    django.setup()
    from annotation.models import Study
    from annotation.reporting.exports import event_lines

    study = Study.objects.get(pk=study_id)
    setup_peak = peak_rss_kib()  # imports and Django setup
    reset = reset_peak()
    baseline = rss_kib()
    count = size = 0
    started = time.perf_counter()
    with open(os.devnull, "w", encoding="utf-8") as sink:
        for line in event_lines(study=study):
            sink.write(line)
            count += 1
            size += len(line)
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {
                "events": count,
                "seconds": elapsed,
                "bytes": size,
                "setup_peak_kib": setup_peak,
                "reset": reset,
                "baseline_kib": baseline,
                "peak_kib": peak_rss_kib(),
            }
        )
    )


def event_rows(attempt_ids: list[int], events: int, rng: random.Random):
    """(attempt_id, seq, index, kind, t, received, data) rows, spread evenly over the attempts."""
    per, extra = divmod(events, len(attempt_ids))
    start_ms = 1.7e12
    for n, attempt_id in enumerate(attempt_ids):
        t = start_ms + n * 60_000
        for i in range(per + (n < extra)):
            seq, index = divmod(i, BATCH_EVENTS)
            t += rng.uniform(5, 30)
            yield (
                attempt_id,
                seq + 1,
                index,
                rng.choice(KINDS),
                round(t, 1),
                round(t + 40 + seq % 7, 1),
                {"x": round(rng.uniform(0, 1280), 1), "y": round(rng.uniform(0, 1080), 1), "pointer": "mouse"},
            )


def insert_events(attempt_ids: list[int], events: int, rng: random.Random) -> None:
    from django.db import connection, transaction

    from annotation.models import Event

    rows = event_rows(attempt_ids, events, rng)
    if connection.vendor == "postgresql":
        copy_sql = "COPY annotation_event (attempt_id, seq, index, kind, t, received, data) FROM STDIN"
        with (
            transaction.atomic(),
            connection.cursor() as cursor,
            cursor.connection.cursor() as cur,
            cur.copy(copy_sql) as copy,
        ):
            for attempt_id, seq, index, kind, t, received, data in rows:
                copy.write_row((attempt_id, seq, index, kind, t, received, json.dumps(data)))
        return
    batch = []
    for attempt_id, seq, index, kind, t, received, data in rows:
        batch.append(Event(attempt_id=attempt_id, seq=seq, index=index, kind=kind, t=t, received=received, data=data))
        if len(batch) == 5000:
            Event.objects.bulk_create(batch)
            batch = []
    Event.objects.bulk_create(batch)


def setup(sizes: list[int], attempts: int, seed: int) -> dict[int, int]:
    """One study per size; returns {events: study id}."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import Attempt, Participant
    from annotation.studies.setup import study_create
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    bank_generate(split="test", per_type=1)
    Puzzle.objects.filter(split="test").update(status=Puzzle.Status.VERIFIED)
    puzzles = list(Puzzle.objects.filter(split="test", status=Puzzle.Status.VERIFIED))
    stamp = time.time_ns()
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"bench-export-{stamp}-{i}") for i in range(20)]
    )
    participants = Participant.objects.bulk_create([Participant(user=u) for u in users])
    rng = random.Random(seed)
    out = {}
    for events in sizes:
        study = study_create(name=f"bench-export-{events}", split="test", puzzles_per_annotator=len(puzzles))
        made = Attempt.objects.bulk_create(
            [
                Attempt(
                    participant=participants[i % len(participants)],
                    puzzle=puzzles[i % len(puzzles)],
                    study=study,
                    submitted_at=timezone.now(),
                    correct=rng.random() < 0.8,
                )
                for i in range(attempts)
            ],
            batch_size=5000,
        )
        started = time.perf_counter()
        insert_events([a.pk for a in made], events, rng)
        elapsed = time.perf_counter() - started
        print(
            f"setup: {events} events over {attempts} attempts inserted in {elapsed:.1f} s "
            f"({events / elapsed:,.0f} rows/s)",
            flush=True,
        )
        out[events] = study.pk
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[4_000_000, 400_000], help="events per export")
    parser.add_argument("--attempts", type=int, default=400, help="attempts per study")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    scratch = django_for_bench()  # sets DATABASE_URL and MEDIA_ROOT in os.environ; the children inherit them
    from django.db import connection

    print(f"database: {connection.vendor}")
    studies = setup(args.sizes, args.attempts, args.seed)
    planner_statistics()
    connection.close()
    results = []
    for events in sorted(studies):
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", str(studies[events])],
            env=dict(os.environ),
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(
        "RSS at start: after Django setup, before the export; peak RSS: ru_maxrss"
        + (
            " during the export (peak reset at its start)"
            if all(r["reset"] for r in results)
            else " of the whole child process"
        )
    )
    print(
        f"{'events':>10} {'seconds':>8} {'events/s':>10} {'MiB out':>8} {'RSS at start MiB':>16} "
        f"{'peak RSS MiB':>12} {'growth MiB':>10}"
    )
    for r in results:
        print(
            f"{r['events']:>10} {r['seconds']:>8.1f} {r['events'] / r['seconds']:>10,.0f} "
            f"{r['bytes'] / 2**20:>8.0f} {r['baseline_kib'] / 1024:>16.1f} {r['peak_kib'] / 1024:>12.1f} "
            f"{(r['peak_kib'] - r['baseline_kib']) / 1024:>10.1f}"
        )
    if len(results) >= 2:
        small, large = results[0], results[-1]
        print(
            f"peak RSS {large['peak_kib'] / 1024:.1f} MiB at {large['events']} events vs "
            f"{small['peak_kib'] / 1024:.1f} MiB at {small['events']} "
            f"({large['events'] / small['events']:.0f}x the events, "
            f"{large['peak_kib'] / small['peak_kib']:.2f}x the peak)"
        )
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
