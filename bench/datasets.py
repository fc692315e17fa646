"""Dataset export figures: puzzle labels for 4,000 puzzles, and human trajectories re-rendered in
Chromium from a 4,000-attempt study. Targets on 2 cores: labels in under 10 s; trajectories at
120 attempts a minute or more.

    python bench/datasets.py [--per-type 200] [--recorded-per-type 5] [--people 40] [--sample 240]
                             [--workers 3 [4 ...]] [--out DIR]

Setup:
- the bank: --per-type puzzles of each of the 20 types (4,000 at 200), replay-verified;
- labels: a study of 3 people per puzzle (12,000 attempts without events: answers, right or
  wrong, some shared wrong answers), flags on one puzzle in twenty (half dismissed), retirements
  and truth corrections in the audit log, and two agent runs of k=5 rollouts on every puzzle;
- trajectories: a person solves --recorded-per-type puzzles of each type in Chromium on their own
  page (real events: curved approaches sampled by the browser, pauses, presses, holds, typing);
  each recorded attempt is then given to --people annotators (its events copied), so the study
  holds recorded x people attempts (5 x 20 x 40 = 4,000).
Timed: `labels export` (JSON lines and CSV) over the 4,000 puzzles; `trajectories export` of
--sample attempts of the 4,000 (taken a type at a time; 0 for all of them), with its rate. The
load average is printed before and after each (the machine may be shared).

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures; the
events are copied with one INSERT ... SELECT there).
"""

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from _setup import django_for_bench, planner_statistics


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


# --- setup: the bank ---------------------------------------------------------------------------
def bank(per_type: int) -> list:
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    started = time.perf_counter()
    bank_generate(split="test", per_type=per_type, bank_seed=77, workers=2)
    Puzzle.objects.filter(dataset="generated:77").update(status=Puzzle.Status.VERIFIED)
    puzzles = list(Puzzle.objects.filter(dataset="generated:77").order_by("type", "index"))
    print(f"setup: {len(puzzles)} puzzles generated in {time.perf_counter() - started:.0f} s", flush=True)
    return puzzles


def people(prefix: str, count: int) -> list:
    from django.contrib.auth import get_user_model

    from annotation.models import Participant

    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"{prefix}-{i}") for i in range(count)], batch_size=1000
    )
    return Participant.objects.bulk_create([Participant(user=u) for u in users], batch_size=1000)


# --- setup: labels -----------------------------------------------------------------------------
def labels_data(puzzles: list, rng: random.Random) -> None:
    from django.utils import timezone

    from annotation.models import AgentRun, Attempt, AuditLog, Enrollment, Flag, Rollout, Study

    started = time.perf_counter()
    study = Study.objects.create(name="bench-labels", split="test", puzzles_per_annotator=len(puzzles), overlap=3)
    crowd = people("bench-labels", 60)
    Enrollment.objects.bulk_create([Enrollment(study=study, participant=p) for p in crowd])
    now = timezone.now()
    attempts = []
    for n, puzzle in enumerate(puzzles):
        hard = n % 7 == 0
        for j in range(3):
            correct = rng.random() < (0.4 if hard else 0.9)
            attempts.append(
                Attempt(
                    participant=crowd[(n * 3 + j) % len(crowd)],
                    puzzle=puzzle,
                    study=study,
                    submitted_at=now,
                    correct=correct,
                    answer=None if correct else {"bench": rng.randrange(2 if hard else 5)},
                    active_ms=rng.uniform(2000, 20000),
                    wall_ms=rng.uniform(2000, 25000),
                    input_ok=rng.random() > 0.01,
                )
            )
    made = Attempt.objects.bulk_create(attempts, batch_size=5000)
    flags, audit = [], []
    for n, puzzle in enumerate(puzzles):
        if n % 20 == 0:
            status = Flag.Status.DISMISSED if n % 40 == 0 else Flag.Status.OPEN
            for j in range(2):
                attempt = made[n * 3 + j]
                who = attempt.participant_id
                flags.append(Flag(puzzle=puzzle, attempt=attempt, participant_id=who, reason="broken", status=status))
            if status == Flag.Status.DISMISSED:
                dismissed = {"reason": "ambiguous"}
                audit.append(AuditLog(action=AuditLog.Action.FLAG_DISMISSED, puzzle=puzzle, details=dismissed))
        if n % 200 == 1:
            audit.append(AuditLog(action=AuditLog.Action.TRUTH_CORRECTED, puzzle=puzzle, details={"note": "bench"}))
    Flag.objects.bulk_create(flags)
    AuditLog.objects.bulk_create(audit)
    retired = [p.pk for n, p in enumerate(puzzles) if n % 200 == 3]
    type(puzzles[0]).objects.filter(pk__in=retired).update(status="retired")
    AuditLog.objects.bulk_create(
        [AuditLog(action=AuditLog.Action.PUZZLE_RETIRED, puzzle_id=pk, details={"note": "bench"}) for pk in retired]
    )
    for name, skill in (("bench agent A", 0.3), ("bench agent B", 0.6)):
        run = AgentRun.objects.create(name=name, model=name, rollouts_per_puzzle=5, puzzles=[p.pk for p in puzzles])
        Rollout.objects.bulk_create(
            [
                Rollout(run=run, puzzle=p, index=i, status="done", submitted=True, correct=rng.random() < skill)
                for p in puzzles
                for i in range(5)
            ],
            batch_size=5000,
        )
    print(
        f"setup: labels data ({len(made)} attempts, {len(flags)} flags, {len(audit) + len(retired)} audit entries, "
        f"2 runs x 5 rollouts) in {time.perf_counter() - started:.0f} s",
        flush=True,
    )


