import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from .bounds import BodyLimitMiddleware  # noqa: E402
from .origins import SameOriginWebSocketValidator  # noqa: E402
from .routing import websocket_urlpatterns  # noqa: E402


class CachedStaticFilesHandler(ASGIStaticFilesHandler):
    """Static files with a short browser cache: a page load then costs the server one request
    for the page and its images, not six more for scripts and styles that did not change."""

    async def get_response_async(self, request):
        response = await super().get_response_async(request)
        response.headers.setdefault("Cache-Control", "public, max-age=300")
        return response


application = ProtocolTypeRouter(
    {
        # daphne serves our own static files: one process to run, no separate file server needed.
        # Bodies over ARENA_MAX_BODY_BYTES are refused before anything reads them.
        "http": BodyLimitMiddleware(CachedStaticFilesHandler(django_asgi_app)),
        # Sockets only from the site's own pages: scheme, host and port compared.
        "websocket": SameOriginWebSocketValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
