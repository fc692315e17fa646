"""Staff pages of reporting: the live dashboard and its JSON twin (the page's fallback when no
socket opens), report downloads and the raw-event export (the per-participant CSV is the studies
domain's: annotation/studies/staff_views.py). Annotators reach none of these."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache

from annotation.models import Study
from annotation.reporting import render as report_render
from annotation.reporting.dashboard import DATABASE_WAIT_S, dashboard_summary
from annotation.reporting.exports import event_lines
from annotation.reporting.reports import study_report
from annotation.url_templates import url_template
from arena_site.errors import database_unavailable, database_unreachable
from arena_site.postgresql.base import pool_wait
from arena_site.staff import staff_required

View = Callable[..., HttpResponseBase]


def _staff_json(view: View) -> View:
    """Staff only, refused as JSON: the page polls this with fetch, which should get a 403 it can
    read rather than a redirect to a login page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not (request.user.is_active and request.user.is_staff):
            return JsonResponse({"type": "error", "code": "not_allowed"}, status=403)
        return view(request, *args, **kwargs)

    return wrapped


def _unavailable_at_once(*, as_json: bool) -> Callable[[View], View]:
    """The database waited for DATABASE_WAIT_S at most, the staff check's own lookups included:
    with it down the dashboard answers 503 "database unavailable" at once, not after the pool's
    timeout (ARENA_DB_POOL_TIMEOUT)."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            try:
                with pool_wait(DATABASE_WAIT_S):
                    return view(request, *args, **kwargs)
            except Exception as error:
                if not database_unreachable(error):
                    raise
                return database_unavailable(request, as_json=as_json)

        return wrapped

    return decorate


@_unavailable_at_once(as_json=False)
@staff_required
@never_cache
def dashboard(request: HttpRequest) -> HttpResponse:
    """The page, with a first summary in it, so it shows numbers before the socket opens."""
    return render(
        request,
        "annotation/dashboard.html",
        {
            "summary": dashboard_summary(),
            "report_formats": list(report_render.FORMATS),
            "report_url": url_template("annotation:study-report", study_id="int", fmt="str"),
            "review_url": url_template("annotation:review-puzzle", uid="str"),
        },
    )


@_unavailable_at_once(as_json=True)
@_staff_json
@never_cache
def dashboard_json(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"type": "summary", **dashboard_summary()})


@staff_required
def report_download(request: HttpRequest, study_id: int, fmt: str) -> HttpResponse:
    if fmt not in report_render.FORMATS:
        raise Http404(f"no {fmt} report; one of {', '.join(report_render.FORMATS)}")
    study = get_object_or_404(Study, pk=study_id)
    # ?exclude_trained=1: without the puzzles training environment episodes played (contamination).
    text = report_render.render(study_report(study=study, exclude_trained="exclude_trained" in request.GET), fmt)
    response = HttpResponse(text, content_type=f"{report_render.FORMATS[fmt]}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-report.{fmt}"'
    return response


@staff_required
def events_download(request: HttpRequest, study_id: int) -> StreamingHttpResponse:
    """Every event of a study's attempts as JSON lines, streamed (constant memory at any size)."""
    study = get_object_or_404(Study, pk=study_id)
    response = StreamingHttpResponse(event_lines(study=study), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="study-{study.pk}-events.jsonl"'
    return response
