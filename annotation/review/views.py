"""The review of puzzle labels: the annotator's flag from the page, and the staff pages (the
queue, one puzzle's review, dismiss / retire / correct the truth). Staff pages carry
staff_required (others go to the site's sign-in page); the flag needs the attempt's own participant."""

import json
from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from annotation.live.attempts import attempt_for
from annotation.live.frames import load_json
from annotation.models import Flag
from annotation.review.labels import (
    TruthRejected,
    consensus_suspects,
    flag_dismiss,
    flag_raise,
    puzzle_correct_truth,
    puzzle_retire,
)
from annotation.review.queue import puzzle_review, review_queue
from annotation.review.truths import truth_from_form
from arena_site.staff import staff_required
from puzzles.models import Puzzle


@login_required
@require_POST
def flag(request: HttpRequest, uid: str) -> JsonResponse:
    """An annotator flags the puzzle they are on (JSON: reason, note); the attempt is kept. A
    person's open flag on the puzzle is answered again (200) rather than made twice (201)."""
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        return JsonResponse({"error": "no such attempt of yours"}, status=404)
    asked = timezone.now()
    try:
        body = load_json(request.body or b"{}")
        if not isinstance(body, dict):
            raise ValueError('expected a JSON object: {"reason": ..., "note": ...}')
        raised = flag_raise(attempt=attempt, reason=str(body.get("reason")), note=str(body.get("note", "")))
    except ValueError as error:
        return JsonResponse({"error": str(error)}, status=400)
    return JsonResponse({"flag": raised.pk, "reason": raised.reason}, status=201 if raised.created_at >= asked else 200)


@staff_required
def queue(request: HttpRequest) -> HttpResponse:
    return render(
        request, "annotation/review_queue.html", {"rows": review_queue(), "suspects": consensus_suspects()[:50]}
    )


@staff_required
def puzzle(request: HttpRequest, uid: str) -> HttpResponse:
    found = get_object_or_404(Puzzle, uid=uid)
    return render(request, "annotation/review_puzzle.html", puzzle_review(puzzle=found))


@staff_required
@require_POST
def resolve(request: HttpRequest, uid: str) -> HttpResponseRedirect:
    """Dismiss a flag, retire the puzzle (once confirmed), or correct its truth from the type's
    form or as JSON (every attempt re-scored)."""
    found = get_object_or_404(Puzzle, uid=uid)
    staff = cast(User, request.user)  # staff_required let only a signed-in staff member this far
    action = request.POST.get("action")
    note = request.POST.get("note", "")
    if action == "dismiss":
        flag_dismiss(flag=get_object_or_404(Flag, pk=request.POST.get("flag"), puzzle=found), by=staff)
        messages.success(request, "Flag dismissed.")
    elif action == "retire":
        if request.POST.get("confirm") != "yes":
            messages.error(request, "Not retired: tick the box to confirm first.")
        else:
            puzzle_retire(puzzle=found, by=staff, note=note)
            messages.success(request, "Puzzle retired: it is left out of every report and queue.")
    elif action in ("correct", "correct-json"):
        try:
            if action == "correct":
                truth = truth_from_form(found, request.POST)
            else:
                truth = json.loads(request.POST.get("truth", ""))
            changed = puzzle_correct_truth(puzzle=found, truth=truth, by=staff, note=note)
            messages.success(request, f"Truth corrected; {changed} attempt(s) changed correctness.")
        except (ValueError, TruthRejected) as error:
            messages.error(request, f"Truth not changed: {error}")
    return redirect("annotation:review-puzzle", uid=uid)
