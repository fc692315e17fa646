"""Typed readers for settings that come from the environment; bad values fail loudly."""

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# Connections one process's pool keeps open at least and at most, and how long a request waits
# for one when all are in use (then it fails). A web process runs its database calls on at most
# ASGI_THREADS threads (Python's default: the cores + 4, so 6 on 2 cores) plus Django's one
# thread for the rest, so 8 is enough for one process; PostgreSQL's max_connections (100 by
# default) must hold every process's MAX: web processes x MAX + worker processes x MAX + a few.
POOL_MIN, POOL_MAX, POOL_TIMEOUT_S = 2, 8, 10

# libpq's limits on a network that stops answering (a failover that leaves the old address dead,
# a dropped route): without them a connection attempt waits 130 s (psycopg's default) and a query
# in flight waits for the kernel to give up retransmitting, about 15 minutes, each holding a
# thread of the web process meanwhile. With them: 10 s to connect, 30 s for data sent and never
# acknowledged, and an idle connection probed after 30 s and dropped when the probes go unanswered
# (after about 40 s: on Linux tcp_user_timeout cuts the 3 probes short).
NETWORK_LIMITS = {
    "connect_timeout": 10,
    "tcp_user_timeout": 30_000,  # ms; a peer slow to read (a long statement while more is queued) is not dead
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}


def sqlite_database(name: str | Path) -> dict:
    """Django DATABASES entry for an SQLite file, shared by the site's processes (the page server,
    a replay's, the tests'): a write waits out another process's for up to 20 s instead of failing
    with "database is locked", and a writing transaction takes the lock up front (IMMEDIATE)
    rather than failing midway."""
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": name,
        "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
    }


def database_from_url(
    url: str,
    *,
    pool: bool = True,
    pool_min: int = POOL_MIN,
    pool_max: int = POOL_MAX,
    pool_timeout: int = POOL_TIMEOUT_S,
) -> dict:
    """Django DATABASES entry for a postgres:// or sqlite:/// URL.

    PostgreSQL connections come from psycopg's pool (Django's OPTIONS "pool"), one pool per
    process: a request or a socket's write borrows a connection and gives it back when done
    (CONN_MAX_AGE 0, as pooling requires), so the connections a process holds are bounded by
    pool_max however many sockets it serves. pool=False: a connection per thread, closed after
    each request (for a pooler in front, such as PgBouncer in transaction mode).
    """
    parsed = urlparse(url)
    if parsed.scheme in ("postgres", "postgresql", "pgsql"):
        name = unquote(parsed.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(f"DATABASE_URL {url!r} names no database")
        if pool and not (0 <= pool_min <= pool_max and pool_max >= 1):
            raise ImproperlyConfigured(
                f"database pool sizes min {pool_min}, max {pool_max}: need 0 <= min <= max, max >= 1"
            )
        return {
            "ENGINE": "arena_site.postgresql",  # Django's, with a pool that recovers at once (its base.py)
            "NAME": name,
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            "CONN_MAX_AGE": 0,
            # A connection is checked before it is handed out (the pool's check, or Django's for an
            # unpooled one): after a database restart or a terminated backend the next request (or
            # socket handshake, or write) gets a fresh one instead of an error.
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": {
                **NETWORK_LIMITS,
                **({"pool": {"min_size": pool_min, "max_size": pool_max, "timeout": pool_timeout}} if pool else {}),
            },
        }
    if parsed.scheme == "sqlite":
        # sqlite:///relative.db and sqlite:////absolute/path.db, as dj-database-url reads them.
        name = unquote(parsed.path[1:]) or ":memory:"
        if name == ":memory:":
            return sqlite_database(name)
        # The tests' database a file beside it, not Django's in-memory default: the page servers
        # that browser tests start in child processes must open the same database.
        return {**sqlite_database(name), "TEST": {"NAME": f"{name}.test"}}
    raise ImproperlyConfigured(
        f"DATABASE_URL scheme {parsed.scheme!r} is not supported (use postgres:// or sqlite:///)"
    )
