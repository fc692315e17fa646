"""The site's own request and response guards (Django middleware; the ASGI-level ones are in bounds.py)."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.request import split_domain_port

# Everything comes from the site itself: no inline script or style (pages carry their data in
# <script type="application/json"> blocks, styles in static CSS), no plugins, no framing. Images
# may be data: URIs (the review page's masks). Sockets go back to the page's own host. The one
# frame is a hosted benchmark's page at its attempt's own host (hosted_frames).
CSP_DIRECTIVES = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
)

# C0 controls and DEL, except tab, line feed and carriage return (a textarea's own).
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class ContentSecurityPolicyMiddleware:
    """Content-Security-Policy on every response served over HTTPS (directly, or through the proxy
    SECURE_PROXY_SSL_HEADER trusts), as HSTS and secure cookies are. Downloads (Content-Disposition:
    attachment, such as the self-contained HTML report) and DEBUG's own error pages are left alone.
    tests/security/test_defaults.py runs the site's pages and the admin in Chromium under it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.is_secure() or "Content-Security-Policy" in response:
            return response
        if response.get("Content-Disposition", "").startswith("attachment"):
            return response
        if settings.DEBUG and response.status_code >= 400:
            return response  # Django's technical pages style themselves inline
        response["Content-Security-Policy"] = content_security_policy(request)
        return response


def content_security_policy(request: HttpRequest) -> str:
    sockets = ["'self'"]
    try:
        host = request.get_host()
    except DisallowedHost:
        host = ""
    if host:  # 'self' covers wss: in CSP 3; older browsers need the socket origin named
        sockets.append(f"wss://{host}")
    return "; ".join((*CSP_DIRECTIVES, "connect-src " + " ".join(sockets), hosted_frames(host)))


def hosted_frames(host: str) -> str:
    """The play page frames a hosted benchmark's page at its attempt's own host (docs/hosted.md),
    a host under ARENA_HOSTED_DOMAIN on the site's own port; no other frame."""
    port = split_domain_port(host)[1]
    return f"frame-src https://*.{settings.ARENA_HOSTED_DOMAIN}" + (f":{port}" if port else "")


class ControlCharactersMiddleware:
    """A NUL or another control character in the address, a query parameter or a form field is a
    clear 400 naming the parameter, before any view (or the database, which refuses NUL) sees it.
    JSON bodies are not read here: their own validation (annotation/live/frames.py) judges them."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        found = control_character_in(request)
        if found:
            where, character = found
            return HttpResponseBadRequest(
                f"Bad request: {where} must be printable text; it contains the control character "
                f"U+{ord(character):04X}, which this site does not accept.\n",
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


def control_character_in(request: HttpRequest) -> tuple[str, str] | None:
    """Where a control character is ("the parameter q", "the address") and which, or None."""
    if match := CONTROL_CHARACTERS.search(request.path):
        return "the address", match.group()
    sources = [("parameter", request.GET)]
    if request.method == "POST" and request.content_type in FORM_TYPES:
        sources.append(("form field", request.POST))
    for kind, params in sources:
        for name, values in params.lists():
            for text in (name, *values):
                if match := CONTROL_CHARACTERS.search(text):
                    return f"the {kind} {_shown(name)}", match.group()
    return None


def _shown(name: str) -> str:
    """The parameter's name, printable and short, for the message."""
    visible = CONTROL_CHARACTERS.sub(lambda m: f"\\x{ord(m.group()):02x}", name)
    return visible[:60] + ("…" if len(visible) > 60 else "")
