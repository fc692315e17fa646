import os
import re
from pathlib import PurePosixPath
from urllib.request import url2pathname

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.http import Http404  # noqa: E402

from .bounds import BodyLimitMiddleware, bound_daphne_bodies  # noqa: E402
from .origins import SameOriginWebSocketValidator  # noqa: E402
from .routing import websocket_urlpatterns  # noqa: E402


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


# daphne, as deployed, imports this module before it accepts a connection.
bound_daphne_bodies()

application = ProtocolTypeRouter(
    {
        # daphne serves our own static files: one process to run, no separate file server needed.
        # Bodies over ARENA_MAX_BODY_BYTES are refused as they arrive (in daphne), and here too.
        "http": BodyLimitMiddleware(CachedStaticFilesHandler(django_asgi_app)),
        # Sockets only from the site's own pages: scheme, host and port compared.
        "websocket": SameOriginWebSocketValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
