"""A request that meets the database unreachable answers 503 "database unavailable", not the 500
page (arena_site/errors.py); a statement that fails on a working database is still a bug's 500.
The outage itself, with a stopped PostgreSQL: tests/faults/test_dashboard_outage.py."""

from __future__ import annotations

import json

import psycopg
import pytest
from django.db import DatabaseError, OperationalError
from django.test import RequestFactory
from psycopg_pool import PoolTimeout

from arena_site.errors import UNAVAILABLE_CODE, DatabaseUnavailableMiddleware, database_unreachable


def as_django(cause: Exception, kind: type[DatabaseError] = OperationalError) -> DatabaseError:
    """The error as Django raises it: its own class, the driver's error as the cause."""
    try:
        raise kind(str(cause)) from cause
    except DatabaseError as error:
        return error


def with_state(sqlstate: str) -> psycopg.Error:
    """A server error of the given SQLSTATE, as psycopg makes it."""
    return psycopg.errors.lookup(sqlstate)("from the server")


@pytest.mark.parametrize(
    "cause",
    [
        PoolTimeout("couldn't get a connection after 1.00 sec"),
        psycopg.OperationalError("connection failed: Connection refused"),  # no SQLSTATE: no server
        with_state("57P01"),  # admin_shutdown: the server stopping
        with_state("57P03"),  # cannot_connect_now: the server starting
        with_state("08006"),  # connection_failure
    ],
    ids=["pool timeout", "refused", "shutting down", "starting up", "connection failure"],
)
def test_an_outage_is_unreachable(cause):
    assert database_unreachable(as_django(cause))


@pytest.mark.parametrize(
    "error",
    [
        as_django(with_state("40P01")),  # a deadlock: the database answered
        as_django(with_state("40001")),  # a serialization failure
        as_django(with_state("23505"), DatabaseError),  # not even an OperationalError
        OperationalError("database is locked"),  # SQLite's, no PostgreSQL behind it
        RuntimeError("a bug"),
    ],
    ids=["deadlock", "serialization", "unique violation", "sqlite locked", "a bug"],
)
def test_a_failed_statement_is_not_an_outage(error):
    assert not database_unreachable(error)


def middleware_answer(error: Exception, **headers):
    request = RequestFactory().get("/studies/", **headers)
    return DatabaseUnavailableMiddleware(lambda request: None).process_exception(request, error)


def test_an_outage_answers_a_page_that_reloads_itself_or_json_to_a_json_client():
    outage = as_django(PoolTimeout("couldn't get a connection after 10.00 sec"))
    page = middleware_answer(outage)
    assert page.status_code == 503 and page["Retry-After"] == "5" and "no-cache" in page["Cache-Control"]
    text = page.content.decode()
    assert "The database is unavailable" in text and '<meta http-equiv="refresh" content="5">' in text
    assert "sign in" not in text.lower()  # signing in needs the database too
    answer = middleware_answer(outage, HTTP_ACCEPT="application/json")
    assert answer.status_code == 503 and json.loads(answer.content)["code"] == UNAVAILABLE_CODE


def test_a_post_is_not_sent_again_by_the_page():
    outage = as_django(psycopg.OperationalError("connection failed"))
    request = RequestFactory().post("/s/token/")
    page = DatabaseUnavailableMiddleware(lambda request: None).process_exception(request, outage)
    assert page.status_code == 503 and "http-equiv" not in page.content.decode()


def test_other_errors_are_left_to_the_500_page():
    assert middleware_answer(as_django(with_state("40P01"))) is None
