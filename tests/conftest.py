import contextlib

import pytest


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
