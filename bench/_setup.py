"""Bench scripts run against a throwaway SQLite database and media folder unless DATABASE_URL is set,
with throwaway secrets unless SECRET_KEY and PUZZLE_BANK_SECRET are set (DEBUG stays off, as deployed)."""

import os
import resource
import secrets
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def django_for_bench() -> Path:
    sys.path.insert(0, str(ROOT))
    # Beside the site's own var/ (where MEDIA_ROOT lives by default), not in /tmp: creating a file
    # in this machine's /tmp costs ~235 us of CPU against ~42 us here (measured), which an import's
    # three files a puzzle would add to its figure.
    (ROOT / "var").mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-", dir=ROOT / "var"))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{scratch / 'bench.sqlite3'}")
    os.environ.setdefault("MEDIA_ROOT", str(scratch / "media"))
    # Exported, so the page servers and child processes a bench starts share them.
    os.environ.setdefault("SECRET_KEY", f"bench-only-{secrets.token_urlsafe(40)}")
    os.environ.setdefault("PUZZLE_BANK_SECRET", f"bench-only-{secrets.token_urlsafe(40)}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return scratch


def planner_statistics() -> None:
    """ANALYZE on PostgreSQL after a bench's bulk setup, as autovacuum keeps a running site's
    statistics: without them the planner guesses one row per table and picks plans (nested loops
    over every attempt) that a deployment never runs, and the figures come out too slow."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended and been reaped (pool workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
