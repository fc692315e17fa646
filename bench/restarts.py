"""The restart matrix (issue 39): every long-running process against a restart of PostgreSQL or of
Redis under it, how long it took to serve again and what was lost.

It runs the suite's restart scenarios (`pytest -m restart`: each starts a private PostgreSQL or
Redis, tests/private_servers.py, with the processes under test on it, restarts it mid-work, and
fills a row of the fault table, tests/faults/report.py), then prints the table with the load
average before and after and the CPU the run took (this process's children: pytest and every
server, worker and browser it started).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a fresh database> \\
    REDIS_URL=redis://127.0.0.1:6379/9 python bench/restarts.py [-k <scenario words>]

Recovery is measured and printed, never asserted by the tests; "lost" and "duplicated" are
asserted to be 0.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-k", default="", help="only the scenarios whose test names match (pytest -k)")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("bench/restarts.py needs DATABASE_URL on PostgreSQL (the tests' own database is made from it)")
    out = Path(tempfile.mkdtemp(prefix="arena-restarts-"))
    env = {**os.environ, "ARENA_FAULTS_OUT": str(out)}
    command = [sys.executable, "-m", "pytest", "-m", "restart", "-q", "-p", "no:cacheprovider", "-n", "0"]
    if args.k:
        command += ["-k", args.k]
    load_before = os.getloadavg()
    started = time.monotonic()
    run = subprocess.run(command, cwd=ROOT, env=env)
    wall = time.monotonic() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = out / "report.txt"
    print("\n=== restart matrix ===")
    print(report.read_text() if report.exists() else "(no scenario filled a row)")
    cpu = f"CPU {children.ru_utime:.1f} s user + {children.ru_stime:.1f} s sys"
    print(f"pytest exit {run.returncode}; wall {wall:.1f} s; {cpu}")
    print(f"load average before {_load(load_before)}, after {_load(os.getloadavg())}")
    return run.returncode


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.2f}" for x in load)


if __name__ == "__main__":
    sys.exit(main())
