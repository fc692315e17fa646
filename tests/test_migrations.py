"""Migrations that must hold on a live deployment: an index built while the events table takes writes."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder

INDEXES = ("event_load_by_attempt", "event_visibility_by_attempt")
MIGRATION = ("annotation", "0012_event_load_and_visibility_indexes")


def indexes_and_validity() -> list[tuple[str, bool]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = ANY(%s) ORDER BY c.relname",
            [list(INDEXES)],
        )
        return cursor.fetchall()


@pytest.mark.django_db(transaction=True)
def test_an_interrupted_index_build_is_mended_by_migrating_again():
    if connection.vendor != "postgresql":
        pytest.skip("CREATE INDEX CONCURRENTLY is PostgreSQL's")
    # As an interrupted run leaves it: the first index built, the second not, the (non-atomic)
    # migration not recorded. Migrating again used to stop at "already exists".
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {INDEXES[1]}")
    MigrationRecorder(connection).record_unapplied(*MIGRATION)
    recorded = MigrationRecorder(connection).migration_qs.filter(app=MIGRATION[0], name=MIGRATION[1])
    try:
        call_command("migrate", *MIGRATION, verbosity=0)
    finally:
        if not recorded.exists():  # the suite's state, whatever happened
            MigrationRecorder(connection).record_applied(*MIGRATION)
    assert indexes_and_validity() == [(INDEXES[0], True), (INDEXES[1], True)]
    assert recorded.count() == 1
