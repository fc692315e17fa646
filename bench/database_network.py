"""What a network that stops answering costs a PostgreSQL connection, with libpq's defaults and
with the site's limits (NETWORK_LIMITS in arena_site/env.py).

A forwarder (bench/_proxy.py) stands between the client and PostgreSQL on a port of its own, and
`tc` drops every packet to and from that port on loopback, as a failover that leaves the old
address dead or a dropped route would: nothing answers and nothing resets. Then a query on an open
connection and a new connection attempt each wait until libpq or the kernel gives up, or the cap.
Nothing else on the machine is touched (only that port's packets), and the rule is removed at the
end, even on an error. Needs root (CAP_NET_ADMIN) and tc; it says so and stops otherwise.

    .venv/bin/python bench/database_network.py [--cap 45] [--host 127.0.0.1 --port 5432 --user postgres]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena_site.env import NETWORK_LIMITS  # noqa: E402  (the site's own values, nothing else of Django)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DroppedPort:
    """Every packet to or from `port` on loopback dropped, while inside the block."""

    def __init__(self, port: int):
        self.port = port

    def __enter__(self) -> DroppedPort:
        _tc("qdisc", "add", "dev", "lo", "root", "handle", "1:", "prio")
        try:
            for direction in ("dport", "sport"):
                _tc(
                    *("filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "u32"),
                    *("match", "ip", direction, str(self.port), "0xffff", "action", "drop"),
                )
        except RuntimeError:
            self.__exit__()
            raise
        return self

    def __exit__(self, *_) -> None:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], check=False, capture_output=True)


def _tc(*args: str) -> None:
    done = subprocess.run(["tc", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"tc {' '.join(args)}: {done.stderr.strip()}")


def _waits(action, cap_s: float) -> tuple[float | None, str]:
    """How long action() took to fail (or succeed), or None if it still waited at the cap."""
    outcome: list[tuple[float, str]] = []

    def run() -> None:
        started = time.monotonic()
        try:
            action()
            outcome.append((time.monotonic() - started, "answered"))
        except psycopg.Error as error:
            outcome.append((time.monotonic() - started, str(error).strip().splitlines()[0][:60]))

    thread = threading.Thread(target=run, daemon=True)  # one left waiting is abandoned at exit
    thread.start()
    thread.join(cap_s)
    return outcome[0] if outcome else (None, "still waiting")


def measure(limits: dict, target: dict, cap_s: float) -> list[tuple[str, float | None, str]]:
    open_connection = psycopg.connect(**target, **limits, autocommit=True)
    open_connection.execute("SELECT 1")
    results: dict[str, tuple[float | None, str]] = {}
    with DroppedPort(target["port"]):
        threads = {
            "query on an open connection": lambda: open_connection.execute("SELECT 1"),
            "new connection attempt": lambda: psycopg.connect(**target, **limits).close(),
        }
        waiting = [
            threading.Thread(target=lambda n=name, a=action: results.__setitem__(n, _waits(a, cap_s)))
            for name, action in threads.items()
        ]
        for thread in waiting:
            thread.start()
        for thread in waiting:
            thread.join()
    return [(name, *results[name]) for name in threads]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=float, default=45.0, help="seconds to wait before giving up on a wait")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5432)
    parser.add_argument("--user", default="postgres")
    parser.add_argument("--dbname", default="postgres")
    args = parser.parse_args()
    if shutil.which("tc") is None:
        sys.exit("needs tc (Debian: iproute2) to drop packets on loopback")
    port = _free_port()
    proxy = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "_proxy.py"), str(port), f"{args.host}:{args.port}"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdout is not None and "listening" in proxy.stdout.readline()
        target = {"host": "127.0.0.1", "port": port, "user": args.user, "dbname": args.dbname}
        try:
            with DroppedPort(port):
                pass
        except RuntimeError as error:
            sys.exit(f"cannot drop packets here (needs root, CAP_NET_ADMIN): {error}")
        rows = [("libpq defaults", *row) for row in measure({}, target, args.cap)]
        rows += [("site limits", *row) for row in measure(NETWORK_LIMITS, target, args.cap)]
    finally:
        proxy.terminate()
    print(f"every packet to and from the forwarder's port dropped; waits capped at {args.cap:g} s")
    print(f"site limits: {NETWORK_LIMITS}")
    print(f"{'settings':<16}{'what':<30}{'waited':>10}  outcome")
    for settings, what, waited, outcome in rows:
        shown = f"> {args.cap:g} s" if waited is None else f"{waited:.1f} s"
        print(f"{settings:<16}{what:<30}{shown:>10}  {outcome}")


if __name__ == "__main__":
    main()
