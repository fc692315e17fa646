import gc
import importlib
import logging
import os
import re
from pathlib import PurePosixPath
from types import SimpleNamespace
from urllib.request import url2pathname

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddleware  # noqa: E402  (needs Django set up first)
from channels.db import database_sync_to_async  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.sessions import CookieMiddleware, SessionMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib import auth  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.core.exceptions import ImproperlyConfigured  # noqa: E402
from django.http import Http404  # noqa: E402

from annotation.attempt_hosts import covers_hosted_domain  # noqa: E402
from annotation.hosted.proxy import AttemptHosts  # noqa: E402
from annotation.live.consumers import on_a_live_connection  # noqa: E402
from annotation.routing import hosted_websocket_urlpatterns  # noqa: E402

from .bounds import BodyLimitMiddleware, bound_daphne_bodies  # noqa: E402
from .origins import SameOriginWebSocketValidator  # noqa: E402
from .routing import websocket_urlpatterns  # noqa: E402

logger = logging.getLogger(__name__)


class CachedStaticFilesHandler(ASGIStaticFilesHandler):
    """Static files under a versioned path (/static/<version>/..., static_version.py).

    This release's version is kept by browsers for good: a change to any file is a new path, so a
    page load costs the server one request for the page and its images, not six more for scripts
    and styles that did not change. Another release's path (a page from a replica not yet
    restarted, during a rolling deploy) gets this release's file, never to be kept, so that no
    browser holds the wrong bytes under a path for a year."""

    VERSIONED = re.compile(r"/static/[0-9a-f]{12}/(?P<file>.+)")

    def _should_handle(self, path: str) -> bool:
        return self.VERSIONED.fullmatch(path) is not None

    def file_path(self, url: str) -> str:
        name = url2pathname(self.VERSIONED.fullmatch(url)["file"])  # %2e%2e decoded before the check
        if ".." in PurePosixPath(name).parts:  # a 404, not the finders' SuspiciousFileOperation (a 500)
            raise Http404(url)
        return name

    async def get_response_async(self, request):
        response = await super().get_response_async(request)
        if response.status_code == 200:
            this_release = request.path.startswith(self.base_url.path)
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable" if this_release else "no-store"
        return response


def _signed_in_user(session):
    """The session's user, or AnonymousUser: Django's own lookup and check (the session row, the
    user, the session's hash against the user's password). Once more on a fresh connection if the
    database dropped the one this thread kept (a restart), as the socket's own calls do."""
    return on_a_live_connection(auth.get_user, SimpleNamespace(session=session))


# In the pool of database threads, not channels' one shared sync thread: there every handshake's
# lookup queued behind every other's, and daphne drops a handshake not accepted within 5 s.
_user_lookup = database_sync_to_async(_signed_in_user, thread_sensitive=False)


class PooledAuthMiddleware(AuthMiddleware):
    """channels' AuthMiddleware (scope["user"] from the session cookie), its lookup in the pool."""

    async def resolve_scope(self, scope):
        scope["user"]._wrapped = await _user_lookup(scope["session"])


def socket_user_stack(inner):
    """As channels' AuthMiddlewareStack, the user looked up off the shared thread."""
    return CookieMiddleware(SessionMiddleware(PooledAuthMiddleware(inner)))


# The names autobahn's frame path calls to colour its debug lines: the protocol for every frame
# sent and received (autobahn/websocket/protocol.py), its twisted adapter for every read.
AUTOBAHN_COLOURING = ("hltype", "hlval")
AUTOBAHN_FRAME_PATH = ("autobahn.websocket.protocol", "autobahn.twisted.websocket")


def quiet_autobahn_debug_lines() -> None:
    """autobahn (daphne's WebSocket layer) builds the arguments of a debug line for every frame it
    sends and receives, names and values coloured through click, even when debug logging is off
    (no level check guards them, and none is offered): roughly a tenth of a busy web process's CPU
    per batch by one cProfile run of bench/event_path.py --cprofile (commit 27fe850; an estimate,
    the figure was not recorded), and 3.8 us per read in its twisted adapter (timed alone). Here
    its colouring is replaced by plain names and values, which its debug lines, when on, print
    uncoloured. Once per process, at ASGI start. tests/live/test_consumer.py fails if the pinned
    autobahn no longer calls these names in its frame path (the replacement would then save
    nothing)."""
    for name in AUTOBAHN_FRAME_PATH:
        module = importlib.import_module(name)
        missing = [colour for colour in AUTOBAHN_COLOURING if not hasattr(module, colour)]
        if missing:  # a newer autobahn: serve anyway, at the old cost, and say so
            logger.warning("%s has no %s: its debug lines are not made cheaper", name, missing)
            continue
        module.hltype, module.hlval = _plain_type, _plain_value  # type: ignore[attr-defined]


def _plain_type(obj) -> str:
    return getattr(obj, "__qualname__", type(obj).__name__)


def _plain_value(val, color: str = "white", bold: bool = True) -> object:
    return val


def refuse_trusting_the_hosted_domain() -> None:
    """CSRF_TRUSTED_ORIGINS must never reach the hosted domain: a peer's page (its scripts
    forwarded, never reviewed) could then post our forms and open our sockets as the signed-in
    person (docs/hosted.md, "CSRF"). Refused at start, naming the entry."""
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        if covers_hosted_domain(entry):
            raise ImproperlyConfigured(
                f"CSRF_TRUSTED_ORIGINS entry {entry!r} reaches the hosted domain {settings.ARENA_HOSTED_DOMAIN!r}, "
                "where benchmarks' own pages run: remove it, or give ARENA_HOSTED_DOMAIN a domain of its own"
            )


# daphne, as deployed, imports this module before it accepts a connection.
refuse_trusting_the_hosted_domain()
bound_daphne_bodies()
quiet_autobahn_debug_lines()

application = ProtocolTypeRouter(
    {
        # daphne serves our own static files: one process to run, no separate file server needed.
        # Bodies over ARENA_MAX_BODY_BYTES are refused as they arrive (in daphne), and here too.
        # A hosted attempt's own host (a-<key>.<ARENA_HOSTED_DOMAIN>) is the proxy's (docs/hosted.md).
        "http": BodyLimitMiddleware(AttemptHosts(CachedStaticFilesHandler(django_asgi_app))),
        # Sockets only from the site's own pages: scheme, host and port compared. On an attempt's
        # host only the recorder's socket, from that very host, the attempt named by the host.
        "websocket": AttemptHosts(
            SameOriginWebSocketValidator(socket_user_stack(URLRouter(websocket_urlpatterns))),
            sockets=SameOriginWebSocketValidator(
                URLRouter(hosted_websocket_urlpatterns), hosts=[f".{settings.ARENA_HOSTED_DOMAIN}"]
            ),
        ),
    }
)


def spare_the_startup_objects_from_collection() -> None:
    """The objects made while starting (Django, its apps and models, daphne, twisted, autobahn: some
    120,000 of them, by gc.get_objects()) live as long as the process, yet every full collection of
    the cyclic garbage collector walked them all again (about 50 ms each, several a minute on a
    busy process). Frozen, a full collection walks only what was made since. Once per process, when
    this module is imported: the last thing before daphne accepts a connection."""
    gc.collect()
    gc.freeze()


spare_the_startup_objects_from_collection()
