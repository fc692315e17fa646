"""The annotator's way through a study: invite link, consent (or declining), the next puzzle, pause,
resume, the end; a study that is not open says so on each of them.

Nobody is signed in on a GET: joining and resuming are buttons (POST), so a link preview or a
prefetcher cannot sign a browser in or take a place.
"""

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.live.attempts import attempts_pause, signed_in_user
from annotation.live.page import device_check_data
from annotation.models import Enrollment, Study
from annotation.studies.access import (
    RESUME_COOKIE_DAYS,
    AccessRefused,
    client_address,
    crowd_enrollment,
    crowd_ids,
    crowd_resumable_user,
    enrollment_of,
    guest_user,
    join_check,
    resumable_user,
    resume_cookie,
    resume_token,
)
from annotation.studies.preview import previewing
from annotation.studies.queue import (
    Step,
    enrollment_consent,
    enrollment_join,
    enrollment_next,
    enrollment_outcome,
    enrollment_seen,
    study_has_free_place,
    way_out_code,
)
from annotation.studies.setup import completion_url, consent_paragraphs

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


@require_http_methods(["GET", "POST"])
def study_join(request: HttpRequest, token: str) -> HttpResponse:
    """The invite link: the study's consent and instructions; the start button joins (no account
    needed), and a browser that joined before is offered to continue. A person already enrolled
    is known by their resume secret (this browser's cookie), else by the link's crowd id
    (access.py says what that alone may show and resume): never enrolled twice."""
    study = get_object_or_404(Study, token=token)
    try:
        # The consent form posts back to the link itself, query and all: the crowd ids travel in
        # the address, and an anonymous visit writes nothing (no session until the person starts).
        crowd = crowd_ids(request.GET)
    except AccessRefused as refused:
        return _refused(request, study, refused, status=400)
    returning = resumable_user(study=study, token=request.COOKIES.get(resume_cookie(study), ""))
    known = enrollment_of(user=returning, study=study) if returning else crowd_enrollment(study=study, crowd=crowd)
    ended = enrollment_outcome(known) if known is not None else None
    if known is not None and ended is not None:  # their code again, whatever became of the study since
        return _end_page(request, known, ended)
    if returning is None and known is not None:  # their crowd id, in progress, on a browser without their secret
        return _crowd_return(request, study, crowd, known)
    if request.method == "POST":
        return _resume(request, study, returning) if returning else _start(request, study, crowd)
    # An account holder already enrolled holds their places: the study is never full for them.
    newcomer = returning is None and enrollment_of(user=request.user, study=study) is None
    full = newcomer and study.accepts_work and not study_has_free_place(study)
    return _invite_page(request, study, crowd, returning=returning is not None, full=full)


def _crowd_return(request: HttpRequest, study: Study, crowd: dict[str, str], enrollment: Enrollment) -> HttpResponse:
    """A person in progress, known by the link's crowd id on a browser without their resume secret:
    their own run back when the link carries the platform session they joined with (a button: a
    GET signs nobody in), else how to continue; never a second enrolment or another way out's code."""
    if request.user.is_authenticated and enrollment.participant.user_id == request.user.pk:
        return redirect("annotation:study-next", token=study.token)  # signed in as them already
    user = crowd_resumable_user(enrollment=enrollment, crowd=crowd)
    if user is None:
        status = 409 if request.method == "POST" else 200
        return render(request, "annotation/study_elsewhere.html", {"study": study}, status=status)
    if request.method == "POST":
        return _with_resume_cookie(_resume(request, study, user), study, enrollment)
    return render(request, "annotation/study_resume.html", {"study": study, "from_platform": True})


def _invite_page(
    request: HttpRequest, study: Study, crowd: dict[str, str], *, returning: bool, full: bool, status: int = 200
) -> HttpResponse:
    """The consent page; for a newcomer to a study with every place taken, that and its code instead."""
    context = {
        "study": study,
        "types": study.types or None,
        "returning": returning,
        "full": full,
        "no_places_url": completion_url(study, crowd, code="no_places_code"),
        "screened_out_url": completion_url(study, crowd, code="screened_out_code"),
        "practice_count": study.practice.count(),
        "total": study.puzzles_total(),  # as the progress bar counts them: gold included
        "paragraphs": consent_paragraphs(study),
        "device_check": device_check_data(),
    }
    return render(request, "annotation/study_join.html", context, status=status)


@require_http_methods(["GET"])
def study_decline(request: HttpRequest, token: str) -> HttpResponse:
    """Someone who does not agree: nothing is recorded, nobody is signed in; the study's decline
    link (e.g. back to the platform) when it has one."""
    study = get_object_or_404(Study, token=token)
    return render(request, "annotation/study_declined.html", {"study": study})


