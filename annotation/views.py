"""The live page and its HTTP fallback. Thin: look the attempt up, call one service, answer."""
import json
import time

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from annotation.intake import attempt_for, batch_receive
from annotation.labels import flag_raise
from annotation.models import Enrollment, Study
from annotation.selectors import attempt_page_data
from annotation.services import attempt_start, participant_for_user
from annotation.studies import enrollment_consent, enrollment_join, enrollment_next, guest_user, is_guest
from puzzles.models import Puzzle


@login_required
def play(request, uid: str):
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        raise Http404("no such attempt of yours")
    data = attempt_page_data(attempt=attempt, csrf_token=get_token(request))
    return render(request, "annotation/play.html", {"page_data": data})


@login_required
def play_data(request, uid: str):
    """The page data of another attempt, for moving on without reloading the page."""
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        raise Http404("no such attempt of yours")
    return JsonResponse(attempt_page_data(attempt=attempt, csrf_token=get_token(request)))


def _beacon_token(view):
    """navigator.sendBeacon cannot set headers, so the page puts its CSRF token in the query.
    The site-wide CSRF check is lifted (it would run first) and done here, with that token."""
    def wrapped(request, *args, **kwargs):
        if "HTTP_X_CSRFTOKEN" not in request.META and "csrf" in request.GET:
            request.META["HTTP_X_CSRFTOKEN"] = request.GET["csrf"]
        return view(request, *args, **kwargs)
    return wrapped


@csrf_exempt
@_beacon_token
@csrf_protect
@require_POST
def events(request, uid: str):
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        frame = {"type": "error", "code": "not_allowed", "message": "no such attempt of yours; sign in first"}
        return JsonResponse([frame], safe=False, status=403)
    replies, _ = batch_receive(attempt=attempt, raw=request.body, received_ms=time.time() * 1000)
    status = 400 if replies[0]["type"] == "error" else 200
    return JsonResponse(replies, safe=False, status=status)


@login_required
@require_POST
def flag(request, uid: str):
    """An annotator flags the puzzle they are on (JSON: reason, note); the attempt is kept."""
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        return JsonResponse({"error": "no such attempt of yours"}, status=404)
    try:
        body = json.loads(request.body or b"{}")
        raised = flag_raise(attempt=attempt, reason=str(body.get("reason")), note=str(body.get("note", "")))
    except (ValueError, AttributeError) as error:
        return JsonResponse({"error": str(error)}, status=400)
    return JsonResponse({"flag": raised.pk, "reason": raised.reason}, status=201)


@login_required
@require_POST
def try_puzzle(request, puzzle_uid: str):
    """Open a practice attempt on one puzzle (staff may try drafts; others verified puzzles)."""
    statuses = None if request.user.is_staff else [Puzzle.Status.VERIFIED]
    puzzles = Puzzle.objects.all() if statuses is None else Puzzle.objects.filter(status__in=statuses)
    puzzle = get_object_or_404(puzzles, uid=puzzle_uid)
    attempt = attempt_start(participant=participant_for_user(user=request.user), puzzle=puzzle)
    return redirect("annotation:play", uid=attempt.uid)


# --- studies: the annotator's way through -------------------------------------------------------
CROWD_IDS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId")


def study_join(request, token: str):
    """The invite link: the study's consent and instructions; starting joins (no account needed)."""
    study = get_object_or_404(Study, token=token)
    crowd = {k: request.GET[k][:100] for k in CROWD_IDS if k in request.GET}
    if crowd:
        request.session[f"crowd-{token}"] = crowd  # kept until the person starts
        returning = _returning_worker(study, crowd)
        if returning is not None and not request.user.is_authenticated:
            # The same crowd id on another device or browser: continue as that annotator.
            login(request, returning, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("annotation:study-next", token=token)
    if request.method == "POST" and study.is_open:
        if not request.user.is_authenticated:
            login(request, guest_user(study=study), backend="django.contrib.auth.backends.ModelBackend")
        enrollment = enrollment_join(study=study, user=request.user,
                                     external_ids=request.session.get(f"crowd-{token}", {}))
        enrollment_consent(enrollment=enrollment)
        return redirect("annotation:study-next", token=token)
    return render(request, "annotation/study_join.html", {"study": study, "types": study.types or None})


def study_next(request, token: str):
    """Wherever the annotator stands: the same unfinished puzzle, the next one, or the end."""
    study = get_object_or_404(Study, token=token)
    enrollment = _enrollment(request, study)
    if enrollment is None:
        return redirect("annotation:study-join", token=token)
    step = enrollment_next(enrollment=enrollment)
    if step.kind == "consent":
        return redirect("annotation:study-join", token=token)
    if step.kind == "attempt":
        return redirect("annotation:play", uid=step.attempt.uid)
    return render(request, "annotation/study_end.html", {"study": study, "step": step, "enrollment": enrollment})


def study_pause(request, token: str):
    study = get_object_or_404(Study, token=token)
    return render(request, "annotation/study_pause.html", {"study": study, "enrollment": _enrollment(request, study)})


def _returning_worker(study: Study, crowd: dict):
    """The guest account this crowd id joined with, to resume on another device. Only login-less
    guests of this very study resume this way, never an account with a password or staff."""
    key = next((k for k in ("PROLIFIC_PID", "workerId") if crowd.get(k)), None)
    if key is None:
        return None
    found = list(Enrollment.objects.filter(study=study, **{f"external_ids__{key}": crowd[key]})
                 .select_related("participant__user")[:2])
    if len(found) != 1:
        return None
    user = found[0].participant.user
    if user.is_staff or user.is_superuser or user.has_usable_password() or not is_guest(user, study=study):
        return None
    return user


def _enrollment(request, study: Study) -> Enrollment | None:
    if not request.user.is_authenticated:
        return None
    return Enrollment.objects.filter(study=study, participant__user=request.user).select_related("study").first()
