"""The WebSocket routes: the live page's attempt socket and the staff dashboard's."""

from django.urls import path

from annotation.live.consumers import AttemptConsumer
from annotation.reporting.consumers import DashboardConsumer

websocket_urlpatterns = [
    path("ws/attempts/<str:uid>/", AttemptConsumer.as_asgi()),
    path("ws/dashboard/", DashboardConsumer.as_asgi()),
]
