"""The staff's dataset pages: puzzles listed by label with filters (and the filtered list as a
file), and pointer motion per type, people beside agent runs. Read-only; staff only (the labels
name review outcomes and annotators' consensus answers)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.datasets.labels import DIFFICULTIES, REVIEWS, RULES, puzzle_labels, rows_write
from annotation.datasets.motion import motion_table
from annotation.live.motion import RULE
from arena_site.staff import staff_required
from puzzles.models import Puzzle

SHOWN = 1000  # rows on the page; the download has them all
YES_NO = {"yes": True, "no": False}
YES_NO_FILTERS = ("valid", "suspect", "mining")


def _choices(request: HttpRequest) -> dict[str, Any]:
    """The datasets and splits stored, and the pair asked for (else the first stored)."""
    pairs = list(Puzzle.objects.order_by("dataset", "split").values_list("dataset", "split").distinct())
    dataset, split = request.GET.get("dataset"), request.GET.get("split")
    if (dataset, split) not in pairs:
        dataset, split = next((p for p in pairs if p[0] == dataset), pairs[0] if pairs else (None, None))
    return {
        "datasets": sorted({d for d, _ in pairs}),
        "splits": sorted({s for _, s in pairs}),
        "dataset": dataset,
        "split": split,
    }


def _keep(row: dict, filters: dict) -> bool:
    for name in YES_NO_FILTERS:
        if filters[name] in YES_NO and row[name] != YES_NO[filters[name]]:
            return False
    if filters["difficulty"] and row["difficulty"] != filters["difficulty"]:
        return False
    if filters["review"] and row["review"] != ("" if filters["review"] == "none" else filters["review"]):
        return False
    return not (filters["type"] and row["type"] != filters["type"])


@staff_required
def labels(request: HttpRequest) -> HttpResponse:
    chosen = _choices(request)
    dataset, split = chosen["dataset"], chosen["split"]
    filters = {
        name: request.GET.get(name, "") for name in ("type", "valid", "suspect", "mining", "difficulty", "review")
    }
    found = puzzle_labels(dataset=dataset, split=split) if dataset and split else None
    rows = [r for r in found.rows if _keep(r, filters)] if found else []
    if request.GET.get("download") in ("csv", "jsonl") and found:
        return _download(rows, found.meta, request.GET["download"])
    context = {
        **chosen,
        "filters": filters,
        "yes_no": [{"name": name, "value": filters[name]} for name in YES_NO_FILTERS],
        "types": sorted({r["type"] for r in found.rows}) if found else [],
        "difficulties": DIFFICULTIES,
        "reviews": [r or "none" for r in REVIEWS],
        "rows": rows[:SHOWN],
        "matched": len(rows),
        "total": len(found.rows) if found else 0,
        "counts": found.meta["counts"] if found else None,
        "runs": found.meta["runs"] if found else [],
        "solvable_rule": found.meta["solvable_rule"]["rule"] if found else "",
        "rules": RULES,
        "query": request.GET.urlencode(),
    }
    return render(request, "datasets/labels.html", context)


def _download(rows: list[dict], meta: dict, fmt: str) -> HttpResponse:
    name = f"labels-{meta['dataset']}-{meta['split']}.{fmt}".replace(":", "_")
    media = "application/x-ndjson" if fmt == "jsonl" else "text/csv"
    response = HttpResponse(content_type=f"{media}; charset=utf-8")
    rows_write(response, rows, meta, fmt)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@staff_required
def motion(request: HttpRequest) -> HttpResponse:
    chosen = _choices(request)
    dataset, split = chosen["dataset"], chosen["split"]
    table = motion_table(dataset=dataset, split=split) if dataset and split else None
    rows = table["rows"] + table["overall"] if table else []  # each type's, then over all types
    context = {**chosen, "rows": rows, "rule": RULE}
    return render(request, "datasets/motion.html", context)
