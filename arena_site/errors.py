"""Error reports that never show where the data lives or how to sign as the site.

Django's debug page (DEBUG on) and its error e-mails list the settings, the request and every
frame's variables. Its own filter hides settings named like keys and passwords, and only with
DEBUG off. Ours hides, always: connection URLs (DATABASE_URL, REDIS_URL, the Celery broker and
results, CACHES, CHANNEL_LAYERS, DATABASES whole), anything named like a secret, the same names
in frame variables and in nested dictionaries (a driver's `password` parameter); and the
reporter blanks any remaining occurrence of a known secret value in the finished page.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.views.debug import ExceptionReporter, SafeExceptionReporterFilter

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
