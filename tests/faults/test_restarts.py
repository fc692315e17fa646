"""A web process through a restart of Redis: what it keeps there (the join allowance in the cache)
never costs a person their place, and it counts again once Redis is back.

The process under test talks to a Redis of its own (tests/private_servers.py), killed and started
again on the same port, with everything it held gone, as a crashed Redis that keeps nothing on disk.
"""

from __future__ import annotations

import re
import time

import pytest
import redis as redis_client
from django.test import Client

from annotation.models import Enrollment
from annotation.studies.setup import study_create
from tests.faults import report
from tests.private_servers import private_redis

pytestmark = [pytest.mark.django_db, pytest.mark.restart]


def _join(study, crowd_id: str) -> int:
    """A new browser opens the invite link with its crowd id and agrees; the join's status code."""
    link = f"/s/{study.token}/?PROLIFIC_PID={crowd_id}&STUDY_ID=s1&SESSION_ID=session-{crowd_id}"
    browser = Client()
    assert "I agree, start" in re.sub(r"\s+", " ", browser.get(link).content.decode())
    return browser.post(link).status_code


def test_people_join_through_a_redis_restart_and_the_allowance_counts_again_after(verified, settings):
    verified(types=("Dice_Count",), per_type=3)
    study = study_create(name="Through Redis", split="test", puzzles_per_annotator=1)
    with private_redis() as redis:
        settings.CACHES = {
            "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis.url(1)}
        }
        assert _join(study, "before") == 302
        assert _allowance_keys(redis.url(1))  # counted
        redis.kill()
        assert _join(study, "during") == 302  # the allowance is a guard, not a gate: it fails open
        redis.start()
        back = time.monotonic()
        assert _join(study, "after") == 302
        assert _allowance_keys(redis.url(1))  # counting again
        counting_again_s = time.monotonic() - back
    joined = set(Enrollment.objects.values_list("crowd_id", flat=True))
    row = report.row("web process x Redis killed: people joining", "units: joins; recovery: back to counted joins")
    row.add(
        {"generated": 3, "stored": len(joined), "lost": 3 - len(joined), "duplicated": 0},
        scored=True,
        recovery_s=counting_again_s,
    )
    assert joined == {"before", "during", "after"}


def _allowance_keys(url: str) -> list[bytes]:
    return redis_client.Redis.from_url(url).keys("*arena:joins:*")
