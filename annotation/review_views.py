"""Staff pages: the review queue, one puzzle's review, the consensus audit, report and event
downloads. Annotators reach none of these (staff_member_required on each)."""
import json

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.exports import event_lines
from annotation.labels import TruthRejected, consensus_suspects, flag_dismiss, puzzle_correct_truth, puzzle_retire
from annotation.models import Flag, Study
from annotation import report_render
from annotation.reports import study_report
from annotation.selectors import puzzle_review, review_queue
from puzzles.models import Puzzle

REPORT_TYPES = {"html": "text/html", "csv": "text/csv", "json": "application/json", "md": "text/markdown"}


@staff_member_required
def queue(request):
    return render(request, "annotation/review_queue.html",
                  {"rows": review_queue(), "suspects": consensus_suspects()[:50]})


@staff_member_required
def puzzle(request, uid: str):
    found = get_object_or_404(Puzzle, uid=uid)
    return render(request, "annotation/review_puzzle.html", puzzle_review(puzzle=found))


@staff_member_required
@require_POST
def resolve(request, uid: str):
    """Dismiss a flag, retire the puzzle, or correct its truth (every attempt re-scored)."""
    found = get_object_or_404(Puzzle, uid=uid)
    action = request.POST.get("action")
    if action == "dismiss":
        flag_dismiss(flag=get_object_or_404(Flag, pk=request.POST.get("flag"), puzzle=found), by=request.user)
        messages.success(request, "Flag dismissed.")
    elif action == "retire":
        puzzle_retire(puzzle=found, by=request.user, note=request.POST.get("note", ""))
        messages.success(request, "Puzzle retired: it is left out of every report and queue.")
    elif action == "correct":
        try:
            truth = json.loads(request.POST.get("truth", ""))
            changed = puzzle_correct_truth(puzzle=found, truth=truth, by=request.user, note=request.POST.get("note", ""))
            messages.success(request, f"Truth corrected; {changed} attempt(s) changed correctness.")
        except (ValueError, TruthRejected) as error:
            messages.error(request, f"Truth not changed: {error}")
    return redirect("annotation:review-puzzle", uid=uid)


@staff_member_required
def report_download(request, study_id: int, fmt: str):
    if fmt not in REPORT_TYPES:
        raise Http404(f"no {fmt} report; one of {', '.join(REPORT_TYPES)}")
    study = get_object_or_404(Study, pk=study_id)
    text = report_render.render(study_report(study=study), fmt)
    response = HttpResponse(text, content_type=f"{REPORT_TYPES[fmt]}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-report.{fmt}"'
    return response


@staff_member_required
def events_download(request, study_id: int):
    """Every event of a study's attempts as JSON lines, streamed (constant memory at any size)."""
    study = get_object_or_404(Study, pk=study_id)
    response = StreamingHttpResponse(event_lines(study=study), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-events.jsonl"'
    return response
