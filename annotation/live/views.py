"""The live page and its HTTP fallback. Thin: look the attempt up, call one service, answer."""

import time
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from annotation.live.attempts import attempt_for, attempt_serve, attempt_start, participant_for_user, signed_in_user
from annotation.live.frames import error_frame
from annotation.live.intake import attempt_resolve_gap, posted_receive
from annotation.live.page import attempt_page_data
from annotation.models import Attempt
from puzzles.models import Puzzle

View = Callable[..., HttpResponseBase]


@login_required
def play(request: HttpRequest, uid: str) -> HttpResponse:
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        raise Http404("no such attempt of yours")
    _gap_resolved(attempt)
    attempt_serve(attempt=attempt)
    data = attempt_page_data(attempt=attempt, csrf_token=get_token(request), site_url=request.build_absolute_uri("/"))
    return render(request, "annotation/play.html", {"page_data": data})


@login_required
def play_data(request: HttpRequest, uid: str) -> JsonResponse:
    """The page data of another attempt, for moving on without reloading the page."""
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        raise Http404("no such attempt of yours")
    _gap_resolved(attempt)
    attempt_serve(attempt=attempt)
    site_url = request.build_absolute_uri("/")
    return JsonResponse(attempt_page_data(attempt=attempt, csrf_token=get_token(request), site_url=site_url))


def _gap_resolved(attempt: Attempt) -> None:
    """A submit that waited out its gap (sent by the HTTP fallback, or its socket died) is scored
    when the attempt's page loads, so the page shows it submitted (idempotent, under the row lock;
    the sweep and a new socket do the same). No query when nothing is missing."""
    if attempt.max_seq > attempt.acked_seq and attempt_resolve_gap(attempt_id=attempt.pk, now_ms=time.time() * 1000):
        attempt.refresh_from_db()


def _beacon_token(view: View) -> View:
    """navigator.sendBeacon cannot set headers, so the page puts its CSRF token in the query.
    The site-wide CSRF check is lifted (it would run first) and done here, with that token."""

    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if "HTTP_X_CSRFTOKEN" not in request.META and "csrf" in request.GET:
            request.META["HTTP_X_CSRFTOKEN"] = request.GET["csrf"]
        return view(request, *args, **kwargs)

    return wrapped


@csrf_exempt
@_beacon_token
@csrf_protect
@require_POST
def events(request: HttpRequest, uid: str) -> JsonResponse:
    attempt = attempt_for(uid=uid, user=request.user)
    if attempt is None:
        frame = error_frame("not_allowed", "no such attempt of yours; sign in first")
        return JsonResponse([frame], safe=False, status=403)
    # One batch frame (the beacon, an older page), or several in one request (a page on the
    # fallback draining its backlog), in order; each answered as it would be alone.
    replies, held = posted_receive(attempt=attempt, raw=request.body, received_ms=time.time() * 1000)
    return JsonResponse(replies, safe=False, status=200 if held else 400)


@login_required
@require_POST
def try_puzzle(request: HttpRequest, puzzle_uid: str) -> HttpResponseRedirect:
    """Open a practice attempt on one puzzle (staff may try drafts; others verified puzzles)."""
    statuses = None if request.user.is_staff else [Puzzle.Status.VERIFIED]
    puzzles = Puzzle.objects.all() if statuses is None else Puzzle.objects.filter(status__in=statuses)
    puzzle = get_object_or_404(puzzles, uid=puzzle_uid)
    participant = participant_for_user(user=signed_in_user(request))
    attempt = attempt_start(participant=participant, puzzle=puzzle, purpose=Attempt.Purpose.PRACTICE)
    return redirect("annotation:play", uid=attempt.uid)
