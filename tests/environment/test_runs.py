"""An environment run's row under concurrent episodes: every puzzle and the most rollouts of one
kept, whatever order the sessions' resets take the run's lock in."""

import threading
import time

from django.db import connection, connections

from annotation.environment.episodes import episode_begin
from annotation.environment.protocol import reset_params
from annotation.models import AgentRun, EnvToken

LOCK_WAIT_CEILING_S = 60


def waiting_on_locks() -> int:
    """Other backends of this database waiting for a lock now."""
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def test_concurrent_episodes_keep_every_puzzle_and_k(bank, key):
    puzzles = bank("Geometry_Click", "Dice_Count", "Bingo")
    key()
    token = EnvToken.objects.get()
    episode_begin(token=token, params=reset_params({"puzzle": puzzles[0].uid}))  # the run exists
    run = AgentRun.objects.get()
    begun, failures = [], []

    def begin(uid: str) -> None:
        try:
            begun.append(episode_begin(token=EnvToken.objects.get(), params=reset_params({"puzzle": uid})))
        except Exception as error:  # said by the assertion below
            failures.append(error)
        finally:
            connection.close()

    # Two sessions read the run, then queue on its lock, held here until both wait.
    threads = [threading.Thread(target=begin, args=(p.uid,)) for p in (puzzles[1], puzzles[2], puzzles[0])]
    holder = connections.create_connection("default")
    try:
        with holder.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute("SELECT id FROM annotation_agentrun WHERE id = %s FOR UPDATE", [run.pk])
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + LOCK_WAIT_CEILING_S
            while waiting_on_locks() < len(threads) and time.monotonic() < deadline:
                time.sleep(0.05)
            cursor.execute("COMMIT")
    finally:
        holder.close()
    for thread in threads:
        thread.join()
    assert not failures and len(begun) == 3
    run.refresh_from_db()
    assert sorted(run.puzzles) == sorted(p.pk for p in puzzles)
    assert run.rollouts_per_puzzle == 2  # puzzles[0]: the first episode and the last
    assert sorted(run.rollouts.values_list("index", flat=True)) == [0, 0, 0, 1]
