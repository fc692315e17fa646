"""Read paths over the puzzle bank."""
from collections import defaultdict

from django.db.models import Count

from puzzles.models import Puzzle
from puzzles.registry import registry


def bank_overview() -> list[dict]:
    """One row per type: its description and stored puzzle counts per split (public facts only)."""
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for row in Puzzle.objects.values("type", "split").annotate(n=Count("id")):
        counts[row["type"]][row["split"]] = row["n"]
    return [{**t.describe(), "counts": counts.get(t.name, {})} for t in registry().all()]
