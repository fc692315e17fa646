"""One function over many jobs: in forked workers when there are enough jobs, in order unless asked otherwise."""

import os

from puzzles.workers import SMALL, batched, in_workers


def pid_and_square(n: int) -> tuple[int, int]:
    return os.getpid(), n * n


def test_many_jobs_run_in_forked_workers_and_come_back_in_job_order():
    results = list(in_workers(pid_and_square, list(range(200)), workers=2, chunksize=1))
    assert [square for _, square in results] == [n * n for n in range(200)]
    assert os.getpid() not in {pid for pid, _ in results}


def test_unordered_results_are_the_same_set():
    results = in_workers(pid_and_square, list(range(200)), workers=2, ordered=False)
    assert sorted(square for _, square in results) == [n * n for n in range(200)]


def test_a_few_jobs_or_one_worker_run_in_this_process():
    few = list(in_workers(pid_and_square, list(range(SMALL - 1)), workers=4))
    alone = list(in_workers(pid_and_square, list(range(100)), workers=1))
    assert {pid for pid, _ in few + alone} == {os.getpid()}
    assert [square for _, square in alone] == [n * n for n in range(100)]


def test_batches_keep_order_and_the_last_is_shorter():
    assert list(batched(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched([], 3)) == []
