"""Error reports that never show where the data lives or how to sign as the site.

Django's debug page (DEBUG on) and its error e-mails list the settings, the request and every
frame's variables. Its own filter hides settings named like keys and passwords, and only with
DEBUG off. Ours hides, always: connection URLs (DATABASE_URL, REDIS_URL, the Celery broker and
results, CACHES, CHANNEL_LAYERS, DATABASES whole), anything named like a secret, the same names
in frame variables and in nested dictionaries (a driver's `password` parameter); and the
reporter blanks any remaining occurrence of a known secret value in the finished page.

A request that meets the database unreachable (stopped, restarting, the pool without a connection)
answers 503 "database unavailable" rather than the 500 page (DatabaseUnavailableMiddleware): a
person, a client polling JSON and a load balancer can tell an outage from a bug.
"""

from __future__ import annotations

import html
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlparse

import psycopg
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.utils.cache import add_never_cache_headers
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

logger = logging.getLogger(__name__)

SENSITIVE_NAMES = re.compile(
    "API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|CREDENTIAL|DSN"
    "|DATABASE|REDIS|CELERY_BROKER|CELERY_RESULT|BROKER_URL|CACHES|CHANNEL_LAYERS",
    flags=re.I,
)
# Values shorter than this are not searched for in the finished page: they would blank ordinary
# words. Short passwords still never show where they are named (settings, frames, URLs).
MIN_SCRUBBED_LENGTH = 6


class SecretsHiddenFilter(SafeExceptionReporterFilter):
    hidden_settings = SENSITIVE_NAMES

    def is_active(self, request) -> bool:
        """Also with DEBUG on: a developer's debug page is one bad Host header away from anyone."""
        return True

    def get_traceback_frame_variables(self, request, tb_frame):
        variables = super().get_traceback_frame_variables(request, tb_frame)
        secrets = known_secrets()
        cleansed = []
        for name, value in variables:
            value = self.cleanse_setting(name, value)
            if value != self.cleansed_substitute and _mentions(value, secrets):
                value = self.cleansed_substitute
            cleansed.append((name, value))
        return cleansed


class SecretsHiddenReporter(ExceptionReporter):
    """The debug page and error e-mails, with every known secret value blanked as a last resort
    (an exception's message, a template's context, anything the filter could not name)."""

    def get_traceback_html(self) -> str:
        return scrub(super().get_traceback_html(), escaped=True)

    def get_traceback_text(self) -> str:
        return scrub(super().get_traceback_text(), escaped=False)


def known_secrets() -> set[str]:
    """Values that must never be shown: the keys, the connection URLs and their passwords."""
    found: set[str] = set()
    for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        url = getattr(settings, name, "")
        if isinstance(url, str) and "://" in url:
            found.update(_url_and_password(url))
    for name in dir(settings):
        if name.isupper() and re.search("SECRET|PASSWORD|TOKEN|API_KEY", name):
            found.update(_strings(getattr(settings, name, None)))
    for database in settings.DATABASES.values():
        found.update(_strings(database.get("PASSWORD")))
    for cache in getattr(settings, "CACHES", {}).values():
        for location in _strings(cache.get("LOCATION")):
            found.update(_url_and_password(location))
    for layer in getattr(settings, "CHANNEL_LAYERS", {}).values():
        for host in _strings(layer.get("CONFIG", {}).get("hosts")):
            found.update(_url_and_password(host))
    for name, value in os.environ.items():  # what a development server copies into request.META
        if SENSITIVE_NAMES.search(name) or name.endswith("_URL"):
            found.update(_url_and_password(value) if "://" in value else [value])
    return {value for value in found if len(value) >= MIN_SCRUBBED_LENGTH}


def scrub(text: str, *, escaped: bool) -> str:
    for secret in sorted(known_secrets(), key=len, reverse=True):
        text = text.replace(secret, SecretsHiddenFilter.cleansed_substitute)
        if escaped:
            text = text.replace(html.escape(secret), SecretsHiddenFilter.cleansed_substitute)
    return text


def _url_and_password(url: str) -> Iterator[str]:
    yield url
    try:
        password = urlparse(url).password
    except ValueError:
        return
    if password:
        yield password


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, Iterable) and not isinstance(value, bytes):
        for item in value:
            yield from _strings(item)


def _mentions(value: Any, secrets: set[str]) -> bool:
    if not secrets:
        return False
    try:
        shown = repr(value)
    except Exception:  # an object whose repr fails shows nothing of itself either
        return False
    return any(secret in shown for secret in secrets)


# --- the database unreachable -----------------------------------------------------------------
UNAVAILABLE_CODE = "unavailable"
DATABASE_UNAVAILABLE = "the database is unavailable; this is tried again by itself"
RETRY_S = 5  # the 503 page reloads itself this often (a GET), and says Retry-After
# PostgreSQL's own words for "not now": the server shutting down or starting up.
_UNREACHABLE_STATES = frozenset({"57P01", "57P02", "57P03"})


def database_unreachable(error: BaseException) -> bool:
    """Whether `error` says the database cannot be reached (down, restarting, no connection from
    the pool in time), not that a statement failed (a deadlock, a serialization failure)."""
    if not isinstance(error, (OperationalError, InterfaceError)):
        return False
    cause = error.__cause__
    if not isinstance(cause, psycopg.Error):  # SQLite's "database is locked" is no outage
        return False
    state = cause.sqlstate  # None: the connection itself failed, or the pool had none (PoolTimeout)
    return state is None or state.startswith("08") or state in _UNREACHABLE_STATES


def database_unavailable(request: HttpRequest, *, as_json: bool | None = None) -> HttpResponse:
    """The 503 answer: JSON for a client that asks for JSON and not HTML (`as_json` decides when
    given), else a page that reloads itself every RETRY_S while the request is a GET. Made without
    the database: no session, no user."""
    if as_json if as_json is not None else not request.accepts("text/html"):
        response: HttpResponse = JsonResponse(
            {"type": "error", "code": UNAVAILABLE_CODE, "message": DATABASE_UNAVAILABLE}, status=503
        )
    else:
        reload_s = RETRY_S if request.method in ("GET", "HEAD") else None
        response = HttpResponse(loader.render_to_string("503.html", {"reload_s": reload_s}), status=503)
    response["Retry-After"] = str(RETRY_S)
    add_never_cache_headers(response)  # the next try must reach the site, not a cache
    return response


class DatabaseUnavailableMiddleware:
    """Any view that raises for an unreachable database answers database_unavailable(), not 500.
    The live page's HTTP fallback reads any answer but its list of frames as a failed post and
    resends, as it did after a 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_unreachable(exception):
            return None
        logger.warning("%s %s: the database is unavailable (%s)", request.method, request.path, exception)
        return database_unavailable(request)
