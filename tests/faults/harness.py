"""What the fault scenarios are made of: daphne processes the test can kill and restart on the same
port, a TCP proxy (asyncio) that spreads connections over them and can black-hole every connection
it carries, pages with an in-page event generator that numbers each event, and the tally of
numbers generated against numbers stored."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from django.conf import settings
from playwright.async_api import Browser

from annotation.agents.browser import VIEWPORT, open_attempt, session_for
from annotation.agents.server import ROOT, _free_port, _wait_until_listening, daphne_command
from annotation.models import Event

# --- web processes ----------------------------------------------------------------------------


class Daphne:
    """One web process as deployed (annotation/agents/server.py's command), on a port of its own
    that survives a kill: a restart listens on the same port, as a supervisor's restart would."""

    def __init__(self, host: str = "127.0.0.1"):
        self.host = host
        self.port = _free_port(host)
        # the test database, media, secret key: read once, here; every restart runs the same
        self.command, self.env = daphne_command(host, self.port)
        self.process: subprocess.Popen | None = None
        self.log = tempfile.TemporaryFile("w+")  # noqa: SIM115  (closed by stop(), after the last restart)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> Daphne:
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, text=True
        )
        _wait_until_listening(self.process, self.host, self.port, self.log)
        return self

    def kill(self) -> None:
        """SIGKILL: no drain, no goodbye; its sockets die with it, its writes in flight are lost."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


@contextlib.contextmanager
def web_processes(count: int):
    servers = []
    try:
        for _ in range(count):
            servers.append(Daphne().start())
        yield servers
    finally:
        for server in servers:
            server.stop()


# --- the proxy ----------------------------------------------------------------------------------


@dataclass(eq=False)
class Link:
    upstream: int | None = None  # index of the web process it goes to
    socket: bool = False  # a WebSocket upgrade to /ws/
    dead: bool = False  # black-holed: bytes both ways are read and dropped, nothing is closed


@dataclass
class Proxy:
    """A TCP proxy between the pages and the web processes, as nginx is in production: each new
    connection goes to the next process in turn, skipping one that refuses (nginx's
    proxy_next_upstream). black_hole() makes every connection it carries dead but open (nothing
    passes either way, nothing is closed), and new connections too for a while: a stalled proxy,
    a network that drops everything without a reset."""

    upstreams: list[tuple[str, int]]
    links: set[Link] = field(default_factory=set)
    hole_until: float = 0.0
    port: int = 0

    async def start(self) -> Proxy:
        self._turn = itertools.cycle(range(len(self.upstreams)))
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def close(self) -> None:
        self.server.close()
        for task in list(getattr(self, "_tasks", ())):
            task.cancel()

    def black_hole(self, new_for_s: float) -> int:
        """Every connection carried now goes dead; new ones too for new_for_s. Returns how many
        sockets (WebSockets) were carried."""
        for link in self.links:
            link.dead = True
        self.hole_until = time.monotonic() + new_for_s
        return sum(link.socket for link in self.links)

    def sockets_on(self, upstream: int) -> int:
        return sum(link.socket and not link.dead and link.upstream == upstream for link in self.links)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = Link(dead=time.monotonic() < self.hole_until)
        self.links.add(link)
        self._tasks = getattr(self, "_tasks", set())
        self._tasks.add(asyncio.current_task())
        try:
            if link.dead:
                await _drain(reader)
                return
            connected = await self._connect(link)
            if connected is None:
                return
            up_reader, up_writer = connected
            await asyncio.gather(
                self._pump(reader, up_writer, link, first=True),
                self._pump(up_reader, writer, link),
                return_exceptions=True,
            )
            up_writer.close()
        finally:
            self.links.discard(link)
            self._tasks.discard(asyncio.current_task())
            writer.close()

    async def _connect(self, link: Link):
        for _ in range(len(self.upstreams)):
            index = next(self._turn)
            with contextlib.suppress(OSError):
                connected = await asyncio.open_connection(*self.upstreams[index])
                link.upstream = index
                return connected
        return None  # every process refused: the client sees its connection closed

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, link: Link, first=False) -> None:
        while data := await source.read(65536):
            if first:
                link.socket = data.startswith(b"GET /ws/")
                first = False
            if link.dead:
                continue  # swallowed; the other side hears nothing, and nothing closes
            sink.write(data)
            await sink.drain()
        if link.dead:  # a dead link stays open until its client gives up
            return
        with contextlib.suppress(OSError):
            sink.write_eof()


async def _drain(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


# --- pages ----------------------------------------------------------------------------------------

# The in-page generator: `per_tick` events every 100 ms, each a keydown whose key is its own number
# ("gen0", "gen1", ...), dispatched on the window, where the page's capture listens (nothing else on
# the page reacts to these keys). 6 per tick: 60 events/s, a pointer moving all the time.
GENERATOR = """
window.__gen = {
  n: 0,
  timer: null,
  start(perTick) {
    this.timer = setInterval(() => {
      for (let i = 0; i < perTick; i++) {
        window.dispatchEvent(new KeyboardEvent("keydown", { key: "gen" + this.n++, code: "Generated" }));
      }
    }, 100);
  },
  stop() {
    clearInterval(this.timer);
    return this.n;
  },
};
"""
PER_TICK = 6
STATE = "window.arena.state()"


async def page_on(browser: Browser, base_url: str, session: str, attempt_uid: str):
    """A signed-in page on base_url showing the attempt, with the generator loaded."""
    context = await browser.new_context(viewport=VIEWPORT, base_url=base_url)
    await context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": base_url}])
    await context.add_init_script(GENERATOR)
    page = await context.new_page()
    await open_attempt(page, attempt_uid)
    await page.wait_for_function(f"{STATE}.connected")
    return page


async def recovered(page, since: float, over: asyncio.Event, timeout_s: float = 90) -> float:
    """The time to recover: the longest the page waited for an acknowledgement (batches pending and
    none acknowledged) from `since` (the fault's start, time.monotonic) until the fault is `over`
    and the server has acknowledged a batch the page made after that."""
    target = None
    acked = (await page.evaluate(STATE))["acked"]
    last = since  # the last moment the page had nothing waiting, or heard an ack
    worst = 0.0
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = await page.evaluate(STATE)
        now = time.monotonic()
        if state["acked"] > acked or state["pending"] == 0:
            last, acked = now, state["acked"]
        worst = max(worst, now - last)
        if over.is_set():
            target = target or state["nextSeq"]
            if state["acked"] >= target:
                return worst
        await asyncio.sleep(0.05)
    raise AssertionError(f"not recovered in {timeout_s} s: {await page.evaluate(STATE)}")


def sessions_for(users) -> list[str]:
    return [session_for(user) for user in users]


# --- counting -------------------------------------------------------------------------------------


def tally(attempt, generated: int) -> dict:
    """Generated numbers against stored ones: every number once, nothing else."""
    keys = Event.objects.filter(attempt=attempt, kind="keydown", data__key__startswith="gen").values_list(
        "data__key", flat=True
    )
    numbers = [int(key[3:]) for key in keys]
    held = set(numbers)
    wanted = set(range(generated))
    return {
        "generated": generated,
        "stored": len(held & wanted),
        "lost": len(wanted - held),
        "duplicated": len(numbers) - len(held),
        "strangers": sorted(held - wanted),  # numbers never generated: must be none
    }
