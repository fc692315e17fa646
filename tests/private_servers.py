"""PostgreSQL and Redis servers of a test's own, which the test may stop, kill and start again.

The machine's servers (127.0.0.1:5432 and :6379) are shared by every test process and by whatever
else runs on the machine; a restart there would end everyone's connections. A private server
listens on a port of its own, keeps its files in a temporary folder, and lives as long as the
`with` block:

    with private_postgres() as pg, private_redis() as redis:
        env = process_environment(pg.url, redis.url())   # for `manage.py ...` / celery / daphne
        ...                                              # start the processes under test with env
        pg.stop()                                        # the outage: connections refused
        pg.start()                                       # back on the same port, data kept
        redis.kill(); redis.start()                      # Redis gone with what it held, then back

PostgreSQL comes from the machine's server binaries (`pg_config --bindir`: initdb, pg_ctl). Its
database `arena` is migrated once per test process into a template cluster, and each private server
starts from a copy of that folder, so a test pays for a copy, not for `migrate`. initdb refuses to
run as root, so as root the cluster belongs to the `postgres` system user (CI runs as root).

Durability is switched off (fsync, synchronous commit): a stop is a clean shutdown, and a test
that wants a crash uses `stop("immediate")`, which PostgreSQL recovers from on start.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from annotation.agents.server import ROOT, _environment, _free_port

HOST = "127.0.0.1"
DATABASE = "arena"
START_TIMEOUT_S = 60


def _bindir() -> Path:
    return Path(subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip())


def _as_postgres_user(command: list[str]) -> list[str]:
    """initdb and the server refuse root; as root they run as the `postgres` system user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _hand_over(folder: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        os.chmod(folder, 0o700)


def process_environment(database_url: str, redis_url: str | None = None) -> dict[str, str]:
    """The environment a process under test needs (the test's secret key, media and private
    folders, settings module), pointed at the given database and, if given, Redis."""
    env = {**_environment(), "DATABASE_URL": database_url}
    if redis_url is not None:
        env["REDIS_URL"] = redis_url
    return env


class PrivatePostgres:
    """One PostgreSQL cluster in `folder`, on `port`, with a migrated database `arena`."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = _free_port(HOST)

    @property
    def url(self) -> str:
        """The migrated database, as DATABASE_URL spells it."""
        return self.url_of(DATABASE)

    def url_of(self, database: str) -> str:
        return f"postgres://postgres@{HOST}:{self.port}/{database}"

    def start(self) -> PrivatePostgres:
        options = (
            f"-p {self.port} -c listen_addresses={HOST} -k {self.folder} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        command = [str(_bindir() / "pg_ctl"), "-D", str(self.folder), "-o", options]
        command += ["-l", str(self.folder / "server.log"), "-w", "-t", str(START_TIMEOUT_S), "start"]
        self._pg_ctl(command)
        return self

    def stop(self, mode: str = "fast") -> None:
        """Shut down: "fast" ends every connection and stops cleanly; "immediate" is a crash."""
        self._pg_ctl([str(_bindir() / "pg_ctl"), "-D", str(self.folder), "-m", mode, "-w", "stop"])

    def restart(self, down_s: float, mode: str = "fast") -> None:
        self.stop(mode)
        time.sleep(down_s)
        self.start()

    @property
    def running(self) -> bool:
        command = _as_postgres_user([str(_bindir() / "pg_ctl"), "-D", str(self.folder), "status"])
        status = subprocess.run(command, capture_output=True)
        return status.returncode == 0

    def log(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _pg_ctl(self, command: list[str]) -> None:
        done = subprocess.run(_as_postgres_user(command), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[-1:])} failed: {done.stdout}{done.stderr}\n{self.log()[-2000:]}")


@functools.cache
def _template() -> Path:
    """A stopped cluster with `arena` migrated, made once per test process and copied per server."""
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-template-"))
    _hand_over(folder)
    initdb = [str(_bindir() / "initdb"), "-D", str(folder), "-U", "postgres", "--auth=trust", "-E", "UTF8"]
    subprocess.run(_as_postgres_user([*initdb, "--no-instructions"]), capture_output=True, check=True)
    server = PrivatePostgres(folder).start()
    try:
        createdb = [str(_bindir() / "createdb"), "-h", HOST, "-p", str(server.port), "-U", "postgres", DATABASE]
        subprocess.run(createdb, capture_output=True, check=True)
        migrate = [sys.executable, "manage.py", "migrate", "--noinput"]
        done = subprocess.run(migrate, cwd=ROOT, env=process_environment(server.url), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"migrate on the private server failed: {done.stdout}{done.stderr}")
    finally:
        server.stop()
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@contextlib.contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    """A running private cluster with the database `arena` migrated; removed after the block."""
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-"))
    try:
        shutil.copytree(_template(), folder, dirs_exist_ok=True, symlinks=True)
        for stale in ("postmaster.pid", "server.log"):
            (folder / stale).unlink(missing_ok=True)
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "postgres:postgres", str(folder)], check=True)
        _hand_over(folder)
        server = PrivatePostgres(folder).start()
        try:
            yield server
        finally:
            if server.running:
                server.stop("immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class PrivateRedis:
    """One redis-server on `port`, its files in `folder`."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = _free_port(HOST)
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://{HOST}:{self.port}/{db}"

    def start(self) -> PrivateRedis:
        command = ["redis-server", "--port", str(self.port), "--bind", HOST, "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.folder), "--logfile", str(self.folder / "redis.log")]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on {self.port}: {self.log()[-2000:]}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """A clean shutdown that keeps what Redis held (written to dump.rdb, read back on start)."""
        if self.process is not None and self.process.poll() is None:
            subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "save"], capture_output=True)
            self.process.wait(30)

    def kill(self) -> None:
        """SIGKILL: Redis is gone with everything it held (queued tasks, results, locks)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)
        (self.folder / "dump.rdb").unlink(missing_ok=True)

    def log(self) -> str:
        path = self.folder / "redis.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _answers(self) -> bool:
        ping = subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True)
        return ping.stdout.strip() == "PONG"


@contextlib.contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    with tempfile.TemporaryDirectory(prefix="arena-redis-") as folder:
        server = PrivateRedis(Path(folder)).start()
        try:
            yield server
        finally:
            server.kill()
