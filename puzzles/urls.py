from django.urls import path

from puzzles import views

app_name = "puzzles"
urlpatterns = [
    path("", views.home, name="home"),
]
