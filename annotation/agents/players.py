"""Which process plays a rollout, and the rollouts left open by one that died.

A process that plays rollouts (`env serve`, `agent run`) is a PlayerProcess: it names itself on
each rollout it starts and says it is alive every HEARTBEAT_S. A rollout still pending whose
player is gone is failed with the reason, so reports and the training section do not count it as
open for ever. Gone means either:

- silent past LEASE_S, while the database itself was up all that time (after a database restart
  nobody could say anything: the lease counts from the restart, so live players are not failed
  for the outage); or
- on this machine, in this pid namespace, and its pid no longer runs: a restarted server fails
  what its previous life left at once, without waiting out the lease.

Several servers may run at once, so none fails another's rollouts while that one is heard from.
Should a live player be failed all the same (a network cut longer than the lease), its own end of
the episode writes the rollout's real outcome over the mark (rollout_finish).

A job's chunks hold no player: the job's own lease gives a silent worker's chunk to another worker,
which plays its pending rollouts again (annotation/tasks.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from django.db import close_old_connections, connection
from django.utils import timezone

from annotation.models import AgentRun, PlayerProcess, Rollout

log = logging.getLogger(__name__)
HEARTBEAT_S = 5.0
LEASE_S = 30.0  # six heartbeats missed
_started_here: set[int] = set()  # the PlayerProcess ids of this process


def _pid_namespace() -> str:
    with contextlib.suppress(OSError):
        return os.readlink("/proc/self/ns/pid")
    return ""


def player_start(kind: str) -> PlayerProcess:
    """This process, as the player of the rollouts it starts from now on."""
    player = PlayerProcess.objects.create(
        kind=kind,
        host=socket.gethostname(),
        pid=os.getpid(),
        pid_namespace=_pid_namespace(),
        heartbeat_at=timezone.now(),
    )
    _started_here.add(player.pk)
    return player


def player_beat(player_id: int) -> None:
    PlayerProcess.objects.filter(pk=player_id).update(heartbeat_at=timezone.now())


def rollouts_abandoned_fail(*, run: AgentRun | None = None) -> int:
    """Fail the pending rollouts (of `run`, or of every run) whose player is gone; returns how many."""
    now = timezone.now()
    open_rollouts = Rollout.objects.filter(status=Rollout.Status.PENDING, player__isnull=False)
    if run is not None:
        open_rollouts = open_rollouts.filter(run=run)
    players = PlayerProcess.objects.filter(pk__in=open_rollouts.values("player"))
    failed = 0
    for player in players:
        if _gone(player, now):
            reason = f"its player stopped: {player}, last heard {player.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC"
            failed += open_rollouts.filter(player=player).update(
                status=Rollout.Status.FAILED, reason=reason[:300], finished_at=now
            )
    if failed:
        log.warning("failed %d rollouts left open by stopped players", failed)
    return failed


def _gone(player: PlayerProcess, now: datetime) -> bool:
    if _dead_here(player):
        return True
    silent_since = now - timedelta(seconds=LEASE_S)
    return player.heartbeat_at < silent_since and _database_up_since() < silent_since


def _dead_here(player: PlayerProcess) -> bool:
    """On this machine and pid namespace, its process no longer runs (or this one took its pid)."""
    if player.host != socket.gethostname() or not player.pid_namespace or player.pid_namespace != _pid_namespace():
        return False
    if player.pid == os.getpid():
        return player.pk not in _started_here  # not this process's: an earlier one with the same pid
    try:
        os.kill(player.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # another user's process runs under that pid
    return False


def _database_up_since() -> datetime:
    """When the database server last started: nobody could say they were alive before then."""
    if connection.vendor != "postgresql":
        return datetime.min.replace(tzinfo=UTC)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_postmaster_start_time()")
        return cursor.fetchone()[0]


@contextlib.contextmanager
def holding(kind: str) -> Iterator[PlayerProcess]:
    """This process as a player for the block, its heartbeat sent from a thread of its own."""
    player = player_start(kind)
    stop = threading.Event()
    beating = threading.Thread(target=_beat_until, args=(player.pk, stop), name="player-heartbeat", daemon=True)
    beating.start()
    try:
        yield player
    finally:
        stop.set()
        beating.join()


def _beat_until(player_id: int, stop: threading.Event) -> None:
    """Each beat is a request of its own: its connection given back after, so a database restart
    costs the beats it lasts, not the thread's connection for good."""
    while not stop.wait(HEARTBEAT_S):
        try:
            player_beat(player_id)
        except Exception as error:  # the database is away: the next beat tries again
            log.warning("player heartbeat failed: %s", error)
        finally:
            close_old_connections()
    connection.close()
