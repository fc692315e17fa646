"""Each hosted attempt's own origin: a-<uid>-<mac>.<ARENA_HOSTED_DOMAIN> (docs/hosted.md, "One
origin per attempt"). Beside the domains, not in hosted/: the live page frames the attempt's host
(live/page.py) and the proxy serves it (hosted/proxy.py), and live/ imports no other domain.

The host names the attempt, so the peer's page runs unchanged at `/` and every root-relative URL it
builds reaches the proxy, pinned to that attempt. The MAC (keyed by the site's secret) makes the host
a capability: an attempt's uid, seen in a staff page or a /play/ URL, does not give its host.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.utils.crypto import constant_time_compare, salted_hmac

MAC_CHARS = 20  # 80 bits; the whole label stays under DNS's 63
LABEL = re.compile(r"a-(?P<uid>[0-9a-f]{24})-(?P<mac>[0-9a-f]{20})")


def _mac(uid: str) -> str:
    return salted_hmac("arena.hosted.host", uid).hexdigest()[:MAC_CHARS]


def attempt_label(uid: str) -> str:
    return f"a-{uid}-{_mac(uid)}"


def attempt_host(uid: str) -> str:
    return f"{attempt_label(uid)}.{settings.ARENA_HOSTED_DOMAIN}"


def attempt_origin(uid: str, site_url: str) -> str:
    """The attempt's origin beside the site's: same scheme and port, the attempt's host."""
    parts = urlsplit(site_url)
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, attempt_host(uid) + port, "", "", ""))


def uid_of_host(host: str) -> str | None:
    """The attempt uid a Host header names, or None (not an attempt's host, or a forged one)."""
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    label, _, domain = name.lower().partition(".")
    if domain != settings.ARENA_HOSTED_DOMAIN:
        return None
    found = LABEL.fullmatch(label)
    if found is None or not constant_time_compare(found["mac"], _mac(found["uid"])):
        return None
    return found["uid"]


def is_attempt_host(host: str) -> bool:
    """Cheap test for the ASGI router: any host under the hosted domain. All of them go to the proxy
    (which answers 404 for a name that is no attempt's), so the site's own pages are never served
    under that domain, whatever ALLOWED_HOSTS holds."""
    name = host.rsplit(":", 1)[0].lower()
    return name.endswith("." + settings.ARENA_HOSTED_DOMAIN)


def covers_hosted_domain(origin_or_host: str) -> bool:
    """Whether a CSRF_TRUSTED_ORIGINS entry (or a host) reaches the attempts' pages: a host under the
    hosted domain, or a wildcard over it or over a parent of it (the bare domain is no attempt's)."""
    name = urlsplit(origin_or_host).hostname if "://" in origin_or_host else origin_or_host.rsplit(":", 1)[0]
    name = (name or "").lower().lstrip("*").lstrip(".")
    domain = settings.ARENA_HOSTED_DOMAIN
    wildcard = origin_or_host.split("://")[-1].startswith(("*.", "."))
    return name.endswith("." + domain) or (wildcard and (name == domain or domain.endswith("." + name)))
