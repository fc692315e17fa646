"""The WebSocket routes: the live page's attempt socket and the staff dashboard's."""

from django.urls import path

from annotation.live.consumers import AttemptConsumer
from annotation.reporting.consumers import DashboardConsumer
from puzzles.jobs.consumers import JobsConsumer

websocket_urlpatterns = [
    path("ws/attempts/<str:uid>/", AttemptConsumer.as_asgi()),
    path("ws/dashboard/", DashboardConsumer.as_asgi()),
    path("ws/jobs/", JobsConsumer.as_asgi()),  # the staff Jobs page (puzzles/jobs)
]
