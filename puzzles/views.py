"""The bank's own pages: its overview (public counts only) and failed replays' screenshots (staff)."""

from django.contrib.admin.views.decorators import staff_member_required
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, render

from puzzles.bank import SPLIT_SIZES
from puzzles.models import ReplayCheck
from puzzles.selectors import bank_overview


def home(request):
    rows = bank_overview()
    for row in rows:
        row["split_counts"] = [row["counts"].get(split, 0) for split in SPLIT_SIZES]
    public_truth = sum(row["public_truth"] for row in rows)
    return render(
        request, "puzzles/home.html", {"rows": rows, "splits": list(SPLIT_SIZES), "public_truth": public_truth}
    )


@staff_member_required
def replay_screenshot(request, check_id: int):
    """A failed replay's screenshot (it shows a solved page): staff only, never a public file."""
    check = get_object_or_404(ReplayCheck, pk=check_id)
    if not check.screenshot:
        raise Http404("this replay has no screenshot")
    return FileResponse(check.screenshot.open("rb"), content_type="image/png")
