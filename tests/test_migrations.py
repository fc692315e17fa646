"""Migrations that must hold on a live deployment: an index built while the events table takes writes."""

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

MIGRATION = ("annotation", "0012_event_load_and_visibility_indexes")
INDEX = "event_visibility_by_attempt"  # the migration's second index

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="CREATE INDEX CONCURRENTLY is PostgreSQL's")


def index_definition() -> tuple[str, bool] | None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_indexdef(i.indexrelid), i.indisvalid FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            [INDEX],
        )
        return cursor.fetchone()


@pytest.mark.django_db(transaction=True)  # sqlmigrate runs the operations, which refuse a transaction
def test_the_indexes_are_built_without_blocking_writes():
    sql = io.StringIO()
    call_command("sqlmigrate", *MIGRATION, stdout=sql)
    assert sql.getvalue().count("CREATE INDEX CONCURRENTLY") == 2


@pytest.mark.django_db(transaction=True)
def test_an_interrupted_build_is_mended_by_running_it_again():
    """An interrupted CREATE INDEX CONCURRENTLY leaves an index of the name behind (invalid, or
    half built) and the non-atomic migration unrecorded; running the operation again used to stop
    at "already exists". Here another index holds the name, as a leftover would."""
    loader = MigrationLoader(connection)
    operation = loader.get_migration(*MIGRATION).operations[1]
    state = loader.project_state(MIGRATION)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {INDEX}")
        cursor.execute(f"CREATE INDEX {INDEX} ON annotation_event (kind)")
    try:
        with connection.schema_editor(atomic=False) as editor:
            operation.database_forwards(MIGRATION[0], editor, state, state)
    except Exception:
        with connection.cursor() as cursor:  # the suite's own index back before failing
            cursor.execute(f"DROP INDEX {INDEX}")
            cursor.execute(f"CREATE INDEX {INDEX} ON annotation_event (attempt_id, seq) WHERE kind='visibilitychange'")
        raise
    definition, valid = index_definition()
    assert valid and "(attempt_id, seq)" in definition and "'visibilitychange'" in definition
