"""The attacks of a hostile visitor, each reproduced against the real app and database.

The annotation tests' factories serve here too: stored and replay-verified puzzles, people with
sessions, open attempts.
"""

from tests.annotation.conftest import open_attempt, person, stored_puzzle, verified  # noqa: F401  (fixtures)
