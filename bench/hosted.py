"""The hosted-benchmark proxy's cost: CPU of the web process per proxied request, by kind, and the
peer's page loaded in Chromium through the proxy against the same page loaded directly,
interleaved in one run (docs/hosted.md; goal: under 5 ms CPU per proxied request, page load within
10 % of direct).

    DATABASE_URL=postgres://.../fresh python bench/hosted.py [--requests 200] [--loads 20]

The peer is the tests' stand-in server (tests/hosted/standin.py, its own process). Its CDN script
is pinned to a small local copy written here (no network); the direct page gets the same file
from Playwright's route, so both loads fetch the same bytes. CPU is the web process's own (daphne:
the proxy and everything it runs), read from /proc before and after each kind's requests; the
peer's CPU and PostgreSQL's are left out. Uses a throwaway SQLite database unless DATABASE_URL is
set (use a fresh PostgreSQL database for figures).
"""

import argparse
import asyncio
import hashlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from _setup import ROOT, django_for_bench

TICKS = os.sysconf("SC_CLK_TCK")
CDN_URL = "https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"
LOCAL_THREE = b"window.THREE = {REVISION: '128', Object3D: function () { this.name = ''; }};\n"
SHOWN = ".input-group:not([hidden])"  # the stand-in's page has drawn its puzzle


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200, help="proxied requests per kind")
    parser.add_argument("--loads", type=int, default=20, help="page loads each way, interleaved")
    args = parser.parse_args()
    assets = Path(tempfile.mkdtemp(prefix="hosted-assets-"))
    os.environ["ARENA_HOSTED_ASSETS"] = str(assets)  # before Django: the page server reads it too
    django_for_bench()
    print(f"load average at start: {_loadavg()}")
    standin = subprocess.Popen(
        [sys.executable, str(ROOT / "tests/hosted/standin.py"), "--timeout-ms", "600000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        peer = f"http://127.0.0.1:{standin.stdout.readline().strip()}"
        _run(args, peer, assets)
    finally:
        standin.terminate()
        standin.wait()
    print(f"load average at end: {_loadavg()}")


def _run(args: argparse.Namespace, peer: str, assets: Path) -> None:
    from annotation.agents.server import web_process

    attempts, page = _setup(peer, assets, args.requests)
    with web_process() as (site, process):
        _cpu_per_request(site, process.pid, attempts, page, args.requests)
        direct, proxied = asyncio.run(_page_loads(site, peer, attempts[0], page, args.loads))
    print(f"page load, {args.loads} each way, interleaved (goto to the puzzle drawn):")
    for name, times in (("direct", direct), ("through the proxy", proxied)):
        print(f"  {name:<18} median {statistics.median(times):7.1f} ms  p90 {_p90(times):7.1f} ms")
    print(f"  proxy / direct (medians): {statistics.median(proxied) / statistics.median(direct):.2f}")


def _setup(peer: str, assets: Path, count: int) -> tuple[list[str], str]:
    """The stand-in registered and drawn; `count` attempts on one of its stored puzzles."""
    from django.contrib.auth import get_user_model

    from annotation.hosted.registry import benchmark_add, benchmark_draw
    from annotation.live.attempts import attempt_start, participant_for_user
    from puzzles.models import Puzzle

    digest = hashlib.sha256(LOCAL_THREE).hexdigest()
    (assets / digest).write_bytes(LOCAL_THREE)
    name = f"bench{os.getpid()}"
    benchmark = benchmark_add(name=name, url=peer)
    benchmark.assets = {CDN_URL: {"sha256": digest, "source": "written by bench/hosted.py"}}
    benchmark.save(update_fields=["assets"])
    benchmark_draw(name=name, per_type=1, types=["Dice_Roll_Path"])
    puzzle = Puzzle.objects.get(type=f"{name}:Dice_Roll_Path")
    person = participant_for_user(user=get_user_model().objects.create_user(username=f"bench-{name}"))
    attempts = [attempt_start(participant=person, puzzle=puzzle).uid for _ in range(count)]
    return attempts, puzzle.public["hosted"]["page"]


def _cpu_per_request(site: str, pid: int, attempts: list[str], page: str, count: int) -> None:
    from annotation.attempt_hosts import attempt_host

    port = urlsplit(site).port
    kinds = {
        "the page (/, its HTML)": ("GET", page, None),
        "its script (forwarded)": ("GET", "/static/js/standin.js", None),
        "get_puzzle (forwarded, stripped)": ("GET", "/api/get_puzzle?type=Dice_Roll_Path&puzzle_index=0", None),
        "the pinned CDN copy": ("GET", "/__arena/asset/" + hashlib.sha256(LOCAL_THREE).hexdigest(), None),
        "a refused truth route": ("GET", "/api/last_result", None),
        "check_answer (one per attempt)": ("POST", "/api/check_answer", {"answer": 1}),
    }
    print(f"CPU of the web process per proxied request ({count} each, one connection each):")
    _request(port, attempt_host(attempts[0]), "GET", page, None)  # warm: the attempt's pin loaded
    for label, (method, path, body) in kinds.items():
        hosts = [attempt_host(uid) for uid in attempts] if method == "POST" else [attempt_host(attempts[0])] * count
        for host in hosts if method == "POST" else hosts[:5]:  # warm: each attempt's pin loaded once
            _request(port, host, "GET", "/api/last_result", None)
        before, wall = _cpu(pid), time.perf_counter()
        statuses = {_request(port, host, method, path, body) for host in hosts}
        cpu_ms = (_cpu(pid) - before) * 1000 / count
        wall_ms = (time.perf_counter() - wall) * 1000 / count
        print(f"  {label:<34} {cpu_ms:6.2f} ms CPU  {wall_ms:6.2f} ms wall  (HTTP {sorted(statuses)})")


def _request(port: int | None, host: str, method: str, path: str, body: object) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = json.dumps(body).encode() if body is not None else None
    connection.request(method, path, data, {"Host": f"{host}:{port}", "Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response.status


async def _page_loads(site: str, peer: str, uid: str, page: str, loads: int) -> tuple[list[float], list[float]]:
    from annotation.agents.browser import VIEWPORT, chromium
    from annotation.attempt_hosts import attempt_origin

    direct, proxied = [], []
    async with chromium() as browser:
        for number in range(loads + 1):  # the first pair warms up and is not counted
            for url, times in ((peer + page, direct), (attempt_origin(uid, site) + page, proxied)):
                context = await browser.new_context(viewport=VIEWPORT)
                await context.route(
                    CDN_URL, lambda route: route.fulfill(body=LOCAL_THREE, content_type="text/javascript")
                )
                page_ = await context.new_page()
                started = time.perf_counter()
                await page_.goto(url)
                await page_.wait_for_selector(SHOWN, state="attached")
                if number:
                    times.append((time.perf_counter() - started) * 1000)
                await context.close()
    return direct, proxied


async def _local_three(route: object) -> None:
    """The direct page's CDN script, the same bytes the proxy serves from its pinned copy."""
    await route.fulfill(body=LOCAL_THREE, content_type="text/javascript")  # type: ignore[attr-defined]


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _p90(times: list[float]) -> float:
    return sorted(times)[int(0.9 * (len(times) - 1))]


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