# --- setup: trajectories -----------------------------------------------------------------------
async def _solve(page, uid: str, actions: list[dict], rng: random.Random) -> None:
    from annotation.agents.browser import TO_VIEWPORT, open_attempt, wait_submitted

    await open_attempt(page, uid, in_place=True)
    await page.wait_for_timeout(300)

    async def approach(x, y):
        [(vx, vy)] = await page.evaluate(TO_VIEWPORT, [[x, y]])
        await page.mouse.move(vx + rng.uniform(-80, 80), vy + rng.uniform(-80, 80), steps=rng.randint(15, 30))
        await page.mouse.move(vx, vy, steps=rng.randint(10, 20))
        await page.wait_for_timeout(rng.randint(80, 250))
        return vx, vy

    for action in actions:
        kind, args = action["action"], action["arguments"]
        if kind == "click":
            await approach(args["x"], args["y"])
            await page.mouse.down()
            await page.wait_for_timeout(rng.randint(50, 110))
            await page.mouse.up()
        elif kind == "drag":
            await approach(args["start_x"], args["start_y"])
            await page.mouse.down()
            [(ex, ey)] = await page.evaluate(TO_VIEWPORT, [[args["end_x"], args["end_y"]]])
            await page.mouse.move(ex, ey, steps=rng.randint(25, 45))
            await page.wait_for_timeout(120)
            await page.mouse.up()
        elif kind == "hold":
            await approach(args["x"], args["y"])
            await page.mouse.down()
            await page.wait_for_timeout(args["duration_ms"] + 300)
            await page.mouse.up()
        elif kind == "type_text":
            await approach(640, 860)
            await page.keyboard.type(args["text"], delay=rng.randint(80, 160))
        await page.wait_for_timeout(rng.randint(150, 400))
    await wait_submitted(page, 20)


