"""`env serve` through what happens to a deployment: its database restarted under a session, and
the server itself killed mid-episode. Times to recover are measured and printed (with the load
average), never asserted: each wait only has a generous ceiling, so a loaded machine is slower,
not red."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import timedelta

import psycopg
import pytest
from django.utils import timezone
from openenv.core import GenericEnvClient

from annotation.agents.players import LEASE_S, player_start, rollouts_abandoned_fail
from annotation.agents.server import ROOT, database_url
from annotation.environment.episodes import episode_begin
from annotation.environment.protocol import reset_params
from annotation.environment.tokens import key_hash
from annotation.models import EnvToken, PlayerProcess, Rollout
from tests.faults import report
from tests.private_servers import private_postgres, private_redis, process_environment

from .conftest import serve
from .test_server_stop import descendants

pytestmark = pytest.mark.browser
restart = pytest.mark.restart  # the scenarios of the restart matrix (bench/restarts.py)
OUTAGE_S = 20.0  # the database down this long (the outage: 21 s)
CEILING_S = 60.0  # a server not back (or a rollout not failed) by then never will be: the test fails


def load() -> str:
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


def manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def health(base: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def until_it_works(attempt, ceiling_s: float = CEILING_S) -> tuple[float, list[str]]:
    """Call attempt() until it returns without raising; (seconds taken, the errors met meanwhile)."""
    began, errors = time.monotonic(), []
    while True:
        try:
            await attempt()
            return time.monotonic() - began, errors
        except (RuntimeError, ConnectionError, OSError) as error:
            errors.append(str(error))
            if time.monotonic() - began > ceiling_s:
                raise AssertionError(f"not back within {ceiling_s:g} s: {errors[-3:]}") from error
            await asyncio.sleep(0.5)


@restart
def test_a_database_restart_under_a_session_costs_only_the_outage(private_root):
    with private_postgres() as pg, contextlib.ExitStack() as stack:
        env = process_environment(pg.url)
        env.pop("REDIS_URL", None)  # this test's fault is the database's alone
        generate = ["puzzles", "generate", "--split", "test", "--per-type", "1", "--seed", "11", "--workers", "1"]
        manage(env, *generate, "--types", "Geometry_Click", "Dice_Count")
        key = manage(env, "env", "token", "trainer", "--datasets", "generated:11", "--splits", "test").split()[-1]
        base, _ = serve(stack, env=env)
        seen: dict = {}

        async def through_a_restart() -> None:
            async with GenericEnvClient(base_url=f"{base}/{key}") as env_client:
                await env_client.reset(type="Geometry_Click")
                await env_client.step({"action": "screenshot"})
                pg.stop()
                began = time.monotonic()
                with pytest.raises(RuntimeError) as refused:
                    await env_client.step({"action": "screenshot"})
                seen["refused"], seen["refused_s"] = str(refused.value), time.monotonic() - began
                seen["health_down"] = await asyncio.to_thread(health, base)
                await asyncio.sleep(OUTAGE_S - (time.monotonic() - began))  # a restart's length, as seen
                await asyncio.to_thread(pg.start)
                seen["step_s"], seen["step_errors"] = await until_it_works(
                    lambda: env_client.step({"action": "screenshot"})
                )
                seen["state"] = await env_client.state()

            async def new_client() -> None:
                async with GenericEnvClient(base_url=f"{base}/{key}") as other:
                    await other.reset(type="Dice_Count")

            seen["reset_s"], seen["reset_errors"] = await until_it_works(new_client)

        asyncio.run(through_a_restart())
        print(
            f"\nenv serve, PostgreSQL down {OUTAGE_S:g} s (load {load()}): a step during the outage refused in"
            f" {seen['refused_s']:.1f} s; database back -> same session's step {seen['step_s']:.1f} s"
            f" ({len(seen['step_errors'])} refused meanwhile), then a new client's reset {seen['reset_s']:.1f} s"
        )
        assert "the database is unavailable" in seen["refused"] and "code: EXECUTION_ERROR" in seen["refused"]
        assert "nothing was done" in seen["refused"]
        status, said = seen["health_down"]
        assert status == 503 and any(reason.startswith("database: ") for reason in said["reasons"]), said
        assert seen["state"]["step_count"] == 2  # the refused step was not counted
        assert health(base) == (200, {"status": "healthy"})
        with psycopg.connect(pg.url) as db:
            ended = db.execute("SELECT status, reason FROM annotation_rollout ORDER BY id").fetchall()
            turns = db.execute("SELECT count(*) FROM annotation_turn").fetchone()
        closed = ("failed", "closed: the client closed the session")
        row = report.row(
            f"env serve x PostgreSQL stopped {OUTAGE_S:g} s", "units: steps; recovery: back -> the session's next step"
        )
        row.add(
            {"generated": 2, "stored": turns[0], "lost": 2 - turns[0], "duplicated": 0},
            scored=True,
            recovery_s=seen["step_s"],
        )
        assert ended == [closed, closed]  # each episode ended by its client, as it would without the outage
        assert turns == (2,)  # the two steps done (the refused one was not), each stored once


@restart
def test_a_killed_server_s_episode_is_failed_when_the_next_one_starts(transactional_db, bank, key):
    (puzzle,) = bank("Dice_Count")
    trainer_key = key()
    with contextlib.ExitStack() as stack:
        base, process = serve(stack)

        async def open_an_episode() -> None:
            async with GenericEnvClient(base_url=f"{base}/{trainer_key}") as env_client:
                await env_client.reset(puzzle=puzzle.uid)
                await env_client.step({"action": "screenshot"})
                children = descendants(process.pid)
                process.send_signal(signal.SIGKILL)
                await asyncio.to_thread(process.wait, 30)
                for pid in children:  # its page server and browser, orphaned by the kill
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)

        with contextlib.suppress(ConnectionError, RuntimeError, OSError):  # the socket dies with the server
            asyncio.run(open_an_episode())
        rollout = Rollout.objects.get()
        assert rollout.status == Rollout.Status.PENDING  # nobody said otherwise yet
        began = time.monotonic()
        serve(stack)  # the next start of env serve
        while Rollout.objects.get().status == Rollout.Status.PENDING and time.monotonic() - began < CEILING_S:
            time.sleep(0.2)
        took = time.monotonic() - began
    rollout = Rollout.objects.get()
    print(f"\nenv serve SIGKILLed mid-episode: its rollout failed {took:.1f} s after the next start (load {load()})")
    failed = int(rollout.status == Rollout.Status.FAILED)
    row = report.row("env serve SIGKILLed mid-episode", "units: open rollouts; recovery: next start -> rollout failed")
    row.add(
        {"generated": 1, "stored": failed, "lost": 1 - failed, "duplicated": 0}, scored=bool(failed), recovery_s=took
    )
    assert rollout.status == Rollout.Status.FAILED, f"still {rollout.status} {took:.0f} s after the restart"
    assert rollout.reason.startswith(f"its player stopped: env serve (pid {process.pid} on "), rollout.reason
    assert rollout.turns.count() == 1 and rollout.finished_at is not None


def test_only_the_rollouts_of_players_gone_are_failed(transactional_db, bank, key):
    """Several servers may run at once: the sweep fails only what a dead or silent one left."""
    (puzzle,) = bank("Dice_Count")
    token = EnvToken.objects.get(key_hash=key_hash(key()))
    here = player_start("env serve")  # this process: alive
    ended = player_start("env serve")
    silent_elsewhere = player_start("env serve")
    heard_elsewhere = player_start("env serve")
    long_ago = timezone.now() - timedelta(seconds=LEASE_S + 60)
    PlayerProcess.objects.filter(pk=ended.pk).update(pid=_ended_pid())
    PlayerProcess.objects.filter(pk=silent_elsewhere.pk).update(host="elsewhere", heartbeat_at=long_ago)
    PlayerProcess.objects.filter(pk=heard_elsewhere.pk).update(host="elsewhere")
    players = [here, ended, silent_elsewhere, heard_elsewhere, None]
    begun = [
        episode_begin(token=token, params=reset_params({"puzzle": puzzle.uid}), player_id=p and p.pk) for p in players
    ]
    assert rollouts_abandoned_fail() == 2
    statuses = [Rollout.objects.get(pk=b.rollout_id).status for b in begun]
    assert statuses == ["pending", "failed", "failed", "pending", "pending"]
    reason = Rollout.objects.get(pk=begun[2].rollout_id).reason
    assert reason.startswith(f"its player stopped: env serve (pid {os.getpid()} on elsewhere), last heard "), reason
    assert rollouts_abandoned_fail() == 0  # done once


def _ended_pid() -> int:
    """The pid of a process of this machine that has ended."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@restart
