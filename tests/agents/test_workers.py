"""--workers is the number of model calls in flight at once, past the default thread pool's size."""

import contextlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model

from annotation.agents.browser import on_pages
from annotation.agents.model import ChatClient
from tests.agents.fakes import reply

pytestmark = pytest.mark.browser

# Two more than asyncio's default pool, min(32, CPUs + 4) threads (6 on a 2-core machine: 8 workers).
WORKERS = min(32, (os.cpu_count() or 1) + 4) + 2


class GatheringServer:
    """A model server that holds every request until WORKERS are in flight at once (or, if they
    never are, until a generous wait runs out), keeping the most it saw at once."""

    def __init__(self):
        self.in_flight = self.most = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(WORKERS, timeout=30)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                with owner.lock:
                    owner.in_flight += 1
                    owner.most = max(owner.most, owner.in_flight)
                # Fewer arriving together break the barrier: answered anyway, `most` tells.
                with contextlib.suppress(threading.BrokenBarrierError):
                    owner.barrier.wait()
                with owner.lock:
                    owner.in_flight -= 1
                data = json.dumps(reply({"role": "assistant", "content": "ok"})[1]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_every_worker_has_its_model_call_in_flight_at_once(transactional_db):
    user = get_user_model().objects.create_user("agent-workers")
    model = GatheringServer()
    client = ChatClient(base_url=model.url, retries=0, timeout_s=60)

    async def ask(page, job):
        return (await client.complete({"model": "m", "messages": []})).message["content"]

    try:
        answers = on_pages(list(range(WORKERS)), user=user, workers=WORKERS, act=ask)
    finally:
        model.close()
    assert answers == ["ok"] * WORKERS
    assert model.most == WORKERS
