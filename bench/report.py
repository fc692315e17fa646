"""Study report figures: 4,000 puzzles x 10 annotators (40,000 attempts). Goal: the report in 2 s or less.

Setup (not timed as the figure): the test split's puzzles are generated (--per-type each of the 20
types), marked verified, a study with overlap 10 is created, 10 annotators enrolled, and every
annotator's submitted, scored attempt on every puzzle is inserted directly (bulk_create), each
with the motion features scoring keeps (Attempt.motion); then --agent-runs agent runs, one
rollout per puzzle each, with their attempts and motion.
Each annotator meets the puzzles at places 1..N of their run in an order of their own (the report's
by-position section reads it). Then study_report() is timed --runs times (best and median wall
seconds, and the CPU seconds of this process, which does the report's Python work; PostgreSQL's
own CPU is in another process), with the load average, and each format's rendering separately.
The report includes people against each agent run (paired by puzzle, intervals clustered by person)
and the position halves.

    python bench/report.py [--per-type 200] [--annotators 10] [--runs 3] [--seed 1]

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures).
"""

import argparse
import os
import random
import shutil
import statistics
import time
from datetime import timedelta

from _setup import django_for_bench, planner_statistics

BATCH = 5000


def motion(rng: random.Random, *, hand: bool) -> dict:
    """Motion features as scoring keeps them: a hand's curved, densely sampled path, or a pointer
    that jumps and presses."""
    if not hand:
        return {
            "samples": 6,
            "path_px": 900.0,
            "straightness": 1.0,
            "peak_speed": 450000.0,
            "pause_ms": 0.5,
            "density": 0.67,
            "human_likeness": 0.25,
        }
    path = rng.uniform(300, 2000)
    return {
        "samples": int(path / 8),
        "path_px": round(path, 1),
        "straightness": round(rng.uniform(0.8, 0.98), 4),
        "peak_speed": round(rng.uniform(1500, 6000), 1),
        "pause_ms": round(rng.uniform(60, 400), 1),
        "density": 12.5,
        "human_likeness": 1.0,
    }


def agent_rollouts(study, runs: int, rng: random.Random) -> None:
    """Each run: one rollout per puzzle of the study, with its scored attempt."""
    from django.utils import timezone

    from annotation.live.attempts import system_participant
    from annotation.models import AgentRun, Attempt, Participant, Rollout, Slot

    puzzles = list(Slot.objects.filter(study=study, copy=0).values_list("puzzle_id", flat=True))
    now = timezone.now()
    for number in range(runs):
        agent = system_participant(kind=Participant.Kind.AGENT, label=f"bench-{number}")
        run = AgentRun.objects.create(name=f"bench run {number}", rollouts_per_puzzle=1, participant=agent)
        attempts = Attempt.objects.bulk_create(
            [
                Attempt(
                    participant=agent,
                    puzzle_id=puzzle,
                    submitted_at=now,
                    correct=rng.random() < 0.4,
                    motion=motion(rng, hand=False),
                )
                for puzzle in puzzles
            ],
            batch_size=BATCH,
        )
        Rollout.objects.bulk_create(
            [
                Rollout(run=run, puzzle_id=a.puzzle_id, index=0, attempt=a, status="done", correct=a.correct)
                for a in attempts
            ],
            batch_size=BATCH,
        )


