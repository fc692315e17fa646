"""Fixtures every test folder may use: media and database pools per test, and the stored puzzles,
people and attempts the live, studies, review and reporting tests start from."""

import contextlib

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.live.attempts import attempt_start, participant_for_user
from puzzles.models import Puzzle
from puzzles.services import bank_generate


@pytest.fixture(scope="session", autouse=True)
def _quick_password_hashes():
    """Passwords hashed at one PBKDF2 iteration in the test process (tests/passwords.py)."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["tests.passwords.OneIterationPBKDF2PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes puzzle assets to its own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _a_fresh_database_pool_per_test():
    """PostgreSQL connections come from a bounded pool (arena_site/env.py). Under channels' test
    communicator, database_sync_to_async does not give its connection back (channels.testing turns
    close_old_connections into a no-op, to spare the test's own), so the worker threads of a test's
    event loop exit still holding theirs, and the pool would run dry after a few tests. Each test
    gets a new pool; the old one is closed after it (a server process closes as usual)."""
    yield
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if conn.alias in getattr(type(conn), "_connection_pools", {}):
            conn.close_pool()


@pytest.fixture(scope="session", autouse=True)
def _end_stray_database_sessions(django_db_setup, django_db_blocker):
    """Consumers write from pool threads and live servers from child processes; their connections
    may outlive the tests. End them so the test database can be dropped."""
    yield
    from django.db import OperationalError, connection

    with django_db_blocker.unblock(), contextlib.suppress(OperationalError):
        # A run whose tests never touched the database has no test database to clean.
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )


@pytest.fixture
def stored_puzzle(db):
    """make(type_name, index=0) -> a generated, stored puzzle."""

    def make(type_name: str, index: int = 0) -> Puzzle:
        bank_generate(split="test", per_type=1, start=index, types=[type_name], bank_seed=7, workers=1)
        return Puzzle.objects.get(type=type_name, index=index, dataset="generated:7")

    return make


@pytest.fixture
def verified(db):
    """make(types, per_type) -> stored test puzzles, marked replay-verified (studies need that)."""

    def make(types=("Dice_Count", "Bingo"), per_type=3) -> list[Puzzle]:
        bank_generate(split="test", per_type=per_type, types=list(types), bank_seed=5, workers=1)
        Puzzle.objects.filter(dataset="generated:5").update(status=Puzzle.Status.VERIFIED)
        return list(Puzzle.objects.filter(dataset="generated:5", type__in=types).order_by("type", "index"))

    return make


@pytest.fixture
def person(db):
    """make(name) -> (user, session cookie value)."""

    def make(name: str = "ann"):
        user = get_user_model().objects.create_user(username=name, password="pw")
        client = Client()
        client.force_login(user)
        return user, client.cookies["sessionid"].value

    return make


@pytest.fixture
def staff(db) -> Client:
    """A client signed in as a staff user, "boss"."""
    client = Client()
    client.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    return client


@pytest.fixture
def open_attempt(stored_puzzle, person):
    """make(type_name) -> (attempt, session cookie) for a fresh person."""
    counter = iter(range(1000))

    def make(type_name: str = "Geometry_Click", *, who: str | None = None):
        user, session = person(who or f"person{next(counter)}")
        attempt = attempt_start(participant=participant_for_user(user=user), puzzle=stored_puzzle(type_name))
        return attempt, session

    return make
