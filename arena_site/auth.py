"""Sign-in throttling (django-axes): repeated failures for one name from one address lock them out.

Settings: AXES_* in settings.py (5 failures, an hour, reset on success). Every sign-in form of
the site (the admin's, /accounts/login/) authenticates with the request, which axes needs to
count failures by client address.
"""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class LoginThrottleBackend(AxesStandaloneBackend):
    """axes' check before the password backends. A call without a request (code, not a sign-in
    form: Django's test client's login(), a management command) has no client address to count
    and is not throttled; axes itself would refuse it with an exception instead."""

    def authenticate(self, request: HttpRequest | None, username: str | None = None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def client_ip(request: HttpRequest) -> str:
    """The address failures are counted by: the same as the site's other per-address limits
    (ARENA_PROXY_HOPS back through X-Forwarded-For behind our proxy)."""
    from annotation.studies.access import client_address

    return client_address(request.META)
