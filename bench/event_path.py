"""Event path figures on N live web processes (daphne, as deployed).

1. S sockets (--sockets, one run per value) each send 60 events/s (a batch of 6 every 100 ms) for
   --seconds: batch-to-ack latency p50/p99, events/s sustained, events stored against events sent.
2. Submit-to-verdict: --submits attempts each send [load, click, submit]; time to the server's
   "submitted" frame, p50/p99.

    python bench/event_path.py [--sockets 50 100 200] [--processes 1] [--seconds 20] [--submits 200]
                               [--proxy] [--profile DIR]

With --processes N > 1 (or --proxy) the sockets go through bench/_proxy.py, a round-robin TCP
proxy in a process of its own that stands in for nginx (not installed here; deploy/nginx.conf is
what production runs), so every process gets every Nth connection and nothing is sticky.
--profile DIR samples each web process with py-spy (pip install py-spy) during the streams and
prints where their time goes.

Uses a throwaway SQLite database unless DATABASE_URL is set (use PostgreSQL for real figures).
The bench's client runs on the same machine: its own load and the machine's load average are printed.
"""

import argparse
import asyncio
import collections
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _setup import django_for_bench

BENCH = Path(__file__).resolve().parent
DRAIN_WAIT_S = 60  # after sending: how long a socket waits for the acknowledgement of everything it sent


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


# A web process under cProfile, every thread (the event loop and the database threads), timed by each
# thread's own CPU clock, so a loaded machine's waits do not count: argv is the
# stats file, then daphne's own arguments; the stats are written when daphne returns (SIGTERM).
CPROFILED = """
import cProfile, pstats, sys, threading, time
out, sys.argv = sys.argv[1], ["daphne", *sys.argv[2:]]
profiles = []
def per_thread(*_):
    profile = cProfile.Profile(time.thread_time)
    profiles.append(profile)
    profile.enable()  # replaces this hook in the new thread
threading.setprofile(per_thread)
main = cProfile.Profile(time.thread_time)  # CPU time of the thread, not wall time: waits cost nothing
profiles.append(main)
main.enable()
from daphne.cli import CommandLineInterface
try:
    CommandLineInterface.entrypoint()
finally:
    main.disable()
    stats = pstats.Stats(main)
    for profile in profiles[1:]:
        stats.add(profile)
    stats.dump_stats(out)
"""


@contextlib.contextmanager
def web(processes: int, via_proxy: bool, cprofile: str | None = None):
    """N daphne processes as deployed (annotation/agents/server.py's command and environment), and
    the proxy in front of them when asked; yields (base URL, the web processes' pids)."""
    from annotation.agents.server import ROOT, _free_port, _wait_until_listening, daphne_command

    started: list[subprocess.Popen] = []
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(processes):
            port = _free_port("127.0.0.1")
            log = stack.enter_context(tempfile.TemporaryFile("w+"))
            command, env = daphne_command("127.0.0.1", port)
            if cprofile:
                Path(cprofile).mkdir(parents=True, exist_ok=True)
                command = [sys.executable, "-c", CPROFILED, str(Path(cprofile) / f"web{len(ports)}.prof"), *command[1:]]
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
            started.append(process)
            _wait_until_listening(process, "127.0.0.1", port, log)
            ports.append(port)
        base = f"http://127.0.0.1:{ports[0]}"
        if via_proxy:
            port = _free_port("127.0.0.1")
            proxy = subprocess.Popen(
                [sys.executable, str(BENCH / "_proxy.py"), str(port), *(f"127.0.0.1:{p}" for p in ports)],
                stdout=subprocess.PIPE,
                text=True,
            )
            started.append(proxy)
            assert proxy.stdout.readline().strip() == "listening"
            base = f"http://127.0.0.1:{port}"
        try:
            yield base, [p.pid for p in started[:processes]], [p.pid for p in started[processes:]]
        finally:
            for process in started:
                process.terminate()
            for process in started:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


WINDOW = 32  # batches in flight beyond the acknowledged one, as the page keeps (static/arena/events.js)
MIN_DELAY_S, MAX_DELAY_S = 0.5, 8.0  # the page's reconnect back-off


