import contextlib

import pytest


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes puzzle assets to its own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"


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
