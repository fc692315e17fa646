"""WebSocket routes of every app, gathered in one place."""

from annotation.routing import websocket_urlpatterns as annotation_routes

websocket_urlpatterns: list = [*annotation_routes]