async def stream(base: str, attempt, session: str, seconds: float, stats: dict):
    """One page's stream with the page's rules: a batch of 6 every 100 ms whatever the socket does,
    kept until acknowledged; a window of WINDOW in flight, the next as acks come; on a refused
    handshake or a closed socket, reconnect after the page's back-off and resend what is
    unacknowledged. A loaded run then slows down instead of aborting."""
    import websockets

    url = base.replace("http", "ws") + f"/ws/attempts/{attempt.uid}/"
    headers = {"Cookie": f"sessionid={session}", "Origin": base}
    pending: dict[int, str] = {}  # unacknowledged batches by seq
    made_at: dict[int, float] = {}
    link: dict = {"socket": None, "sent": 0, "acked": 0, "seq": 0}

    async def send_window() -> None:
        socket = link["socket"]
        if socket is None:
            return
        in_flight = sum(1 for seq in pending if seq <= link["sent"])
        for seq in sorted(pending):
            if in_flight >= WINDOW:
                break
            if seq > link["sent"]:
                await socket.send(pending[seq])
                link["sent"], in_flight = seq, in_flight + 1

    def acknowledged(upto: int) -> None:
        now = time.perf_counter()
        for seq in range(link["acked"] + 1, upto + 1):
            stats["latencies"].append((now - made_at[seq]) * 1000)
            pending.pop(seq, None)
        link["acked"] = max(link["acked"], upto)

    async def produce() -> None:
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            seq = link["seq"] = link["seq"] + 1
            now_ms = time.time() * 1000
            events = [
                {"k": "pointermove", "t": now_ms + i, "x": 10.0 + i, "y": 20.0, "pointer": "mouse"} for i in range(6)
            ]
            made_at[seq] = now = time.perf_counter()
            stats["client_lag"].append((now - (start + (seq - 1) * 0.1)) * 1000)  # the client's own delay
            pending[seq] = json.dumps({"type": "batch", "seq": seq, "events": events})
            stats["sent"] += len(events)
            with contextlib.suppress(websockets.ConnectionClosed):
                await send_window()
            await asyncio.sleep(max(0.0, start + seq * 0.1 - time.perf_counter()))

    async def connect_and_receive() -> None:
        delay = MIN_DELAY_S
        while True:
            try:
                tried = time.perf_counter()
                opened = websockets.connect(url, additional_headers=headers, max_queue=None, open_timeout=10)
                async with opened as socket:
                    stats["handshake_ms"].append((time.perf_counter() - tried) * 1000)
                    link.update(socket=socket, sent=link["acked"])
                    await send_window()
                    async for raw in socket:
                        frame = json.loads(raw)
                        if frame["type"] == "ack":
                            delay = MIN_DELAY_S  # heard from: the back-off starts over
                            acknowledged(frame["seq"])
                            await send_window()
                        elif frame["type"] == "error":
                            stats["errors"] += 1
                    stats["closed"][socket.close_code] += 1
            except websockets.ConnectionClosed as closed:
                stats["closed"][closed.rcvd.code if closed.rcvd else 1006] += 1
            except (OSError, TimeoutError, websockets.InvalidHandshake):
                stats["refused"] += 1  # the handshake failed: a page counts it and tries again
            link["socket"] = None
            stats["reconnects"] += 1
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_DELAY_S)

    connection = asyncio.create_task(connect_and_receive())
    await produce()
    deadline = time.perf_counter() + DRAIN_WAIT_S  # a slow server's backlog is not a loss
    while link["acked"] < link["seq"] and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    connection.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await connection
    if link["socket"] is not None:
        await link["socket"].close()
    stats["unacked"] += link["seq"] - link["acked"]


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


PROFILE_AFTER_S = 3  # the sockets' handshakes are over: the steady state is sampled


