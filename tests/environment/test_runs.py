"""An environment run: its row under concurrent episodes (every puzzle and the most rollouts of
one kept, whatever order the sessions' resets take the run's lock in), and whose it is (the token's
client and the checkpoint, never a name alone), within its name's length."""

import threading
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections

from annotation.agents.trajectories import screenshot_path
from annotation.environment.episodes import episode_begin
from annotation.environment.protocol import BadRequest, reset_params
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


def test_a_run_is_the_token_s_own_by_client_and_checkpoint_never_by_name_alone(bank, key):
    (puzzle,) = bank("Dice_Count")
    key("lab")
    token = EnvToken.objects.get()
    harness = AgentRun.objects.create(name="env lab: step-1")  # an `agent run` that took the name
    with pytest.raises(BadRequest) as refused:
        episode_begin(token=token, params=reset_params({"puzzle": puzzle.uid, "checkpoint": "step-1"}))
    assert str(refused.value) == "another run is named 'env lab: step-1': give this checkpoint another label"
    assert not harness.rollouts.exists()
    begun = episode_begin(token=token, params=reset_params({"puzzle": puzzle.uid, "checkpoint": "step-2"}))
    run = AgentRun.objects.get(name=begun.run)
    assert (run.name, run.source) == ("env lab: step-2", "environment")
    assert run.settings == {"client": "lab", "checkpoint": "step-2"}


def test_the_longest_client_and_checkpoint_name_a_run_and_longer_ones_are_refused(bank, key):
    (puzzle,) = bank("Dice_Count")
    key("c" * 100)
    token = EnvToken.objects.get()
    begun = episode_begin(token=token, params=reset_params({"puzzle": puzzle.uid, "checkpoint": "k" * 64}))
    assert AgentRun.objects.get(name=begun.run).model == "k" * 64
    with pytest.raises(BadRequest) as refused:
        reset_params({"checkpoint": "k" * 65})
    assert str(refused.value) == "reset checkpoint must be a text of 1 to 64 characters (it names the run)"


@pytest.mark.parametrize("name", ["lab: b", "x" * 101, ""])
def test_env_token_refuses_a_name_that_could_not_name_runs(bank, name):
    bank("Dice_Count")
    with pytest.raises(CommandError) as refused:
        call_command("env", "token", name, "--datasets", "generated:11")
    assert str(refused.value) == f"a token's name is 1 to 100 characters, with no ':' (not {name!r})"
    assert not EnvToken.objects.exists()


def test_an_episode_leaves_files_it_did_not_write_alone(bank, key, private_root):
    (puzzle,) = bank("Dice_Count")
    key()
    token = EnvToken.objects.get()
    first = episode_begin(token=token, params=reset_params({"puzzle": puzzle.uid}))
    # Another database's rollout of the next id, live in a folder shared (as tests no longer share it).
    theirs = screenshot_path(first.rollout_id + 1, 0)
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes(b"another database's screenshot")
    second = episode_begin(token=token, params=reset_params({"puzzle": puzzle.uid}))
    assert second.rollout_id == first.rollout_id + 1 and theirs.read_bytes() == b"another database's screenshot"
    assert theirs.is_relative_to(private_root)  # this test's own folder, not the machine's