def test_a_redis_restart_under_a_session(transactional_db, bank, key):
    """Redis killed (all it held lost) and started again under an open session: the site's page
    server, which the episodes' pages talk to, keeps its rate limits and groups there."""
    (puzzle,) = bank("Geometry_Click")
    trainer_key = key()
    with private_redis() as redis, contextlib.ExitStack() as stack:
        base, _ = serve(stack, env=process_environment(database_url(), redis.url()))
        seen: dict = {}

        async def through_a_restart() -> None:
            async with GenericEnvClient(base_url=f"{base}/{trainer_key}") as env_client:
                await env_client.reset(puzzle=puzzle.uid)
                await env_client.step({"action": "click", "arguments": {"x": 5, "y": 5}})
                redis.kill()
                seen["down_s"], seen["down_errors"] = await until_it_works(
                    lambda: env_client.step({"action": "click", "arguments": {"x": 6, "y": 6}})
                )
                await asyncio.to_thread(redis.start)
                seen["step_s"], seen["step_errors"] = await until_it_works(
                    lambda: env_client.step({"action": "click", "arguments": {"x": 7, "y": 7}})
                )

            async def new_client() -> None:
                async with GenericEnvClient(base_url=f"{base}/{trainer_key}") as other:
                    await other.reset(puzzle=puzzle.uid)
                    await other.step({"action": "click", "arguments": {"x": 5, "y": 5}})

            seen["reset_s"], seen["reset_errors"] = await until_it_works(new_client)

        asyncio.run(through_a_restart())
        print(
            f"\nenv serve, Redis killed then started (load {load()}): a step with Redis down {seen['down_s']:.1f} s"
            f" ({seen['down_errors'][:1]}); Redis back -> same session's step {seen['step_s']:.1f} s"
            f" ({seen['step_errors'][:1]}), a new client's reset and step {seen['reset_s']:.1f} s"
            f" ({seen['reset_errors'][:1]})"
        )
        assert health(base) == (200, {"status": "healthy"})
    first = Rollout.objects.order_by("pk").first()
    stored = first.turns.count() if first is not None else 0
    row = report.row("env serve x Redis killed", "units: steps; recovery: Redis back -> the session's next step")
    row.add(
        {"generated": 3, "stored": stored, "lost": max(0, 3 - stored), "duplicated": max(0, stored - 3)},
        scored=True,
        recovery_s=seen["step_s"],
    )
    assert stored == 3  # every step stored once, through the restart
