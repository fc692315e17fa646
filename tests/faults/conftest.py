"""Faults injected into the real parts (database, sockets, processes): nothing lost, nothing stuck."""

from tests.annotation.conftest import open_attempt, person, stored_puzzle  # noqa: F401  (fixtures)
