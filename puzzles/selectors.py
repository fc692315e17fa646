"""Read paths over the puzzle bank."""

from collections import defaultdict
from itertools import zip_longest

from django.db.models import Count, Q, QuerySet

from puzzles.models import Puzzle
from puzzles.registry import registry, type_names


def bank_overview() -> list[dict]:
    """One row per type: its description and stored puzzle counts per split (public facts only)."""
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for row in Puzzle.objects.values("type", "split").annotate(n=Count("id")):
        counts[row["type"]][row["split"]] = row["n"]
    replayed = {
        row["type"]: row
        for row in Puzzle.objects.values("type").annotate(
            verified=Count("id", filter=Q(status=Puzzle.Status.VERIFIED)),
            failed=Count("id", filter=Q(status=Puzzle.Status.FAILED)),
            public_truth=Count("id", filter=Q(truth_public=True)),
        )
    }
    return [
        {
            **t.describe(),
            "counts": counts.get(t.name, {}),
            "verified": replayed.get(t.name, {}).get("verified", 0),
            "failed": replayed.get(t.name, {}).get("failed", 0),
            "public_truth": replayed.get(t.name, {}).get("public_truth", 0),
        }
        for t in registry().all()
    ]


def dataset_counts(puzzles: QuerySet[Puzzle]) -> dict[str, int]:
    """Puzzles per dataset (the deployment's bank, other generated banks, each import), by name."""
    rows = puzzles.order_by().values("dataset").annotate(n=Count("id")).order_by("dataset")
    return {row["dataset"]: row["n"] for row in rows}


def datasets_line(counts: dict[str, int]) -> str:
    """The datasets a choice spans, for messages: "generated:key-ab12 (200), import:captcha-arena (200)"."""
    return ", ".join(f"{name} ({n})" for name, n in counts.items()) or "none"


def puzzle_selection(
    *,
    split: str,
    types: list[str] | None = None,
    per_type: int | None = None,
    dataset: str | None = None,
    unverified_only: bool = False,
) -> list[int]:
    """Ids of the first per_type stored puzzles of each type in a split (all when per_type is None),
    interleaved across types, so slow types (a hold takes seconds) spread over parallel workers."""
    names = type_names(types)
    per_name: list[list[int]] = []
    for name in names:
        query = Puzzle.objects.filter(type=name, split=split).exclude(status=Puzzle.Status.RETIRED)
        if dataset:
            query = query.filter(dataset=dataset)
        if unverified_only:
            query = query.exclude(status=Puzzle.Status.VERIFIED)
        ids = query.order_by("index", "source_id").values_list("id", flat=True)
        per_name.append(list(ids[:per_type] if per_type is not None else ids))
    return [pid for row in zip_longest(*per_name) for pid in row if pid is not None]