def recorded_study(puzzles: list, per_type: int, copies: int, rng: random.Random):
    """A person solves per_type puzzles of each type in Chromium; each attempt is then copied to
    `copies` annotators in all."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation.agents.browser import on_pages
    from annotation.live.attempts import participant_for_user
    from annotation.models import Attempt, Enrollment, Event, Study
    from puzzles.registry import get_type

    started = time.perf_counter()
    study = Study.objects.create(name="bench-trajectories", split="test", puzzles_per_annotator=1000, overlap=copies)
    user = get_user_model().objects.create_user(username="bench-person", password="pw")
    person = participant_for_user(user=user)
    Enrollment.objects.create(study=study, participant=person)
    chosen: list = []
    seen: dict[str, int] = {}
    for puzzle in puzzles:
        if puzzle.status != "retired" and seen.get(puzzle.type, 0) < per_type:
            seen[puzzle.type] = seen.get(puzzle.type, 0) + 1
            chosen.append(puzzle)
    jobs = []
    for puzzle in chosen:
        kind = get_type(puzzle.type)
        attempt = Attempt.objects.create(participant=person, puzzle=puzzle, study=study)
        jobs.append((attempt.uid, kind.compile_actions(puzzle.truth, kind.layout(puzzle.public))))

    async def act(page, job):
        try:
            await _solve(page, job[0], job[1], rng)
        except Exception as error:  # counted below from the verdicts
            print(f"  recording {job[0]} failed: {type(error).__name__}", flush=True)
            await page.goto("about:blank")

    on_pages(jobs, user=user, workers=3, act=act)
    recorded = list(Attempt.objects.filter(study=study, participant=person, submitted_at__isnull=False))
    ok = sum(1 for a in recorded if a.correct and a.input_ok)
    print(
        f"setup: {len(recorded)} of {len(jobs)} puzzles solved in Chromium ({ok} correct with input evidence) "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    started = time.perf_counter()
    crowd = people("bench-traj", copies - 1)
    Enrollment.objects.bulk_create([Enrollment(study=study, participant=p) for p in crowd])
    fields: tuple[str, ...] = ("puzzle_id", "submitted_at", "answer", "correct", "reward", "reason", "wall_ms")
    fields += ("active_ms", "first_action_ms", "action_count", "clock_ok", "served_at", "input_ok")
    fields += ("acked_seq", "max_seq", "event_count", "event_bytes", "motion")
    copies_of = []
    for original in recorded:
        for p in crowd:
            copies_of.append(
                (original.pk, Attempt(participant=p, study=study, **{f: getattr(original, f) for f in fields}))
            )
    made = Attempt.objects.bulk_create([a for _, a in copies_of], batch_size=5000)
    pairs = [(old, new.pk) for (old, _), new in zip(copies_of, made)]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                'INSERT INTO annotation_event (attempt_id, seq, "index", kind, t, received, data) '
                "SELECT m.new_id, e.seq, e.index, e.kind, e.t, e.received, e.data FROM annotation_event e "
                "JOIN (SELECT unnest(%s::bigint[]) AS old_id, unnest(%s::bigint[]) AS new_id) m "
                "ON e.attempt_id = m.old_id",
                [[old for old, _ in pairs], [new for _, new in pairs]],
            )
    else:
        by_attempt: dict[int, list] = {}
        for event in Event.objects.filter(attempt_id__in=[a.pk for a in recorded]):
            by_attempt.setdefault(event.attempt_id, []).append(event)
        rows = [
            Event(attempt_id=new, seq=e.seq, index=e.index, kind=e.kind, t=e.t, received=e.received, data=e.data)
            for old, new in pairs
            for e in by_attempt.get(old, [])
        ]
        Event.objects.bulk_create(rows, batch_size=5000)
    total = Attempt.objects.filter(study=study).count()
    events = Event.objects.filter(attempt__study=study).count()
    print(
        f"setup: copied to {copies} annotators: {total} attempts, {events} events, in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return study


# --- the figures -------------------------------------------------------------------------------
def time_labels(out: Path) -> None:
    from annotation.datasets.labels import labels_write, puzzle_labels

    for fmt in ("jsonl", "csv"):
        print(f"labels {fmt}: before, {load()}", flush=True)
        started = time.perf_counter()
        labels = puzzle_labels(dataset="generated:77", split="test")
        built = time.perf_counter() - started
        labels_write(labels, out / f"labels.{fmt}", fmt)
        elapsed = time.perf_counter() - started
        counts = labels.meta["counts"]
        print(
            f"labels {fmt}: {len(labels.rows)} puzzles in {elapsed:.2f} s (rows {built:.2f} s, file "
            f"{elapsed - built:.2f} s; goal under 10 s); valid {counts['valid']}, suspect {counts['suspect']}, "
            f"mining {counts['mining']}; {load()}",
            flush=True,
        )


def time_trajectories(study, out: Path, sample: int, workers: int) -> None:
    from annotation.datasets.trajectories import trajectories_export

    print(f"trajectories: before, {load()}", flush=True)
    record = trajectories_export(study, out / "trajectories", workers=workers, limit=sample or None)
    rate = 60 * record["written"] / record["seconds"]
    print(
        f"trajectories: {record['written']} of {record['attempts']} attempts (of the study's "
        f"{study.attempts.count()}) in {record['seconds']:.1f} s with {workers} pages: {rate:.0f} attempts a minute "
        f"(goal 120); the replay reached the person's answer in {record['replay_same_answer']}; "
        f"{len(record['failed'])} failed; {load()}",
        flush=True,
    )
    if record["failed"]:
        print("  failed:", json.dumps(record["failed"][:5]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-type", type=int, default=200, help="puzzles per type (20 types)")
    parser.add_argument("--recorded-per-type", type=int, default=5, help="puzzles per type solved in Chromium")
    parser.add_argument("--people", type=int, default=40, help="annotators each recorded attempt is copied to")
    parser.add_argument("--sample", type=int, default=240, help="attempts to render (0: all of the study)")
    parser.add_argument("--workers", type=int, nargs="+", default=[3], help="pages rendering in parallel (each)")
    parser.add_argument("--out", help="where the files go (default: a scratch folder)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    django_for_bench()
    from django.db import connection

    print(f"database: {connection.vendor}; {load()}", flush=True)
    rng = random.Random(args.seed)
    out = Path(args.out or tempfile.mkdtemp(prefix="arena-datasets-"))
    out.mkdir(parents=True, exist_ok=True)
    puzzles = bank(args.per_type)
    labels_data(puzzles, rng)
    study = recorded_study(puzzles, args.recorded_per_type, args.people, rng)
    planner_statistics()
    time_labels(out)
    for workers in args.workers:
        time_trajectories(study, out / f"w{workers}", args.sample, workers)
    print(f"files in {out}")


if __name__ == "__main__":
    main()
