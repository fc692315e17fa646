from django.shortcuts import render

from puzzles.bank import SPLIT_SIZES
from puzzles.selectors import bank_overview


def home(request):
    rows = bank_overview()
    for row in rows:
        row["split_counts"] = [row["counts"].get(split, 0) for split in SPLIT_SIZES]
    return render(request, "puzzles/home.html", {"rows": rows, "splits": list(SPLIT_SIZES)})
