"""--workers is the number of model calls in flight at once, past the default thread pool's size."""

import contextlib
import os
import threading

import pytest
from django.contrib.auth import get_user_model

from annotation.agents.browser import on_pages
from annotation.agents.model import ChatClient
from tests.agents.fakes import Answer, FakeChatServer, reply

pytestmark = pytest.mark.browser

# Two more than asyncio's default pool, min(32, CPUs + 4) threads (6 on a 2-core machine: 8 workers).
WORKERS = min(32, (os.cpu_count() or 1) + 4) + 2


class Gathering:
    """A model's answer that holds every request until WORKERS are in flight at once (or, if they
    never are, until a generous wait runs out), keeping the most it saw at once."""

    def __init__(self):
        self.in_flight = self.most = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(WORKERS, timeout=30)

    def __call__(self, body: dict) -> Answer:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        # Fewer arriving together break the barrier: answered anyway, `most` tells.
        with contextlib.suppress(threading.BrokenBarrierError):
            self.barrier.wait()
        with self.lock:
            self.in_flight -= 1
        return reply({"role": "assistant", "content": "ok"})


def test_every_worker_has_its_model_call_in_flight_at_once(transactional_db):
    user = get_user_model().objects.create_user("agent-workers")
    gathering = Gathering()
    model = FakeChatServer(gathering, serial=False)
    client = ChatClient(base_url=model.url, retries=0, timeout_s=60)

    async def ask(page, job):
        return (await client.complete({"model": "m", "messages": []})).message["content"]

    try:
        answers = on_pages(list(range(WORKERS)), user=user, workers=WORKERS, act=ask)
    finally:
        model.close()
    assert answers == ["ok"] * WORKERS
    assert gathering.most == WORKERS
