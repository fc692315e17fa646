"""Faults injected into the real parts (database, sockets, pages, processes): nothing lost, nothing stuck."""

import os

from tests.annotation.conftest import open_attempt, person, stored_puzzle  # noqa: F401  (fixtures)
from tests.e2e.conftest import annotator, puzzles_of, site  # noqa: F401  (fixtures)
from tests.faults import report


def pytest_terminal_summary(terminalreporter):
    """The counts table of the scenarios that ran (also in report.txt and report.json)."""
    if not report.ROWS:
        return
    path = report.write(report.ROWS, os.getloadavg())
    terminalreporter.section("faults: events generated and stored")
    for line in report.table(report.ROWS):
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; written to {path}")
