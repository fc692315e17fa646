"""The staff Jobs page: every job's progress, failures by name and who started it, with cancel.
While a job runs the page reloads itself every few seconds (a meta refresh: no script to allow)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from arena_site.staff import staff_required
from puzzles.jobs.models import Chunk, Job
from puzzles.jobs.runs import job_cancel

SHOWN = 50  # the newest jobs; older ones stay in the database (and the admin)
REFRESH_S = 3


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