def setup(per_type: int, annotators: int, seed: int, runs: int):
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import Attempt, Enrollment, Participant, Slot
    from annotation.studies.setup import study_create
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    started = time.perf_counter()
    bank_generate(split="test", per_type=per_type)
    generated = time.perf_counter() - started
    Puzzle.objects.filter(split="test").update(status=Puzzle.Status.VERIFIED)
    puzzles = Puzzle.objects.filter(split="test", status=Puzzle.Status.VERIFIED).count()

    started = time.perf_counter()
    study = study_create(name="bench-report", split="test", puzzles_per_annotator=puzzles, overlap=annotators)
    stamp = time.time_ns()
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"bench-report-{stamp}-{i}") for i in range(annotators)]
    )
    participants = Participant.objects.bulk_create(
        [Participant(user=user, kind=Participant.Kind.HUMAN) for user in users]
    )
    now = timezone.now()
    enrollments = Enrollment.objects.bulk_create(
        [Enrollment(study=study, participant=p, consented_at=now, finished_at=now) for p in participants]
    )

    rng = random.Random(seed)
    # Copy c of every puzzle goes to annotator c. One UPDATE per copy: bulk_update's CASE WHEN
    # is quadratic in the batch size (about 50 s for these 40,000 slots on PostgreSQL).
    for copy, enrollment in enumerate(enrollments):
        Slot.objects.filter(study=study, copy=copy).update(enrollment=enrollment, assigned_at=now, done=True)
    slots = list(Slot.objects.filter(study=study).order_by("rank", "copy").values_list("pk", "puzzle_id", "copy"))
    places = {copy: rng.sample(range(1, puzzles + 1), puzzles) for copy in range(annotators)}  # each one's order
    attempts = []
    for slot_id, puzzle_id, copy in slots:
        enrollment = enrollments[copy]
        correct = rng.random() < 0.8
        wall = rng.lognormvariate(9.0, 0.6)  # median ~8.1 s
        attempts.append(
            Attempt(
                participant_id=enrollment.participant_id,
                puzzle_id=puzzle_id,
                study=study,
                slot_id=slot_id,
                position=places[copy].pop(),
                purpose=Attempt.Purpose.SCORED,
                submitted_at=now + timedelta(milliseconds=wall),
                correct=correct,
                reward=1.0 if correct else 0.0,
                wall_ms=wall,
                active_ms=wall * rng.uniform(0.8, 1.0),
                first_action_ms=wall * rng.uniform(0.2, 0.6),
                action_count=rng.randint(1, 8),
                clock_ok=True,
                answer={"point": [rng.randint(0, 400), rng.randint(0, 400)]},
                motion=motion(rng, hand=True),
            )
        )
    Attempt.objects.bulk_create(attempts, batch_size=BATCH)
    agent_rollouts(study, runs, rng)
    stored = time.perf_counter() - started
    return study, puzzles, len(attempts), generated, stored


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-type", type=int, default=200, help="test puzzles per type (20 types)")
    parser.add_argument("--annotators", type=int, default=10, help="the study's overlap: everyone does every puzzle")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--agent-runs", type=int, default=2, help="agent runs, one rollout per puzzle each")
    args = parser.parse_args()
    scratch = django_for_bench()
    from django.db import connection

    from annotation.reporting.render import render
    from annotation.reporting.reports import study_report

    study, puzzles, attempts, generated, stored = setup(args.per_type, args.annotators, args.seed, args.agent_runs)
    planner_statistics()
    print(f"database: {connection.vendor}")
    print(
        f"setup: {puzzles} puzzles generated in {generated:.1f} s; study, {args.annotators} annotators and "
        f"{attempts} attempts stored in {stored:.1f} s"
    )

    times, cpu = [], []
    load_before = os.getloadavg()
    for _ in range(args.runs):
        started, cpu_started = time.perf_counter(), time.process_time()
        report = study_report(study=study)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    load_after = os.getloadavg()
    overall = report["overall"]
    print(
        f"report saw: {overall['attempts']} attempts, {overall['puzzles']} puzzles, "
        f"{report['annotators']} annotators, {len(report['types'])} types "
        f"(pooled Pass@1 {overall['pass1_pooled']:.3f}); {len(report['agents'])} agent runs; motion rows "
        f"{len(report['motion']['rows'])} over {sum(r['attempts'] for r in report['motion']['overall'])} attempts"
    )
    versus = report["versus"]
    print(
        f"people vs agents: {len(versus)} runs, {sum(v['overall']['puzzles'] for v in versus)} paired puzzles; "
        f"by position: {report['by_position']['overall']['first']['answers']} + "
        f"{report['by_position']['overall']['second']['answers']} answers in the two halves"
    )
    print(
        f"study_report x{args.runs}: wall best {min(times):.3f} s, median {statistics.median(times):.3f} s "
        f"(runs: {', '.join(f'{t:.3f}' for t in times)}; goal: 2 s or less); "
        f"CPU of this process: best {min(cpu):.3f} s, median {statistics.median(cpu):.3f} s"
    )
    print(
        "load average (1, 5, 15 min): before "
        + ", ".join(f"{v:.2f}" for v in load_before)
        + "; after "
        + ", ".join(f"{v:.2f}" for v in load_after)
        + f" on {os.cpu_count()} CPUs"
    )
    for fmt in ("json", "csv", "md", "html"):
        started = time.perf_counter()
        text = render(report, fmt)
        elapsed = time.perf_counter() - started
        print(f"render {fmt:<4}: {elapsed:.3f} s ({len(text.encode()) / 1024:.0f} KiB)")
    connection.close()
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
