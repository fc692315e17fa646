"""Catch-up after a PostgreSQL outage: pages streaming through it, how long after the database is
back until every page's backlog is acknowledged (issue 33: goal under 10 s with 4 pages).

A PostgreSQL server of the bench's own (tests/private_servers.py: its own port and folder; the
machine's server is never touched) behind one web process (daphne, as deployed). --pages Chromium
pages stream numbered events at 60 events/s (tests/faults/harness.py's generator) for a few
seconds, the server is stopped ("fast": every connection ended) for --outage seconds and started
again. For each page: the catch-up, from the moment the server accepts connections again until the
page holds an acknowledgement of every batch it had made by then, and its first acknowledgement
after the return. Then every generated number is counted among the stored events (nothing lost).

    python bench/recovery.py [--pages 4] [--outage 20] [--runs 1]

Printed beside the times: the web process's CPU time over the catch-up, the bench process's own
(its Chromium, still running, is not counted), and the load average from /proc/loadavg (the
machine is shared).
"""

import argparse
import asyncio
import contextlib
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
STREAM_BEFORE_S = 3.0  # streaming before the outage
STREAM_AFTER_S = 2.0  # streaming after every page caught up
CATCH_UP_LIMIT_S = 120.0


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def process_cpu_s(pid: int) -> float:
    """utime + stime of a process (and of its ended children), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def environment_before_django() -> None:
    """Throwaway media and secrets (as bench/_setup.py); the database is the private server,
    whose port is known only once it runs: a placeholder until then (no connection is made)."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir=ROOT / "var"))
    os.environ["DATABASE_URL"] = "postgres://postgres@127.0.0.1:1/arena"
    os.environ.setdefault("MEDIA_ROOT", str(scratch / "media"))
    os.environ.setdefault("SECRET_KEY", f"bench-only-{secrets.token_urlsafe(40)}")
    os.environ.setdefault("PUZZLE_BANK_SECRET", f"bench-only-{secrets.token_urlsafe(40)}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")


def attempts_for(pages: int):
    from django.contrib.auth import get_user_model

    from annotation.agents.browser import session_for
    from annotation.live.attempts import attempt_start, participant_for_user
    from puzzles.models import Puzzle
    from puzzles.services import bank_generate

    if not Puzzle.objects.filter(type="Geometry_Click", split="test").exists():
        bank_generate(split="test", per_type=1, types=["Geometry_Click"], workers=1)
    puzzle = Puzzle.objects.filter(type="Geometry_Click", split="test").first()
    made = []
    for i in range(pages):
        user = get_user_model().objects.create_user(username=f"recovery{i}-{time.time_ns()}")
        made.append((attempt_start(participant=participant_for_user(user=user), puzzle=puzzle), session_for(user)))
    return made


async def catch_up(page, back_at: float) -> tuple[float, float]:
    """(first ack after the return, every batch made by then acknowledged): seconds from back_at."""
    from tests.faults.harness import STATE

    state = await page.evaluate(STATE)
    target, acked, first = state["nextSeq"] - 1, state["acked"], None
    while time.monotonic() - back_at < CATCH_UP_LIMIT_S:
        state = await page.evaluate(STATE)
        now = time.monotonic() - back_at
        if first is None and state["acked"] > acked:
            first = now
        if state["acked"] >= target:
            return (first if first is not None else now), now
        await asyncio.sleep(0.02)
    raise SystemExit(f"a page did not catch up within {CATCH_UP_LIMIT_S:g} s: {state}")


async def one_run(pg, server_url: str, server_pid: int, pages: int, outage_s: float) -> dict:
    from annotation.agents.browser import chromium
    from tests.faults.harness import PER_TICK, page_on

    made = await asyncio.to_thread(attempts_for, pages)
    async with chromium() as browser:
        shown = [await page_on(browser, server_url, session, attempt.uid) for attempt, session in made]
        for page in shown:
            await page.evaluate(f"window.__gen.start({PER_TICK})")
        await asyncio.sleep(STREAM_BEFORE_S)
        await asyncio.to_thread(pg.stop, "fast")
        await asyncio.sleep(outage_s)
        await asyncio.to_thread(pg.start)  # returns once the server accepts connections
        back_at, cpu_server, cpu_own = time.monotonic(), process_cpu_s(server_pid), own_cpu_s()
        times = await asyncio.gather(*(catch_up(page, back_at) for page in shown))
        cpu = (process_cpu_s(server_pid) - cpu_server, own_cpu_s() - cpu_own)
        await asyncio.sleep(STREAM_AFTER_S)
        generated = [await page.evaluate("window.__gen.stop()") for page in shown]
        for page in shown:  # the last events out, every batch acknowledged
            await page.wait_for_function("window.arena.state().pending === 0", timeout=60000)
    lost = await asyncio.to_thread(count_lost, [attempt for attempt, _ in made], generated)
    return {"times": times, "cpu": cpu, "generated": sum(generated), "lost": lost}


def count_lost(attempts, generated: list[int]) -> int:
    from django.db import connection

    from tests.faults.harness import tally

    with contextlib.suppress(Exception):  # this thread's connection died in the outage
        connection.close()

    return sum(tally(attempt, made)["lost"] for attempt, made in zip(attempts, generated, strict=True))


def report(run: int, result: dict, pages: int, outage_s: float) -> float:
    firsts = [first for first, _ in result["times"]]
    catch_ups = [done for _, done in result["times"]]
    server_cpu, bench_cpu = result["cpu"]
    print(f"run {run}: {pages} pages, PostgreSQL down {outage_s:g} s")
    print(f"  first ack after the return, per page: {', '.join(f'{t:.2f}' for t in firsts)} s")
    print(
        f"  catch-up (every batch made by the return acknowledged), per page: "
        f"{', '.join(f'{t:.2f}' for t in catch_ups)} s; the last {max(catch_ups):.2f} s"
    )
    print(
        f"  CPU over the catch-up: web process {server_cpu:.2f} s, "
        f"the bench process {bench_cpu:.2f} s (its Chromium apart)"
    )
    print(f"  events generated {result['generated']}, lost {result['lost']}; load average {loadavg()}")
    return max(catch_ups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=4)
    parser.add_argument("--outage", type=float, default=20.0, help="seconds PostgreSQL is down")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    environment_before_django()
    from django.conf import settings

    from tests.private_servers import private_postgres

    print(f"load average at start {loadavg()}")
    with private_postgres() as pg:
        settings.DATABASES["default"]["PORT"] = pg.port  # before any connection is made
        import django

        django.setup()
        from annotation.agents.server import web_process

        with web_process() as (url, process):
            worst = []
            for run in range(1, args.runs + 1):
                result = asyncio.run(one_run(pg, url, process.pid, args.pages, args.outage))
                worst.append(report(run, result, args.pages, args.outage))
    if len(worst) > 1:
        print(f"last page caught up, median of {len(worst)} runs: {statistics.median(worst):.2f} s")
    print(f"load average at end {loadavg()}")


if __name__ == "__main__":
    main()
