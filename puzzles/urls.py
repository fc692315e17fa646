from django.urls import path

from puzzles import views

app_name = "puzzles"
urlpatterns = [
    path("", views.home, name="home"),
    path("replays/<int:check_id>/screenshot.png", views.replay_screenshot, name="replay-screenshot"),
]
