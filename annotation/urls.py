from django.urls import path

from annotation import views

app_name = "annotation"
urlpatterns = [
    path("play/<str:uid>/", views.play, name="play"),
    path("play/<str:uid>/data/", views.play_data, name="play-data"),
    path("attempts/<str:uid>/events/", views.events, name="events"),
    path("puzzles/<str:puzzle_uid>/try/", views.try_puzzle, name="try"),
    path("s/<str:token>/", views.study_join, name="study-join"),
    path("s/<str:token>/next/", views.study_next, name="study-next"),
    path("s/<str:token>/pause/", views.study_pause, name="study-pause"),
]
