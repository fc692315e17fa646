"""The staff pages' sockets (arena_site/staff_sockets.py) send only the frames they declare: their
state frame to staff, the declared refusal to anyone else; and each page handles that frame."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from channels.db import database_sync_to_async

from annotation.reporting.consumers import DashboardConsumer
from arena_site.staff_sockets import StaffSocket, unavailable_frame
from puzzles.jobs.consumers import JobsConsumer
from puzzles.jobs.models import Job
from tests.live_stream import session_of, socket_at

ROOT = Path(__file__).resolve().parent.parent
SOCKETS = [
    ("/ws/dashboard/", DashboardConsumer, ROOT / "static" / "arena" / "dashboard.js"),
    ("/ws/jobs/", JobsConsumer, ROOT / "puzzles" / "jobs" / "static" / "jobs" / "jobs.js"),
]


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("path", "consumer", "page"), SOCKETS)
async def test_each_staff_socket_sends_its_declared_frames(path, consumer, page):
    await database_sync_to_async(Job.objects.create)(kind="generate", label="x", started_by="grace", total=4)
    staff = socket_at(path, await database_sync_to_async(session_of)("grace", staff=True))
    assert (await staff.connect())[0]
    state = await staff.receive_json_from(timeout=10)
    assert state["type"] == consumer.frame_type
    assert consumer.frame_problem(state) is None
    await staff.disconnect()

    refused = socket_at(path, await database_sync_to_async(session_of)("ann", staff=False))
    await refused.connect()
    error = await refused.receive_json_from(timeout=5)
    assert consumer.frame_problem(error) is None and error["code"] == "not_allowed"
    assert await refused.receive_output() == {"type": "websocket.close", "code": 4403}
    await refused.disconnect()

    handled = set(re.findall(r'frame\.type\s*[!=]==\s*"(\w+)"', page.read_text()))
    assert consumer.frame_type in handled and handled <= {consumer.frame_type, "error"}, (
        f"{page.name} handles {handled}"
    )


@pytest.mark.parametrize("consumer", [DashboardConsumer, JobsConsumer])
def test_a_frame_off_its_declaration_is_named(consumer: type[StaffSocket]):
    fields = dict.fromkeys(consumer.frame_fields, 0)
    assert consumer.frame_problem({"type": consumer.frame_type, **fields}) is None
    assert "fields" in consumer.frame_problem({"type": consumer.frame_type, **fields, "extra": 1})
    assert "fields" in consumer.frame_problem({"type": consumer.frame_type})
    assert "undeclared" in consumer.frame_problem({"type": "progress", **fields})
    assert "error code" in consumer.frame_problem({"type": "error", "code": "closed", "message": "x"})
    assert consumer.frame_problem(unavailable_frame()) is None  # the database down, declared for every staff socket
