"""The suite's own pytest plugin, loaded before anything else (`-p tests.parallel` in pyproject's
addopts) in the run's main process and in each pytest-xdist worker (`make test` runs two):

- Each worker takes a Redis database of its own before Django reads its settings, so the workers'
  Celery brokers, channel layers and caches never meet, nor do the servers and workers they start
  (those inherit REDIS_URL). The test databases are apart already: pytest-django names them by
  worker (test_arena_gw0, ...).
- The fault suite's table (tests/faults/report.py) is filled in whichever process ran a scenario
  and printed once, by the main process, at the end of the run.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.faults import report

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... in a worker; "" otherwise


def worker_redis_url(url: str, worker: str) -> str:
    """The URL's Redis database moved past the base one by the worker's number: gw0 on db+1."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{base + 1 + int(worker.removeprefix('gw'))}"))


if WORKER and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = worker_redis_url(os.environ["REDIS_URL"], WORKER)


def pytest_sessionfinish(session):
    """A worker hands the fault rows it filled to the main process."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["fault_rows"] = [asdict(r) for r in report.ROWS]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The main process gathers each worker's fault rows as the worker ends."""
    for fields in getattr(node, "workeroutput", {}).get("fault_rows", []):
        report.ROWS.append(report.Row(**fields))


def pytest_terminal_summary(terminalreporter):
    """The counts table of the fault scenarios that ran (also in report.txt and report.json)."""
    if WORKER or not report.ROWS:
        return
    load = os.getloadavg()
    path = report.write(report.ROWS, load)
    terminalreporter.section("faults: events generated and stored")
    for line in report.table(report.ROWS):
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"load average {' '.join(f'{x:.2f}' for x in load)}; written to {path}")
