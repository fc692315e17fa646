"""Event path figures on one live server process (daphne, as deployed).

1. 50 sockets (--sockets) each send 60 events/s (a batch of 6 every 100 ms) for --seconds:
   batch-to-ack latency p50/p99, events/s sustained, events stored against events sent.
2. Submit-to-verdict: --submits attempts each send [load, click, submit]; time to the
   server's "submitted" frame, p50/p99.

    python bench/event_path.py [--sockets 50] [--seconds 20] [--submits 200]

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures).
"""

import argparse
import asyncio
import json
import statistics
import time

from _setup import django_for_bench


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def make_attempts(puzzle_type: str, count: int, prefix: str):
    from django.contrib.auth import get_user_model

    from annotation.agents.browser import session_for
    from annotation.live.attempts import attempt_start, participant_for_user
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    bank_generate(split="test", per_type=1, types=[puzzle_type], workers=1)
    puzzle = Puzzle.objects.filter(type=puzzle_type, split="test").first()
    out = []
    for i in range(count):
        user = get_user_model().objects.create_user(username=f"{prefix}{i}-{time.time_ns()}")
        attempt = attempt_start(participant=participant_for_user(user=user), puzzle=puzzle)
        out.append((attempt, session_for(user)))
    return puzzle, out


async def stream(base: str, attempt, session: str, seconds: float, latencies: list, counts: dict):
    import websockets

    url = base.replace("http", "ws") + f"/ws/attempts/{attempt.uid}/"
    headers = {"Cookie": f"sessionid={session}", "Origin": base}
    sent_at: dict[int, float] = {}
    acked = 0
    async with websockets.connect(url, additional_headers=headers, max_queue=None) as socket:

        async def receive():
            nonlocal acked
            async for raw in socket:
                frame = json.loads(raw)
                if frame["type"] == "ack":
                    now = time.perf_counter()
                    for seq in range(acked + 1, frame["seq"] + 1):
                        latencies.append((now - sent_at[seq]) * 1000)
                    acked = max(acked, frame["seq"])
                elif frame["type"] == "error":
                    counts["errors"] += 1

        receiver = asyncio.create_task(receive())
        seq, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            seq += 1
            now_ms = time.time() * 1000
            events = [
                {"k": "pointermove", "t": now_ms + i, "x": 10.0 + i, "y": 20.0, "pointer": "mouse"} for i in range(6)
            ]
            sent_at[seq] = time.perf_counter()
            await socket.send(json.dumps({"type": "batch", "seq": seq, "events": events}))
            counts["sent"] += len(events)
            await asyncio.sleep(max(0.0, start + seq * 0.1 - time.perf_counter()))
        deadline = time.perf_counter() + 10
        while acked < seq and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        receiver.cancel()


async def submit_once(base: str, attempt, session: str, point) -> float:
    import websockets

    url = base.replace("http", "ws") + f"/ws/attempts/{attempt.uid}/"
    async with websockets.connect(url, additional_headers={"Cookie": f"sessionid={session}", "Origin": base}) as socket:
        now = time.time() * 1000
        events = [
            {"k": "load", "t": now, "w": 1280, "h": 1080, "scale": 1, "state": "visible"},
            {"k": "act.click", "t": now + 1, "x": point[0], "y": point[1]},
            {"k": "act.submit", "t": now + 2},
        ]
        started = time.perf_counter()
        await socket.send(json.dumps({"type": "batch", "seq": 1, "events": events}))
        async for raw in socket:
            if json.loads(raw)["type"] == "submitted":
                return (time.perf_counter() - started) * 1000


async def submits(base: str, pairs, point, concurrency: int = 4) -> list[float]:
    queue = list(pairs)
    out: list[float] = []

    async def worker():
        while queue:
            attempt, session = queue.pop()
            out.append(await submit_once(base, attempt, session, point))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--submits", type=int, default=200)
    args = parser.parse_args()
    django_for_bench()
    from annotation.agents.server import live_server
    from annotation.models import Event

    _, streams = make_attempts("Dice_Count", args.sockets, "stream")
    mask_puzzle, submitters = make_attempts("Geometry_Click", args.submits, "submit")
    latencies: list[float] = []
    counts = {"sent": 0, "errors": 0}
    with live_server() as base:
        started = time.perf_counter()
        asyncio.run(_all_streams(base, streams, args.seconds, latencies, counts))
        elapsed = time.perf_counter() - started
        stored = Event.objects.filter(attempt__in=[a for a, _ in streams]).count()
        verdicts = asyncio.run(submits(base, submitters, mask_puzzle.truth["point"]))
    print(f"sockets {args.sockets} x 60 events/s for {args.seconds:.0f} s")
    print(f"events sent {counts['sent']}, stored {stored}, lost {counts['sent'] - stored}, errors {counts['errors']}")
    print(f"sustained {stored / elapsed:.0f} events/s stored ({counts['sent'] / elapsed:.0f} sent/s)")
    print(
        f"batch to ack: p50 {statistics.median(latencies):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms "
        f"(n={len(latencies)})"
    )
    print(
        f"submit to verdict: p50 {statistics.median(verdicts):.1f} ms, p99 {percentile(verdicts, 0.99):.1f} ms "
        f"(n={len(verdicts)})"
    )


async def _all_streams(base, streams, seconds, latencies, counts):
    await asyncio.gather(*(stream(base, a, s, seconds, latencies, counts) for a, s in streams))


if __name__ == "__main__":
    main()
