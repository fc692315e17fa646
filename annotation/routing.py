from django.urls import path

from annotation.consumers import AttemptConsumer
from annotation.dashboard_consumer import DashboardConsumer

websocket_urlpatterns = [
    path("ws/attempts/<str:uid>/", AttemptConsumer.as_asgi()),
    path("ws/dashboard/", DashboardConsumer.as_asgi()),
]
