"""Settings from the environment fail loudly on bad values; production is the default."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from arena_site.env import NETWORK_LIMITS, database_from_url, env_bool, env_int, env_list

ROOT = Path(__file__).resolve().parent.parent


def test_booleans(monkeypatch):
    monkeypatch.setenv("FLAG", "yes")
    assert env_bool("FLAG") is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", default=True) is False
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="FLAG='maybe' is not a boolean"):
        env_bool("FLAG")


def test_integers_and_lists(monkeypatch):
    monkeypatch.setenv("N", "12")
    assert env_int("N", 3) == 12
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int("N", 3)
    monkeypatch.setenv("HOSTS", "a.example, b.example,,")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]


def test_database_urls():
    pg = database_from_url("postgres://user:p%40ss@db.local:5433/arena")
    assert (pg["ENGINE"], pg["NAME"], pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"]) == (
        "arena_site.postgresql",
        "arena",
        "user",
        "p@ss",
        "db.local",
        "5433",
    )
    # PostgreSQL comes pooled (one psycopg pool per process; pooling needs CONN_MAX_AGE 0), checked
    # before each hand-out; SQLite has no pool.
    assert pg["OPTIONS"] == {**NETWORK_LIMITS, "pool": {"min_size": 2, "max_size": 8, "timeout": 10}}
    assert (pg["CONN_MAX_AGE"], pg["CONN_HEALTH_CHECKS"]) == (0, True)
    sized = database_from_url("postgres://db.local/arena", pool_min=1, pool_max=20, pool_timeout=3)
    assert sized["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 20, "timeout": 3}
    assert database_from_url("postgres://db.local/arena", pool=False)["OPTIONS"] == NETWORK_LIMITS
    with pytest.raises(ImproperlyConfigured, match="pool sizes"):
        database_from_url("postgres://db.local/arena", pool_min=5, pool_max=4)
    assert "pool" not in database_from_url("sqlite:////tmp/x.sqlite3").get("OPTIONS", {})
    assert database_from_url("sqlite:////tmp/x.sqlite3")["NAME"] == "/tmp/x.sqlite3"
    assert database_from_url("sqlite:////tmp/x.sqlite3")["TEST"] == {"NAME": "/tmp/x.sqlite3.test"}  # a file
    assert "TEST" not in database_from_url("sqlite://")  # in memory, as asked
    with pytest.raises(ImproperlyConfigured, match="names no database"):
        database_from_url("postgres://db.local/")
    with pytest.raises(ImproperlyConfigured, match="not supported"):
        database_from_url("mysql://db/arena")


STRIPPED = ("DATABASE_URL", "CI", "DEBUG", "SECRET_KEY", "ARENA_BEHIND_HTTPS_PROXY", "ARENA_HSTS_SECONDS")
A_KEY = "k3y-for-settings-tests-" + "x7Qz" * 10


def _settings_run(code: str = "", **env):
    """Settings loaded in a fresh process (not under pytest) with this environment on top of ours."""
    full = {k: v for k, v in os.environ.items() if k not in STRIPPED}
    full.update(env)
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()\n" + code],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout, done.stderr


def _settings_error(**env):
    code, _, err = _settings_run(**env)
    return code, err


def _settings_values(names, **env) -> dict:
    code, out, err = _settings_run(
        "import json; from django.conf import settings\n"
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {names!r}}}))",
        **env,
    )
    assert code == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_the_database_pool_is_sized_from_the_environment(tmp_path):
    url = "postgres://arena@127.0.0.1:5432/arena"
    common = {"SECRET_KEY": A_KEY, "ARENA_VAR_DIR": str(tmp_path), "DATABASE_URL": url}
    sized = _settings_values(["DATABASES"], ARENA_DB_POOL_MIN="1", ARENA_DB_POOL_MAX="12", **common)
    assert sized["DATABASES"]["default"]["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 12, "timeout": 10}
    unpooled = _settings_values(["DATABASES"], ARENA_DB_POOL="false", **common)
    assert unpooled["DATABASES"]["default"]["OPTIONS"] == NETWORK_LIMITS


def test_ci_refuses_to_run_without_postgresql(tmp_path):
    code, err = _settings_error(CI="true", SECRET_KEY=A_KEY, ARENA_VAR_DIR=str(tmp_path))
    assert code != 0 and "CI=true requires DATABASE_URL to point at PostgreSQL" in err


def test_debug_is_off_unless_asked_for(tmp_path):
    assert _settings_values(["DEBUG"], SECRET_KEY=A_KEY, ARENA_VAR_DIR=str(tmp_path)) == {"DEBUG": False}
    assert _settings_values(["DEBUG"], DEBUG="true", ARENA_VAR_DIR=str(tmp_path)) == {"DEBUG": True}


def test_production_needs_a_secret_key_of_its_own(tmp_path):
    code, err = _settings_error(DEBUG="false", ARENA_VAR_DIR=str(tmp_path))
    assert code != 0 and "SECRET_KEY must be set" in err
    for published in ("dev-only-insecure-key-do-not-deploy", "change-me-in-production"):
        code, err = _settings_error(SECRET_KEY=published, ARENA_VAR_DIR=str(tmp_path))
        assert code != 0 and "SECRET_KEY is a published development key" in err


def test_a_published_key_is_refused_with_debug_on_too(tmp_path):
    """With DEBUG on the key is made once in var/ (tests/security/test_defaults.py); one that was ever
    published is not taken even when set by hand."""
    code, err = _settings_error(
        DEBUG="true", SECRET_KEY="dev-only-insecure-key-do-not-deploy", ARENA_VAR_DIR=str(tmp_path)
    )
    assert code != 0 and "SECRET_KEY is a published development key" in err


def test_https_settings_follow_the_proxy_flag(tmp_path):
    names = ["SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS"]
    plain = _settings_values(names, SECRET_KEY=A_KEY, ARENA_VAR_DIR=str(tmp_path))
    assert plain == {
        "SECURE_PROXY_SSL_HEADER": None,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_HSTS_SECONDS": 0,
    }
    behind = _settings_values(names, SECRET_KEY=A_KEY, ARENA_BEHIND_HTTPS_PROXY="true", ARENA_VAR_DIR=str(tmp_path))
    assert behind["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert behind["SESSION_COOKIE_SECURE"] is behind["CSRF_COOKIE_SECURE"] is True
    assert behind["SECURE_HSTS_SECONDS"] >= 31536000


def test_an_sqlite_file_is_opened_for_several_processes(tmp_path, django_db_blocker):
    """An SQLite DATABASE_URL opens as the embedded default does: a 20 s wait for another process's
    write rather than "database is locked", and writing transactions that take the lock up front
    (an SQLite URL used to get neither, so the benches' SQLite databases could fail with it)."""
    from django.db.utils import ConnectionHandler

    entry = database_from_url(f"sqlite:///{tmp_path / 'probe.sqlite3'}")
    probe = ConnectionHandler({"default": entry})["default"]  # a handler of its own, not the suite's
    with django_db_blocker.unblock():
        try:
            with probe.cursor() as cursor:
                cursor.execute("PRAGMA busy_timeout")
                assert cursor.fetchone()[0] == 20_000
            assert probe.transaction_mode == "IMMEDIATE"
        finally:
            probe.close()
