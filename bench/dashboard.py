"""Dashboard figure: update delay with 100 annotators active, on one live server (daphne).

--annotators people in one study, each on its own socket sending page events (a batch every
--batch-ms, 100 ms as the live page does) and submitting an answer every 3-5 s, then taking
their next puzzle (as the study's queue does); one staff socket watches /ws/dashboard/.

Delay of a submit: from the moment its batch was sent to the first dashboard frame whose
latest_submit_ms reaches the submitted_at the server stored for it (frames carry the newest
submit time, so that frame is the first summary that included it).

    python bench/dashboard.py [--annotators 100] [--seconds 60] [--batch-ms 100]

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures).
"""

import argparse
import asyncio
import bisect
import json
import random
import statistics
import time

from _setup import django_for_bench

TYPES = ("Dice_Count", "Object_Match")
SUBMIT_EVERY_S = (3.0, 5.0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# --- setup (synchronous, before the server starts) -----------------------------------------------
def make_study(per_type: int, annotators: int):
    """A study over freshly generated, verified puzzles, where every annotator may see every puzzle."""
    from annotation.studies.setup import study_create
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    seed = 4242
    bank_generate(split="test", per_type=per_type, types=list(TYPES), bank_seed=seed, workers=2)
    Puzzle.objects.filter(dataset=f"generated:{seed}", split="test").update(status=Puzzle.Status.VERIFIED)
    return study_create(
        name=f"dashboard bench {time.strftime('%H:%M:%S')}",
        split="test",
        types=list(TYPES),
        puzzles_per_annotator=per_type * len(TYPES),
        overlap=annotators,
    )


def make_people(study, count: int) -> tuple[list[tuple], str]:
    """(enrollment, session) per annotator, each with a first attempt assigned; and a staff session."""
    from django.contrib.auth import get_user_model

    from annotation.agents.browser import session_for
    from annotation.studies.queue import enrollment_consent, enrollment_join

    users = get_user_model().objects
    stamp = time.time_ns()
    people = []
    for i in range(count):
        user = users.create_user(username=f"dash-bench-{stamp}-{i}")
        enrollment = enrollment_join(study=study, user=user, external_ids={})
        enrollment_consent(enrollment=enrollment)
        people.append((enrollment, session_for(user)))
    staff = users.create_user(username=f"dash-bench-staff-{stamp}", is_staff=True)
    return people, session_for(staff)


def next_attempt(enrollment):
    """The annotator's next attempt with its puzzle loaded, or None when their queue is done."""
    from annotation.studies.queue import enrollment_next

    step = enrollment_next(enrollment=enrollment)
    if step.attempt is None:
        return None
    _ = step.attempt.puzzle.truth  # loaded here: the async side must not touch the database
    return step.attempt


def answer_events(attempt, now_ms: float, correct: bool) -> list[dict]:
    """The semantic actions of an answer, right or wrong (the two bench types)."""
    truth = attempt.puzzle.truth
    if attempt.puzzle.type == "Dice_Count":
        return [{"k": "act.type", "t": now_ms, "text": str(truth["sum"] + (0 if correct else 1))}]
    steps = (truth["correct_option_index"] + (0 if correct else 1)) % truth["option_count"]
    return [{"k": "act.cycle", "t": now_ms + i * 0.1, "delta": 1} for i in range(steps)]


# --- the run -----------------------------------------------------------------------------------
async def annotate(
    base: str, enrollment, session: str, deadline: float, submits: list, rng: random.Random, batch_s: float
):
    """One annotator: puzzle after puzzle until the deadline, events streaming meanwhile."""
    attempt = await asyncio.to_thread(next_attempt, enrollment)
    while attempt is not None and time.monotonic() < deadline:
        await solve(base, attempt, session, rng, submits, batch_s)
        attempt = await asyncio.to_thread(next_attempt, enrollment)


async def solve(base: str, attempt, session: str, rng: random.Random, submits: list, batch_s: float) -> None:
    """Stream page events on one attempt for 3-5 s, then submit and wait for the verdict frame."""
    import websockets

    url = base.replace("http", "ws") + f"/ws/attempts/{attempt.uid}/"
    headers = {"Cookie": f"sessionid={session}", "Origin": base}
    async with websockets.connect(url, additional_headers=headers, max_queue=None) as socket:
        submitted = asyncio.get_running_loop().create_future()
        reader = asyncio.create_task(_read_until_submitted(socket, submitted))
        now = time.time() * 1000
        seq = 1
        await socket.send(
            json.dumps(
                {
                    "type": "batch",
                    "seq": seq,
                    "events": [{"k": "load", "t": now, "w": 1280, "h": 1080, "scale": 1, "state": "visible"}],
                }
            )
        )
        until = time.monotonic() + rng.uniform(*SUBMIT_EVERY_S)
        while time.monotonic() < until:
            await asyncio.sleep(batch_s)
            seq += 1
            now = time.time() * 1000
            moves = [
                {"k": "pointermove", "t": now + i, "x": 100.0 + i, "y": 200.0, "pointer": "mouse"} for i in range(3)
            ]
            await socket.send(json.dumps({"type": "batch", "seq": seq, "events": moves}))
        now = time.time() * 1000
        events = answer_events(attempt, now, rng.random() < 0.8) + [{"k": "act.submit", "t": now + 1}]
        sent_ms = time.time() * 1000
        await socket.send(json.dumps({"type": "batch", "seq": seq + 1, "events": events}))
        await asyncio.wait_for(submitted, 30)
        submits.append((attempt.uid, sent_ms, time.time() * 1000 - sent_ms))
        reader.cancel()


async def _read_until_submitted(socket, submitted: asyncio.Future) -> None:
    async for raw in socket:
        if json.loads(raw)["type"] == "submitted" and not submitted.done():
            submitted.set_result(True)


async def watch(base: str, session: str, stop: asyncio.Event, frames: list) -> None:
    """The staff dashboard: every summary frame with its arrival time."""
    import websockets

    url = base.replace("http", "ws") + "/ws/dashboard/"
    async with websockets.connect(
        url, additional_headers={"Cookie": f"sessionid={session}", "Origin": base}, max_queue=None
    ) as socket:
        while not stop.is_set():
            try:
                raw = await asyncio.wait_for(socket.recv(), 0.5)
            except TimeoutError:
                continue
            frame = json.loads(raw)
            assert frame["type"] == "summary", frame
            frames.append((time.time() * 1000, frame["latest_submit_ms"] or 0.0))


async def run(base: str, people, staff_session: str, seconds: float, batch_s: float) -> tuple[list, list]:
    submits: list = []
    frames: list = []
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch(base, staff_session, stop, frames))
    deadline = time.monotonic() + seconds
    rng = random.Random(7)
    await asyncio.gather(
        *(annotate(base, e, s, deadline, submits, random.Random(rng.random()), batch_s) for e, s in people)
    )
    await asyncio.sleep(3)  # the last submits' frames
    stop.set()
    await watcher
    return submits, frames


