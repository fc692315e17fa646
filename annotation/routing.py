"""The WebSocket routes: the live page's attempt socket, the staff pages', and a hosted page's recorder's."""

from django.urls import path

from annotation.live.consumers import AttemptConsumer
from annotation.reporting.consumers import DashboardConsumer
from puzzles.jobs.consumers import JobsConsumer

websocket_urlpatterns = [
    path("ws/attempts/<str:uid>/", AttemptConsumer.as_asgi()),
    path("ws/dashboard/", DashboardConsumer.as_asgi()),
    path("ws/jobs/", JobsConsumer.as_asgi()),  # the staff Jobs page (puzzles/jobs)
]

# On a hosted attempt's own host (docs/hosted.md): the recorder of the peer's page, its attempt
# named by the host (arena_site/asgi.py routes such sockets here, through the proxy's host check).
hosted_websocket_urlpatterns = [
    path("ws/attempts/<str:uid>/", AttemptConsumer.as_asgi(by_host=True)),
]
