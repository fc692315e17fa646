"""The live admin dashboard's page and its JSON twin (the page's fallback when no socket opens)."""
from functools import wraps

from django.contrib.admin.views.decorators import staff_member_required
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from annotation.dashboard import dashboard_summary

REPORT_FORMATS = ("html", "csv", "json", "md")


def _staff_json(view):
    """Staff only, refused as JSON: the page polls this with fetch, which should get a 403 it can
    read rather than a redirect to a login page."""
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not (request.user.is_active and request.user.is_staff):
            return JsonResponse({"type": "error", "code": "not_allowed"}, status=403)
        return view(request, *args, **kwargs)
    return wrapped


@staff_member_required
@never_cache
def dashboard(request):
    """The page, with a first summary in it, so it shows numbers before the socket opens."""
    return render(request, "annotation/dashboard.html", {
        "summary": dashboard_summary(), "report_formats": REPORT_FORMATS})


@_staff_json
@never_cache
def dashboard_json(request):
    return JsonResponse({"type": "summary", **dashboard_summary()})
