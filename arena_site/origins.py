"""Who may open a WebSocket to the site: pages of the site itself, compared by scheme, host and port.

A socket is not covered by the browser's same-origin rules, and the session cookie goes along, so
a page on another origin could otherwise act as the signed-in person. The Origin header must name
the very origin the request came to (its Host header, http with ws and https with wss, the port
included), or an entry of CSRF_TRUSTED_ORIGINS. No Origin, no socket. Replaces channels'
AllowedHostsOriginValidator, which compares host names only (any port passed).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int]  # scheme (http or https), host (lowercase), port


class SameOriginWebSocketValidator:
    """hosts: the host names a socket may come to, in ALLOWED_HOSTS' form (None: ALLOWED_HOSTS).
    A hosted attempt's host (docs/hosted.md) passes its own ([".<ARENA_HOSTED_DOMAIN>"]), so the
    hosted domain never enters ALLOWED_HOSTS, where Django would serve the site's pages under it;
    and no trusted origin is taken there: Origin must equal Host."""

    def __init__(self, application, hosts: list[str] | None = None):
        self.application = application
        self.hosts = hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope, hosts=self.hosts):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)


def origin_allowed(scope, hosts: list[str] | None = None) -> bool:
    headers = {name.lower(): value.decode("latin1") for name, value in scope.get("headers", [])}
    origin = parse_origin(headers.get(b"origin", ""))
    if origin is None:
        return False
    allowed = _allowed_hosts() if hosts is None else hosts
    own = own_origin(scope, headers)
    if own is not None:
        if origin == own and validate_host(own[1], allowed):
            return True
    elif origin[2] == DEFAULT_PORTS[origin[0]] and validate_host(origin[1], allowed):
        # No Host header and no server address: not a network connection (ASGI servers give one
        # or the other, and a WebSocket handshake requires Host) but an in-process caller, such as
        # the test suite's communicators. Only an allowed host on its scheme's own port passes.
        return True
    return hosts is None and any(_trusted(origin, entry) for entry in settings.CSRF_TRUSTED_ORIGINS)


def parse_origin(value: str) -> Origin | None:
    """("https", "example.org", 443) for "https://example.org"; None for "null", paths, other schemes."""
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or parts.path not in ("", "/") or parts.query or parts.username:
        return None
    return _origin(parts.scheme, parts.netloc)


def own_origin(scope, headers: dict[bytes, str]) -> Origin | None:
    """The origin this request came to: its scheme (the proxy's word when SECURE_PROXY_SSL_HEADER
    trusts it) with the Host header, or the server's address when there is no Host header."""
    scheme = "https" if scope.get("scheme", "ws") in ("wss", "https") else "http"
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy_header:
        name, secure_value = proxy_header
        header = name.removeprefix("HTTP_").replace("_", "-").lower().encode()
        if header in headers:
            scheme = "https" if headers[header].split(",")[0].strip() == secure_value else "http"
    if b"host" in headers:
        return _origin(scheme, headers[b"host"])
    server = scope.get("server")
    if server and server[1] is not None:
        return _origin(scheme, f"{server[0]}:{server[1]}")
    return None


def _origin(scheme: str, netloc: str) -> Origin | None:
    domain, port = split_domain_port(netloc)
    if not domain:
        return None
    return scheme, domain, int(port) if port else DEFAULT_PORTS[scheme]


def _allowed_hosts() -> list[str]:
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return settings.ALLOWED_HOSTS


def _trusted(origin: Origin, entry: str) -> bool:
    """Whether the origin is this CSRF_TRUSTED_ORIGINS entry ("https://*.example.org" covers subdomains)."""
    parts = urlsplit(entry.strip().lower())
    if parts.scheme != origin[0]:
        return False
    wildcard = parts.netloc.startswith("*.")
    trusted = _origin(parts.scheme, parts.netloc[2:] if wildcard else parts.netloc)
    if trusted is None or trusted[2] != origin[2]:
        return False
    if wildcard:
        return is_same_domain(origin[1], "." + trusted[1])
    return trusted[1] == origin[1]
