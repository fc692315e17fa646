"""Read paths over the puzzle bank."""
from collections import defaultdict

from django.db.models import Count

from puzzles.models import Puzzle
from puzzles.registry import get_type, registry


def bank_overview() -> list[dict]:
    """One row per type: its description and stored puzzle counts per split (public facts only)."""
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for row in Puzzle.objects.values("type", "split").annotate(n=Count("id")):
        counts[row["type"]][row["split"]] = row["n"]
    return [{**t.describe(), "counts": counts.get(t.name, {})} for t in registry().all()]


def puzzle_selection(*, split: str, types: list[str] | None = None, per_type: int | None = None,
                     dataset: str | None = None) -> list[int]:
    """Ids of the first per_type stored puzzles of each type in a split (all when per_type is None)."""
    names = [get_type(t).name for t in types] if types else registry().names()
    chosen: list[int] = []
    for name in names:
        query = Puzzle.objects.filter(type=name, split=split).exclude(status=Puzzle.Status.RETIRED)
        if dataset:
            query = query.filter(dataset=dataset)
        ids = query.order_by("index", "source_id").values_list("id", flat=True)
        chosen.extend(ids[:per_type] if per_type is not None else ids)
    return chosen
