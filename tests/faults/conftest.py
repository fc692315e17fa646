"""Faults injected into the real parts (database, sockets, pages, processes): nothing lost, nothing stuck."""

from tests.annotation.conftest import open_attempt, person, stored_puzzle  # noqa: F401  (fixtures)
from tests.e2e.conftest import annotator, puzzles_of, site  # noqa: F401  (fixtures)
