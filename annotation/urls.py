from django.urls import path

from annotation import dashboard_views, review_views, study_views, views

app_name = "annotation"
urlpatterns = [
    path("play/<str:uid>/", views.play, name="play"),
    path("play/<str:uid>/data/", views.play_data, name="play-data"),
    path("attempts/<str:uid>/events/", views.events, name="events"),
    path("puzzles/<str:puzzle_uid>/try/", views.try_puzzle, name="try"),
    path("review/", review_views.queue, name="review"),
    path("review/<str:uid>/", review_views.puzzle, name="review-puzzle"),
    path("review/<str:uid>/resolve/", review_views.resolve, name="review-resolve"),
    path("studies/", study_views.study_list, name="studies"),
    path("studies/new/", study_views.study_new, name="study-new"),
    path("studies/<int:study_id>/annotators/", study_views.study_annotators, name="study-annotators"),
    path("studies/<int:study_id>/annotators/<int:enrollment_id>/", study_views.annotator_exclusion,
         name="annotator-exclusion"),
    path("studies/<int:study_id>/report.<str:fmt>", review_views.report_download, name="study-report"),
    path("studies/<int:study_id>/events.jsonl", review_views.events_download, name="study-events"),
    path("attempts/<str:uid>/flag/", views.flag, name="flag"),
    path("dashboard/", dashboard_views.dashboard, name="dashboard"),
    path("dashboard/summary.json", dashboard_views.dashboard_json, name="dashboard-json"),
    path("s/<str:token>/", views.study_join, name="study-join"),
    path("s/<str:token>/next/", views.study_next, name="study-next"),
    path("s/<str:token>/pause/", views.study_pause, name="study-pause"),
]
