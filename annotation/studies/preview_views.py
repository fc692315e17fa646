"""Staff previews: a study's whole participant flow (studies/preview.py), and a puzzle of a type
tried from the bank's page. Nothing here enrols anyone or takes a place."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.live.attempts import (
    attempt_for,
    attempt_serve,
    attempt_start,
    participant_for_user,
    signed_in_user,
)
from annotation.live.page import attempt_page_data, device_check_data
from annotation.models import Attempt, Study
from annotation.studies.preview import preview_bar, preview_holds, preview_next, preview_start
from annotation.studies.setup import consent_paragraphs
from annotation.studies.staff_views import SPLIT_PREFERENCE
from arena_site.staff import staff_required
from puzzles.models import Puzzle


@staff_required
@require_http_methods(["GET", "POST"])
def study_preview(request: HttpRequest, study_id: int) -> HttpResponse:
    """The invite page as people see it, whatever the study's status; agreeing begins the preview."""
    study = get_object_or_404(Study, pk=study_id)
    if request.method == "POST":
        preview_start(request.session, study)
        return redirect("annotation:study-preview-next", study_id=study.pk)
    context = {
        "study": study,
        "preview": True,
        "practice_count": study.practice.count(),
        "total": study.puzzles_total(),
        "paragraphs": consent_paragraphs(study),
        "device_check": device_check_data(),
    }
    return render(request, "annotation/study_join.html", context)


@staff_required
def study_preview_next(request: HttpRequest, study_id: int) -> HttpResponse:
    """The preview's next puzzle, or its end page with the completion code."""
    study = get_object_or_404(Study, pk=study_id)
    step = preview_next(request.session, study, user=signed_in_user(request))
    if step.kind == "consent":
        return redirect("annotation:study-preview", study_id=study.pk)
    if step.attempt is not None:  # an attempt step
        return redirect("annotation:study-preview-play", study_id=study.pk, uid=step.attempt.uid)
    context = {"study": study, "step": step, "preview": True, "code": study.completion_code}
    return render(request, "annotation/study_end.html", context)


@staff_required
def study_preview_play(request: HttpRequest, study_id: int, uid: str) -> HttpResponse:
    """A preview's puzzle on the participants' page, with the study's bar."""
    study = get_object_or_404(Study, pk=study_id)
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None or not preview_holds(request.session, study, uid):
        raise Http404("no such puzzle in your preview of this study")
    attempt_serve(attempt=attempt)
    data = attempt_page_data(attempt=attempt, csrf_token=get_token(request), site_url=request.build_absolute_uri("/"))
    data["study"] = preview_bar(request.session, study, attempt)
    return render(request, "annotation/play.html", {"page_data": data})


@staff_required
@require_POST
def try_type(request: HttpRequest, type_name: str) -> HttpResponse:
    """The bank's "Try one": a replay-verified puzzle of the type (training split first, so the
    test pool stays whole), on the live page as a practice attempt of the staff member's own."""
    puzzles = Puzzle.objects.filter(type=type_name, status=Puzzle.Status.VERIFIED)
    for split in SPLIT_PREFERENCE:
        puzzle = puzzles.filter(split=split).order_by("index", "pk").first()
        if puzzle is not None:
            participant = participant_for_user(user=signed_in_user(request))
            attempt = attempt_start(participant=participant, puzzle=puzzle, purpose=Attempt.Purpose.PRACTICE)
            return redirect("annotation:play", uid=attempt.uid)
    raise Http404(f"no replay-verified {type_name} puzzle to try")
