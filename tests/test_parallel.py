"""The suite's two processes keep apart on Redis (tests/parallel.py)."""

import os

from django.conf import settings

from tests.parallel import WORKER, worker_redis_url


def test_each_worker_moves_past_the_base_database_by_its_number():
    assert worker_redis_url("redis://127.0.0.1:6379/0", "gw0") == "redis://127.0.0.1:6379/1"
    assert worker_redis_url("redis://127.0.0.1:6379/3", "gw1") == "redis://127.0.0.1:6379/5"
    assert worker_redis_url("redis://:pw@cache:6379", "gw2") == "redis://:pw@cache:6379/3"


def test_the_settings_and_the_processes_a_test_starts_read_the_same_redis():
    assert os.environ.get("REDIS_URL") == settings.REDIS_URL
    if WORKER and settings.REDIS_URL:
        assert settings.REDIS_URL.endswith(f"/{1 + int(WORKER.removeprefix('gw'))}")
