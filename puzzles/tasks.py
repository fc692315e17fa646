"""Celery tasks over the bank: thin wrappers that report progress and call one service."""

from celery import shared_task

from puzzles.bank import SPLIT_SIZES
from puzzles.registry import type_names
from puzzles.services import bank_generate


@shared_task(bind=True)
def bank_generate_task(
    self, *, split: str, per_type: int | None = None, types: list[str] | None = None, bank_seed: int | None = None
) -> dict:
    total = (per_type if per_type is not None else SPLIT_SIZES[split]) * len(type_names(types))
    done = 0

    def report(count: int) -> None:
        nonlocal done
        done += count
        self.update_state(state="PROGRESS", meta={"done": done, "total": total})

    result = bank_generate(split=split, per_type=per_type, types=types, bank_seed=bank_seed, on_progress=report)
    return {"created": result.created, "skipped": result.skipped, "total": total}
