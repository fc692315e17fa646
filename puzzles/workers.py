"""One function over many jobs, in forked worker processes: how the bank generates, imports,
exports and self-checks puzzles. The functions are pure as far as the database goes: they read
and write files and return what the caller stores."""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from PIL import Image

Job = TypeVar("Job")
Result = TypeVar("Result")
Item = TypeVar("Item")

SMALL = 20  # fewer jobs than this run in this process: starting workers would cost more
# Freed image memory Pillow keeps for the next image (its default keeps none): a worker handles
# image after image of like sizes, and memory handed back to the kernel is faulted in again page
# by page, which cost about 1 ms of CPU a puzzle on an import. At most 16 blocks of 16 MiB.
IMAGE_BLOCKS_KEPT = 16


def in_workers(
    function: Callable[[Job], Result],
    jobs: Sequence[Job],
    *,
    workers: int,
    ordered: bool = True,
    chunksize: int = 4,
) -> Iterator[Result]:
    """function(job) for every job, in job order (or as they finish, when not `ordered`): in this
    process for one worker or a few jobs, else in `workers` forked processes.

    fork: workers inherit the loaded registry and fonts. They never touch the database, and they
    end with os._exit, so the inherited connection is never used or closed by them."""
    if workers <= 1 or len(jobs) < SMALL:
        yield from map(function, jobs)
        return
    with _without_broker_cleanup():
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_keep_image_memory)
    with pool:
        mapped = pool.imap if ordered else pool.imap_unordered
        yield from mapped(function, jobs, chunksize=chunksize)


@contextmanager
def _without_broker_cleanup() -> Iterator[None]:
    """Forks made here skip kombu's after-fork cleanup. kombu closes a child's inherited broker
    connections (Celery's pools, in a process that sent or awaited tasks) over the socket it shares
    with the parent; a connection the parent left waiting on a read (a consumer's BRPOP) makes that
    close wait forever, and the pool never starts. These workers never use the broker, and end
    with os._exit, so the inherited connections are simply left alone."""
    registry = multiprocessing.util._afterfork_registry  # type: ignore[attr-defined]
    held = {key: registry[key] for key in list(registry) if _from_the_broker(key[2])}
    for key in held:
        registry.pop(key, None)
    try:
        yield
    finally:
        registry.update(held)


def _from_the_broker(cleanup: Callable[..., object]) -> bool:
    return getattr(cleanup, "__module__", "").partition(".")[0] in ("kombu", "celery")


def _keep_image_memory() -> None:
    """Each worker's start: Pillow keeps freed image memory (see IMAGE_BLOCKS_KEPT)."""
    Image.core.set_blocks_max(IMAGE_BLOCKS_KEPT)


def batched(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    """Lists of `size` items in order, the last one shorter (itertools.batched, Python 3.12)."""
    batch: list[Item] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
