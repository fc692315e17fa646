"""Faults injected into the real parts (database, sockets, pages, processes): nothing lost, nothing
stuck. The counts table is printed at the end of the run by tests/parallel.py."""

from tests.e2e.conftest import annotator, puzzles_of, site  # noqa: F401  (fixtures)
