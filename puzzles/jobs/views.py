"""The staff Jobs page: every job's progress, failures by name and who started it, with cancel,
and the bank page's Generate button. While a job runs the page reloads itself every few seconds
(a meta refresh: no script to allow). Starting a replay or a trajectory export runs the live page,
so those buttons' views live on the annotation side (annotation/studies/staff_views.py)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from arena_site.staff import staff_required
from puzzles.bank import SPLIT_SIZES
from puzzles.jobs.models import Chunk, Job
from puzzles.jobs.runs import job_cancel

SHOWN = 50  # the newest jobs; older ones stay in the database (and the admin)
REFRESH_S = 3
GENERATE_MOST_PER_TYPE = 10_000  # a button press is not the way to make a whole bank


@staff_required
@never_cache
def jobs(request: HttpRequest) -> HttpResponse:
    shown = list(Job.objects.all()[:SHOWN])
    troubled = (
        Chunk.objects.filter(job__in=shown).exclude(error="", failed=0).select_related("job").order_by("job", "number")
    )
    by_job: dict[int, list[Chunk]] = {}
    for chunk in troubled:
        by_job.setdefault(chunk.job_id, []).append(chunk)
    rows = [{"job": job, "troubled": by_job.get(job.pk, [])} for job in shown]
    running = any(job.state == Job.State.RUNNING for job in shown)
    return render(request, "jobs/jobs.html", {"rows": rows, "refresh_s": REFRESH_S if running else None})


@staff_required
@require_POST
def cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    if job.state == Job.State.RUNNING:
        job_cancel(job)
    return redirect("annotation:jobs")


class GenerateForm(forms.Form):
    split = forms.ChoiceField(choices=[(name, name) for name in SPLIT_SIZES])
    per_type = forms.IntegerField(min_value=1, max_value=GENERATE_MOST_PER_TYPE)


@staff_required
@require_POST
def start_generate(request: HttpRequest) -> HttpResponse:
    """The bank page's Generate: the split's first N puzzles of every type, as a job (the ones
    stored already are skipped and counted done)."""
    from puzzles.tasks import generate_job_start  # the generators load with the task module

    form = GenerateForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Generate: {_form_errors(form)}")
        return redirect("annotation:jobs")
    job = generate_job_start(
        split=form.cleaned_data["split"],
        per_type=form.cleaned_data["per_type"],
        types=None,
        started_by=request.user.get_username(),
    )
    return started(request, job)


def started(request: HttpRequest, job: Job) -> HttpResponse:
    """Where a start button lands: the Jobs page, at the new job."""
    messages.success(request, f"Job {job.pk} started: {job.label}.")
    return redirect(f"{reverse('annotation:jobs')}#job-{job.pk}")


def _form_errors(form: forms.Form) -> str:
    return "; ".join(f"{field}: {' '.join(map(str, errors))}" for field, errors in form.errors.items())
