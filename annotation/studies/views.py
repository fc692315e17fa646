"""The annotator's way through a study: invite link, consent, the next puzzle, pause, the end."""

from django.contrib.auth import login
from django.shortcuts import get_object_or_404, redirect, render

from annotation.models import Study
from annotation.studies.access import crowd_ids, enrollment_of, guest_user, returning_guest
from annotation.studies.queue import enrollment_consent, enrollment_join, enrollment_next

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def study_join(request, token: str):
    """The invite link: the study's consent and instructions; starting joins (no account needed)."""
    study = get_object_or_404(Study, token=token)
    crowd = crowd_ids(request.GET)
    if crowd:
        request.session[f"crowd-{token}"] = crowd  # kept until the person starts
        returning = returning_guest(study=study, crowd=crowd)
        if returning is not None and not request.user.is_authenticated:
            # The same crowd id on another device or browser: continue as that annotator.
            login(request, returning, backend=MODEL_BACKEND)
            return redirect("annotation:study-next", token=token)
    if request.method == "POST" and study.is_open:
        if not request.user.is_authenticated:
            login(request, guest_user(study=study), backend=MODEL_BACKEND)
        enrollment = enrollment_join(
            study=study, user=request.user, external_ids=request.session.get(f"crowd-{token}", {})
        )
        enrollment_consent(enrollment=enrollment)
        return redirect("annotation:study-next", token=token)
    return render(request, "annotation/study_join.html", {"study": study, "types": study.types or None})


def study_next(request, token: str):
    """Wherever the annotator stands: the same unfinished puzzle, the next one, or the end."""
    study = get_object_or_404(Study, token=token)
    enrollment = enrollment_of(user=request.user, study=study)
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
    enrollment = enrollment_of(user=request.user, study=study)
    return render(request, "annotation/study_pause.html", {"study": study, "enrollment": enrollment})
