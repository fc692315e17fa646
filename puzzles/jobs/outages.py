"""The database or the broker gone for a while, as a chunk meets it: which errors say so (the chunk
is tried again later, never failed for them), and how a failure that looks like an item's own is
told from one the outage caused (docs/jobs.md, "An outage is waited out")."""

from __future__ import annotations

import kombu.exceptions
import psycopg
import redis
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

BROKER_TIMEOUT_S = 5.0  # a broker that does not answer within this is taken for gone


class ServicesRestarted(Exception):
    """The database or the broker restarted while an item ran: its failure may be the outage's."""


# Errors that say the database or the broker is away (refused, closed, timed out), not that the
# work is wrong: Django's and psycopg's own (a pool's timeout is psycopg's OperationalError),
# redis-py's, and kombu's (Celery sending a task).
TRANSIENT: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    kombu.exceptions.OperationalError,
    ServicesRestarted,
)


def is_transient(error: BaseException) -> bool:
    """Whether the error, or one it was raised from, says a server is away."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        if isinstance(found, TRANSIENT):
            return True
        seen.add(id(found))
        found = found.__cause__
    return False


def services_seen() -> tuple[str, str]:
    """Which run of each server answers now: PostgreSQL's start time and Redis's run id (empty
    for SQLite, or without a broker). Two readings differ when either restarted in between,
    whatever the clocks of the machines say."""
    return _database_started(), broker_run()


def check_not_restarted(since: tuple[str, str]) -> None:
    """Raise ServicesRestarted if the database or the broker restarted after `since` was read
    (and OperationalError or ConnectionError if either is away now)."""
    now = services_seen()
    if now != since:
        gone = [name for name, before, after in zip(("database", "broker"), since, now, strict=True) if before != after]
        raise ServicesRestarted(f"the {' and the '.join(gone)} restarted while it ran")


def broker_run() -> str:
    """The broker's run id ("" without one): it changes whenever Redis restarts, and a Redis that
    restarted may have lost the tasks it held."""
    if not settings.REDIS_URL or settings.CELERY_TASK_ALWAYS_EAGER:
        return ""
    client = redis.Redis.from_url(
        str(settings.REDIS_URL), socket_timeout=BROKER_TIMEOUT_S, socket_connect_timeout=BROKER_TIMEOUT_S
    )
    try:
        return str(client.info("server")["run_id"])
    finally:
        client.close()


def broker_holds_no_task() -> bool:
    """Whether the broker holds no task at all: none queued, none delivered and unacknowledged (a
    task waiting to be tried again is one of those). A chunk still pending then has lost its task."""
    from arena_site.celery import app

    options = app.conf.broker_transport_options or {}
    with app.connection_for_write() as broker:
        client = broker.default_channel.client
        queued = client.llen(app.conf.task_default_queue)
        return queued == 0 and client.hlen(options.get("unacked_key", "unacked")) == 0


def _database_started() -> str:
    if connection.vendor != "postgresql":
        return ""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_postmaster_start_time()")
        return str(cursor.fetchone()[0])
