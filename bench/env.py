"""The training environment under load: one `manage.py env serve` process, 1, 2, 4 and 8
concurrent sessions driven through openenv-core's published client.

    DATABASE_URL=postgres://.../fresh python bench/env.py [--sessions 1 2 4 8] [--episodes 3]

Each session plays E episodes of a Geometry_Click puzzle: reset, then a screenshot, a click on
the empty stage (the page takes it, nothing is submitted), a screenshot, a click, and done. Per
N it prints resets per minute, steps per second, step latency p50/p99 per action (the click's
figure includes the published 500 + 800 ms waits and its screenshot), rows written to the
database per step (resets included: events, turns, attempts), memory per session (the
server's process tree, proportional set size: env serve, its page server, Chromium, over the
tree's size before the phase, divided by N), the tree's CPU per step (resets included) and the
load average; then, one session alone, the CPU of a screenshot, a click and a reset apart, and
each split by process (env serve, page server, Playwright's driver, Chromium's browser, renderer,
GPU and utility processes, and PostgreSQL's backends for this database, which the other CPU
figures leave out). `--sessions` with no number runs that part alone. Uses
a throwaway SQLite database unless DATABASE_URL is set (use a fresh PostgreSQL database for
figures).
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _setup import ROOT, django_for_bench

TICKS = os.sysconf("SC_CLK_TCK")
ACTIONS = [
    {"action": "screenshot"},
    {"action": "click", "arguments": {"x": 5, "y": 5}},
    {"action": "screenshot"},
    {"action": "click", "arguments": {"x": 1270, "y": 5}},
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, nargs="*", default=[1, 2, 4, 8], help="none: only the CPU apart")
    parser.add_argument("--episodes", type=int, default=3, help="episodes per session per N")
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()
    django_for_bench()
    from annotation.environment.tokens import token_create
    from puzzles.services import bank_generate

    bank_generate(split="test", per_type=4, types=["Geometry_Click"], bank_seed=5, workers=1)
    _, key = token_create(name=f"bench-{os.getpid()}", datasets=["generated:5"], splits=["test"], max_sessions=64)
    server = _serve(args.port, max(args.sessions, default=1))
    try:
        base = f"http://127.0.0.1:{args.port}/{key}"
        asyncio.run(_phase(base, 1, 1))  # warm up: Chromium launched, pages cached
        for n in args.sessions:
            _report(n, server.pid, base, args.episodes)
        asyncio.run(_cpu_by_kind(base, server.pid))
    finally:
        server.terminate()
        server.wait(30)


def _serve(port: int, sessions: int) -> subprocess.Popen:
    command = [sys.executable, "manage.py", "env", "serve", "--port", str(port), "--sessions", str(sessions)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("env serve did not start")


def _report(n: int, pid: int, base: str, episodes: int) -> None:
    pss_before, cpu_before = _tree(pid)
    rows_before = _rows_written()
    samples: list[int] = []
    sampler = _Sampler(pid, samples)
    sampler.start()
    started = time.perf_counter()
    timings = asyncio.run(_phase(base, n, episodes))
    wall = time.perf_counter() - started
    sampler.stop()
    _, cpu_after = _tree(pid)
    time.sleep(1.5)  # PostgreSQL flushes its counters about every second
    rows = _rows_written() - rows_before
    resets, steps = timings["reset"], timings["click"] + timings["screenshot"] + timings["done"]
    per_session_mb = (max(samples, default=pss_before) - pss_before) / n / 1024
    print(
        f"N={n}: {len(resets) / wall * 60:.0f} resets/min (p50 {_p(resets, 50):.2f} s), "
        f"{len(steps) / wall:.2f} steps/s; step p50/p99: click {_p(timings['click'], 50):.2f}/"
        f"{_p(timings['click'], 99):.2f} s, screenshot {_p(timings['screenshot'], 50):.2f}/"
        f"{_p(timings['screenshot'], 99):.2f} s, all {_p(steps, 50):.2f}/{_p(steps, 99):.2f} s; "
        f"memory {per_session_mb:.0f} MB/session (tree {pss_before / 1024:.0f} MB before); "
        f"CPU {(cpu_after - cpu_before) / len(steps) * 1000:.0f} ms/step; "
        f"{rows / len(steps):.1f} rows written/step; screenshot {statistics.mean(timings['png_kb']):.0f} KB; "
        f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )


async def _phase(base: str, n: int, episodes: int) -> dict[str, list[float]]:
    from openenv.core import GenericEnvClient

    timings: dict[str, list[float]] = {"reset": [], "click": [], "screenshot": [], "done": [], "png_kb": []}

    async def timed(kind: str, call):
        started = time.perf_counter()
        result = await call
        timings[kind].append(time.perf_counter() - started)
        timings["png_kb"].append(len(result.observation["screenshot"]) * 3 / 4 / 1024)
        return result

    async def session(number: int) -> None:
        async with GenericEnvClient(base_url=base, message_timeout_s=300) as env:
            for episode in range(episodes):
                await timed("reset", env.reset(seed=number * 100 + episode, checkpoint="bench"))
                for action in ACTIONS:
                    await timed(action["action"], env.step(action))
                await timed("done", env.step({"action": "done"}))

    await asyncio.gather(*(session(number) for number in range(n)))
    return timings


async def _cpu_by_kind(base: str, pid: int) -> None:
    """One session alone: the server tree's CPU for a screenshot, a click and a reset, apart."""
    from openenv.core import GenericEnvClient

    kinds = {
        "screenshot": (20, {"action": "screenshot"}),
        "click": (10, {"action": "click", "arguments": {"x": 5, "y": 5}}),
        "reset": (5, None),
    }
    figures, splits = [], []
    async with GenericEnvClient(base_url=base, message_timeout_s=300) as env:
        await env.reset(seed=1, checkpoint="bench")
        for kind, (count, action) in kinds.items():
            # In a thread: it asks the database, which Django refuses from the event loop's.
            by_process_before, started = await asyncio.to_thread(_cpu_by_process, pid), time.perf_counter()
            for number in range(count):
                await (env.step(action) if action else env.reset(seed=number, checkpoint="bench"))
            wall = time.perf_counter() - started
            spent = _difference(await asyncio.to_thread(_cpu_by_process, pid), by_process_before)
            cpu = sum(seconds for name, seconds in spent.items() if name != "postgres")  # the tree's, as above
            figures.append(f"{kind} {cpu / count * 1000:.0f} ms CPU ({wall / count:.2f} s wall)")
            parts = ", ".join(f"{name} {seconds / count * 1000:.0f}" for name, seconds in spent.items() if seconds)
            splits.append(f"  {kind}, ms CPU by process: {parts}")
    print(f"one session, apart: {'; '.join(figures)}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n".join(splits), flush=True)


