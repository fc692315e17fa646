"""Stopping `env serve` while a trainer's session is open: it ends, and takes its Chromium and its
page server with it (it used to leave the browser running, and wait on the page server)."""

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from openenv.core import GenericEnvClient

from .conftest import serve

pytestmark = pytest.mark.browser
STOP_DEADLINE_S = 60  # a server that has not ended by then never will: the test fails, not hangs


def descendants(pid: int) -> dict[int, str]:
    """Every living process under pid, with its command name (read from /proc)."""
    parents: dict[int, list[int]] = {}
    names = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            text = stat.read_text()
            name, fields = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
            if fields[0] != "Z":  # a zombie has ended already
                names[int(stat.parent.name)] = name
                parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = {}, list(parents.get(pid, []))
    while todo:
        child = todo.pop()
        found[child] = names[child]
        todo += parents.get(child, [])
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_server_stopped_mid_session_ends_with_its_browser_and_page_server(transactional_db, bank, key):
    (puzzle,) = bank("Dice_Count")
    seen: dict[str, object] = {}
    with contextlib.ExitStack() as stack:
        base, process = serve(stack)
        trainer = f"{base}/{key()}"

        async def stop_mid_session() -> None:
            async with GenericEnvClient(base_url=trainer) as env:
                await env.reset(puzzle=puzzle.uid)  # the shared Chromium is up, a page open in it
                seen["started"] = descendants(process.pid)
                began = time.monotonic()
                process.send_signal(signal.SIGTERM)
                await asyncio.to_thread(process.wait, STOP_DEADLINE_S)
                seen["took"] = time.monotonic() - began

        with contextlib.suppress(ConnectionError, RuntimeError):  # the goodbye meets a closed socket
            asyncio.run(stop_mid_session())
    started: dict[int, str] = seen["started"]  # type: ignore[assignment]
    assert "took" in seen, f"env serve did not end within {STOP_DEADLINE_S} s of SIGTERM"
    print(f"env serve ended {seen['took']:.1f} s after SIGTERM, exit code {process.returncode}")
    assert any("chrom" in name.lower() for name in started.values()), started  # a browser to stop
    assert len(started) > 2, started  # the page server and the browser driver too
    left = {pid: name for pid, name in started.items() if alive(pid)}
    for pid in left:  # nothing left behind for the next test, whatever the outcome
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert left == {}