def _start(request: HttpRequest, study: Study, crowd: dict[str, str]) -> HttpResponse:
    """Join: check the visitor may, sign a new guest in if nobody is, enrol, consent, go on."""
    try:
        anonymous, client = not request.user.is_authenticated, client_address(request.META)
        join_check(study=study, crowd=crowd, anonymous=anonymous, client=client)
        enrolled = enrollment_of(user=request.user, study=study) is not None  # their places are held
        if not enrolled and not study_has_free_place(study):  # filled since the page was shown
            return _invite_page(request, study, crowd, returning=False, full=True, status=409)
        if anonymous:
            login(request, guest_user(study=study), backend=MODEL_BACKEND)
        user_agent = request.META.get("HTTP_USER_AGENT", "")
        enrollment = enrollment_join(
            study=study, user=signed_in_user(request), external_ids=crowd, user_agent=user_agent, client=client
        )
    except AccessRefused as refused:
        return _refused(request, study, refused, status=403)
    enrollment_consent(enrollment=enrollment)
    return _with_resume_cookie(redirect("annotation:study-next", token=study.token), study, enrollment)


def _resume(request: HttpRequest, study: Study, user: User) -> HttpResponse:
    login(request, user, backend=MODEL_BACKEND)
    enrollment_seen(
        enrollment=enrollment_of(user=user, study=study), user_agent=request.META.get("HTTP_USER_AGENT", "")
    )
    return redirect("annotation:study-next", token=study.token)


@require_http_methods(["GET", "POST"])
def study_resume(request: HttpRequest, token: str, secret: str) -> HttpResponse:
    """The resume link an annotator was shown: a button signs them back in, on any device."""
    study = get_object_or_404(Study, token=token)
    user = resumable_user(study=study, token=secret)
    if user is None:
        return _refused(request, study, AccessRefused("This resume link is not valid for this study."), status=404)
    enrollment = enrollment_of(user=user, study=study)
    ended = enrollment_outcome(enrollment) if enrollment is not None else None
    if enrollment is not None and ended is not None:  # the secret is theirs: their code, without signing in
        return _end_page(request, enrollment, ended)
    if request.method == "POST":
        return _with_resume_cookie(_resume(request, study, user), study, enrollment)
    return render(request, "annotation/study_resume.html", {"study": study})


def study_next(request: HttpRequest, token: str) -> HttpResponse:
    """Wherever the annotator stands: the same unfinished puzzle, the next one, or the end."""
    study = get_object_or_404(Study, token=token)
    enrollment = enrollment_of(user=request.user, study=study)
    if enrollment is None and request.user.is_staff and previewing(request.session, study):
        return redirect("annotation:study-preview-next", study_id=study.pk)  # from the pause page
    if enrollment is None:
        return redirect("annotation:study-join", token=token)
    step = enrollment_next(enrollment=enrollment)
    if step.kind == "consent":
        return redirect("annotation:study-join", token=token)
    if step.attempt is not None:  # an attempt step
        return redirect("annotation:play", uid=step.attempt.uid)
    enrollment.refresh_from_db()  # the step may have ended their part just now (the gold rule)
    return _end_page(request, enrollment, step)


def _end_page(request: HttpRequest, enrollment: Enrollment, step: Step) -> HttpResponse:
    """Where a step other than a puzzle leaves the person: with the code of their way out, if any."""
    code = way_out_code(enrollment, step.kind)
    context = {
        "study": enrollment.study,
        "step": step,
        "enrollment": enrollment,
        "resume_url": _resume_url(request, enrollment) if step.kind in RESUMABLE else None,
        "code": getattr(enrollment.study, code) if code else None,
        "return_url": completion_url(enrollment.study, enrollment.external_ids, code=code) if code else None,
    }
    return render(request, "annotation/study_end.html", context)


RESUMABLE = ("waiting", "paused")  # the steps that ask people to come back later


def study_pause(request: HttpRequest, token: str) -> HttpResponse:
    """The Pause page: the puzzle the person left stops its clock until it is shown again."""
    study = get_object_or_404(Study, token=token)
    enrollment = enrollment_of(user=request.user, study=study)
    if enrollment is not None:
        attempts_pause(participant_id=enrollment.participant_id, study_id=study.pk)
    context = {"study": study, "enrollment": enrollment, "resume_url": _resume_url(request, enrollment)}
    return render(request, "annotation/study_pause.html", context)


def _resume_url(request: HttpRequest, enrollment: Enrollment | None) -> str | None:
    if enrollment is None:
        return None
    path = reverse("annotation:study-resume", args=[enrollment.study.token, resume_token(enrollment)])
    return request.build_absolute_uri(path)


def _with_resume_cookie(response: HttpResponse, study: Study, enrollment: Enrollment | None) -> HttpResponse:
    """This browser keeps the resume secret, so the same invite link continues here later."""
    if enrollment is not None:
        response.set_cookie(
            resume_cookie(study),
            resume_token(enrollment),
            max_age=RESUME_COOKIE_DAYS * 86400,
            httponly=True,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,  # as the session: https-only where served so
        )
    return response


def _refused(request: HttpRequest, study: Study, refused: AccessRefused, *, status: int) -> HttpResponse:
    return render(request, "annotation/study_refused.html", {"study": study, "why": str(refused)}, status=status)