# --- the figures -------------------------------------------------------------------------------
def delays(submits: list, frames: list) -> tuple[list[float], list[float], int]:
    """Per submit, the first frame (in arrival order) whose newest submit time reaches it: its
    arrival minus the submit's send (what staff see), and minus the stored submitted_at (the
    dashboard's own part, without the time the write waited in the server)."""
    from annotation.models import Attempt

    stored = {
        uid: at.timestamp() * 1000
        for uid, at in Attempt.objects.filter(uid__in=[uid for uid, _, _ in submits]).values_list("uid", "submitted_at")
    }
    arrivals, reached, newest = [], [], 0.0
    for arrival, latest in frames:
        newest = max(newest, latest)  # frames only ever include more submits
        arrivals.append(arrival)
        reached.append(newest)
    from_send, from_store, missed = [], [], 0
    for uid, sent_ms, _ in submits:
        i = bisect.bisect_left(reached, stored[uid] - 0.001)
        if i == len(reached):
            missed += 1
        else:
            from_send.append(arrivals[i] - sent_ms)
            from_store.append(arrivals[i] - stored[uid])
    return from_send, from_store, missed


def summary_cost(repeats: int = 20) -> float:
    """Median time of one summary on the data the run left, ms."""
    from annotation.reporting.dashboard import dashboard_summary

    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        dashboard_summary()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--per-type", type=int, default=15, help="puzzles per type in the study")
    parser.add_argument("--batch-ms", type=float, default=100, help="each page sends a batch this often")
    args = parser.parse_args()
    django_for_bench()
    from annotation.agents.server import live_server
    from annotation.models import Attempt, Event

    study = make_study(args.per_type, args.annotators)
    people, staff_session = make_people(study, args.annotators)
    with live_server() as base:
        started = time.perf_counter()
        submits, frames = asyncio.run(run(base, people, staff_session, args.seconds, args.batch_ms / 1000))
        elapsed = time.perf_counter() - started
    measured, after_store, missed = delays(submits, frames)
    verdicts = [v for _, _, v in submits]
    events = Event.objects.filter(attempt__study=study).count()
    print(
        f"annotators {args.annotators}, a batch every {args.batch_ms:.0f} ms, {elapsed:.0f} s: {len(submits)} submits "
        f"({len(submits) / elapsed:.1f}/s), {events} events stored ({events / elapsed:.0f}/s)"
    )
    print(f"dashboard frames {len(frames)} ({len(frames) / elapsed:.2f}/s)")
    print(
        f"dashboard update delay: p50 {statistics.median(measured):.0f} ms, p99 {percentile(measured, 0.99):.0f} ms "
        f"(n={len(measured)}, {missed} submits after the last frame)"
    )
    print(
        f"  of which after the submit was stored: p50 {statistics.median(after_store):.0f} ms, "
        f"p99 {percentile(after_store, 0.99):.0f} ms"
    )
    print(f"submit to verdict: p50 {statistics.median(verdicts):.0f} ms, p99 {percentile(verdicts, 0.99):.0f} ms")
    print(f"one summary on {Attempt.objects.count()} attempts: {summary_cost():.1f} ms (median)")


if __name__ == "__main__":
    main()
