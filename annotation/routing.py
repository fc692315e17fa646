from django.urls import path

from annotation.consumers import AttemptConsumer

websocket_urlpatterns = [
    path("ws/attempts/<str:uid>/", AttemptConsumer.as_asgi()),
]
