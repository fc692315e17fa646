"""Settings from the environment fail loudly on bad values."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from arena_site.env import database_from_url, env_bool, env_int, env_list

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
        "django.db.backends.postgresql",
        "arena",
        "user",
        "p@ss",
        "db.local",
        "5433",
    )
    assert database_from_url("sqlite:////tmp/x.sqlite3")["NAME"] == "/tmp/x.sqlite3"
    with pytest.raises(ImproperlyConfigured, match="names no database"):
        database_from_url("postgres://db.local/")
    with pytest.raises(ImproperlyConfigured, match="not supported"):
        database_from_url("mysql://db/arena")


def _settings_error(**env):
    full = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CI", "DEBUG", "SECRET_KEY")}
    full.update(env)
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stderr


def test_ci_refuses_to_run_without_postgresql(tmp_path):
    code, err = _settings_error(CI="true", ARENA_VAR_DIR=str(tmp_path))
    assert code != 0 and "CI=true requires DATABASE_URL to point at PostgreSQL" in err


def test_production_needs_a_secret_key(tmp_path):
    code, err = _settings_error(DEBUG="false", ARENA_VAR_DIR=str(tmp_path))
    assert code != 0 and "SECRET_KEY must be set" in err