PROCESS_KINDS = ("env serve", "page server", "driver", "browser", "renderer", "gpu", "utility", "zygote", "postgres")


def _cpu_by_process(root: int) -> dict[str, float]:
    """CPU seconds so far of the server's processes, by what they are: env serve's Python, its
    page server, the Playwright driver, Chromium's browser, renderers (those ended too: their
    zygote reaps them), GPU and utility (network, storage) processes; and the PostgreSQL backends
    serving this database (but the bench's own)."""
    spent: dict[str, float] = dict.fromkeys(PROCESS_KINDS, 0.0)
    for pid in _descendants(root):
        kind, times = _process_kind(pid, root), _cpu_times(pid)
        if kind is None or times is None:  # gone meanwhile
            continue
        own, reaped = times
        spent[kind] += own
        spent["renderer" if kind == "zygote" else kind] += reaped
    for pid in _database_backends():
        times = _cpu_times(pid)
        spent["postgres"] += sum(times) if times else 0.0
    return spent


def _process_kind(pid: int, root: int) -> str | None:
    """One of PROCESS_KINDS; None for a process that is gone."""
    if pid == root:
        return "env serve"
    try:
        # Chromium rewrites its processes' titles: their arguments joined by spaces, in one string.
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
    except OSError:
        return None
    if not argv:  # a zombie, its arguments gone: a renderer its zygote has yet to reap
        return "renderer"
    if any(arg.endswith(b"/daphne") for arg in argv[:2]):
        return "page server"
    if argv[0].endswith(b"/node"):
        return "driver"
    chromium_type = next((arg.split(b"=", 1)[1].decode() for arg in argv if arg.startswith(b"--type=")), "")
    kinds = {"renderer": "renderer", "gpu-process": "gpu", "utility": "utility", "zygote": "zygote"}
    return kinds.get(chromium_type, "browser")


def _difference(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {kind: after[kind] - before.get(kind, 0.0) for kind in after}


def _cpu_times(pid: int) -> tuple[float, float] | None:
    """(its own CPU seconds, those of its children it reaped), or None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    utime, stime, cutime, cstime = (int(value) / TICKS for value in fields[11:15])
    return utime + stime, cutime + cstime


def _database_backends() -> list[int]:
    """The PostgreSQL backends connected to this database, the bench's own left out (none on SQLite).
    Only on this machine's PostgreSQL: their pids are read in /proc."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


def _rows_written() -> int:
    """Rows inserted, updated and deleted in this database so far (PostgreSQL; 0 elsewhere)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT tup_inserted + tup_updated + tup_deleted FROM pg_stat_database WHERE datname = current_database()"
        )
        return int(cursor.fetchone()[0])


def _p(values: list[float], percent: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[percent - 1]


def _descendants(root: int) -> list[int]:
    """A process and all its descendants alive now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _tree(root: int) -> tuple[int, float]:
    """(PSS in kB, CPU seconds) of a process and all its descendants alive now (the CPU of those
    that ended is in their parents' children's time, counted too)."""
    pss, cpu = 0, 0.0
    for pid in _descendants(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += sum(int(value) for value in fields[11:15]) / TICKS  # its own, and its reaped children's
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return pss, cpu


class _Sampler:
    """The tree's PSS every second, in a thread, while a phase runs."""

    def __init__(self, pid: int, samples: list[int]):
        import threading

        self.pid, self.samples, self.done = pid, samples, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.done.set()
        self.thread.join()

    def _run(self) -> None:
        while not self.done.wait(1.0):
            self.samples.append(_tree(self.pid)[0])


if __name__ == "__main__":
    main()