def profiled(pids: list[int], seconds: float, out: Path, label: str) -> list[subprocess.Popen]:
    """py-spy on each web process from PROFILE_AFTER_S into the streams to their end; --gil: only
    the thread holding the GIL is sampled, i.e. where the process's one core of Python goes."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out.mkdir(parents=True, exist_ok=True)
    return [
        subprocess.Popen(
            ["sh", "-c", f'sleep {PROFILE_AFTER_S} && exec "$0" "$@"', spy, "record", "--pid", str(pid)]
            + ["--rate", "100", "--format", "raw", "--nonblocking", "--gil"]
            + ["--duration", str(max(1, int(seconds - PROFILE_AFTER_S - 1))), "-o", str(out / f"{label}-web{i}.txt")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i, pid in enumerate(pids)
    ]


def profile_summary(path: Path, top: int = 60) -> list[str]:
    """Where a process's samples went: inclusive share per function (the project's and the
    libraries' alike), from py-spy's collapsed stacks ("frame;frame;... count")."""
    inclusive: collections.Counter = collections.Counter()
    own: collections.Counter = collections.Counter()
    total = 0

    def named(frame: str) -> str:
        name, _, where = frame.partition(" (")
        return f"{name} ({'/'.join(Path(where.split(':')[0]).parts[-2:])})"

    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = [named(frame) for frame in stack.split(";")]
        for frame in set(frames):
            inclusive[frame] += n
        own[frames[-1]] += n
    if not total:
        return []
    return (
        ["inclusive:"]
        + [f"{100 * n / total:5.1f}%  {name}" for name, n in inclusive.most_common(top)]
        + ["self:"]
        + [f"{100 * n / total:5.1f}%  {name}" for name, n in own.most_common(15)]
    )


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far, all its threads (user + system, /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_streams(args, base: str, pids: list[int], sockets: int, proxies: list[int]) -> dict:
    from annotation.models import Event

    _, streams = make_attempts("Dice_Count", sockets, f"s{sockets}-")
    stats = {
        "latencies": [],
        "client_lag": [],
        "handshake_ms": [],  # from the client's connect to the socket open, each handshake that succeeded
        "sent": 0,
        "errors": 0,
        "unacked": 0,
        "refused": 0,
        "reconnects": 0,
        "closed": collections.Counter(),
    }
    load_before = os.getloadavg()
    spies = profiled(pids, args.seconds, Path(args.profile), f"s{sockets}") if args.profile else []
    cpu_before = [cpu_seconds(pid) for pid in pids]
    proxy_before = sum(cpu_seconds(pid) for pid in proxies)
    started = time.perf_counter()
    asyncio.run(_all_streams(base, streams, args.seconds, stats))
    elapsed = time.perf_counter() - started
    cpu = sum(cpu_seconds(pid) for pid in pids) - sum(cpu_before)
    proxy_cpu = sum(cpu_seconds(pid) for pid in proxies) - proxy_before
    for spy in spies:
        spy.wait(30)
    stored = Event.objects.filter(attempt__in=[a for a, _ in streams]).count()
    lat = stats["latencies"]
    return {
        "sockets": sockets,
        "processes": args.processes,
        "sent": stats["sent"],
        "stored": stored,
        "lost": stats["sent"] - stored,  # sent, never stored (after waiting up to DRAIN_WAIT_S)
        "unacked": stats["unacked"],  # batches never acknowledged (a page would resend them)
        "errors": stats["errors"],
        "handshakes_failed": stats["refused"],  # tried again after the page's back-off
        "handshake_p50_ms": round(statistics.median(stats["handshake_ms"]), 1) if stats["handshake_ms"] else None,
        "handshake_p99_ms": round(percentile(stats["handshake_ms"], 0.99), 1),
        "handshake_max_ms": round(max(stats["handshake_ms"], default=float("nan")), 1),
        "reconnects": stats["reconnects"],
        "closed": {str(k): v for k, v in stats["closed"].items() if k not in (1000, None)},
        "events_per_s": round(stored / elapsed),
        "ack_p50_ms": round(statistics.median(lat), 1) if lat else None,
        "ack_p99_ms": round(percentile(lat, 0.99), 1),
        "acks": len(lat),
        "client_lag_p99_ms": round(percentile(stats["client_lag"], 0.99), 1),
        # The web processes' own CPU per acknowledged batch (handshakes included): unlike latency,
        # not inflated by other work on the machine. 1000 / it = batches/s one free core carries.
        "web_cpu_ms_per_batch": round(1000 * cpu / max(1, len(lat)), 3),
        "web_cpu_s": round(cpu, 1),
        "proxy_cpu_s": round(proxy_cpu, 1),  # the bench's stand-in for nginx, on the same cores
        "elapsed_s": round(elapsed, 1),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, nargs="+", default=[50])
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--proxy", action="store_true", help="through the proxy even with one process")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--submits", type=int, default=200)
    parser.add_argument("--profile", metavar="DIR", help="sample the web processes with py-spy")
    parser.add_argument("--cprofile", metavar="DIR", help="run the web processes under cProfile (all threads)")
    parser.add_argument("--json", metavar="FILE", help="append each run's figures as a JSON line")
    args = parser.parse_args()
    django_for_bench()
    via_proxy = args.proxy or args.processes > 1
    with web(args.processes, via_proxy, args.cprofile) as (base, pids, proxies):
        where = f"{args.processes} web process{'es' if args.processes > 1 else ''}" + (
            " behind the round-robin proxy" if via_proxy else ", direct"
        )
        for sockets in args.sockets:
            figures = run_streams(args, base, pids, sockets, proxies)
            print(f"{where}: {sockets} sockets x 60 events/s for {args.seconds:.0f} s")
            print(
                f"  events sent {figures['sent']}, stored {figures['stored']}, lost {figures['lost']}, "
                f"batches unacknowledged {figures['unacked']}, errors {figures['errors']}, "
                f"closed by the server {figures['closed'] or 'none'}, handshakes failed "
                f"{figures['handshakes_failed']}, reconnects {figures['reconnects']}"
            )
            print(
                f"  handshakes accepted: p50 {figures['handshake_p50_ms']} ms, p99 {figures['handshake_p99_ms']} ms, "
                f"slowest {figures['handshake_max_ms']} ms (daphne drops one not accepted within 5 s)"
            )
            print(f"  sustained {figures['events_per_s']} events/s stored")
            print(
                f"  batch to ack: p50 {figures['ack_p50_ms']} ms, p99 {figures['ack_p99_ms']} ms "
                f"(n={figures['acks']}); the client's own send delay p99 {figures['client_lag_p99_ms']} ms"
            )
            print(
                f"  web processes' CPU {figures['web_cpu_s']} s in {figures['elapsed_s']} s: "
                f"{figures['web_cpu_ms_per_batch']} CPU ms per batch (one free core: "
                f"~{1000 / max(figures['web_cpu_ms_per_batch'], 1e-9):.0f} batches/s = "
                f"{100 / max(figures['web_cpu_ms_per_batch'], 1e-9):.0f} sockets at 10 batches/s)"
            )
            if proxies:
                print(f"  the proxy's CPU {figures['proxy_cpu_s']} s")
            print(f"  load average before {figures['load_before']}, after {figures['load_after']}")
            if args.profile:
                for i in range(len(pids)):
                    path = Path(args.profile) / f"s{sockets}-web{i}.txt"
                    if path.exists():
                        print(f"  profile of web process {i} (share of samples holding the GIL):")
                        for line in profile_summary(path):
                            print("    " + line)
            if args.json:
                with open(args.json, "a") as out:
                    out.write(json.dumps(figures) + "\n")
            time.sleep(2)  # the last run's writes settle
        if args.submits:
            mask_puzzle, submitters = make_attempts("Geometry_Click", args.submits, "submit")
            verdicts = asyncio.run(submits(base, submitters, mask_puzzle.truth["point"]))
            print(
                f"submit to verdict: p50 {statistics.median(verdicts):.1f} ms, "
                f"p99 {percentile(verdicts, 0.99):.1f} ms (n={len(verdicts)})"
            )
    if args.cprofile:
        cprofile_summary(Path(args.cprofile))


def cprofile_summary(folder: Path, top: int = 40) -> None:
    """The web processes' profiles (written as they stopped), by cumulative and by own time."""
    import pstats

    for path in sorted(folder.glob("web*.prof")):
        print(f"cProfile of {path.name} (all threads; cumulative, then own time):")
        stats = pstats.Stats(str(path))
        stats.sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(25)


async def _all_streams(base, streams, seconds, stats):
    await asyncio.gather(*(stream(base, a, s, seconds, stats) for a, s in streams))


if __name__ == "__main__":
    main()
