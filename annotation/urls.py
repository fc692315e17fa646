"""Every page of the annotation side, by domain; names are stable ("annotation:<name>")."""

from django.urls import path

from annotation.agents import views as agents
from annotation.datasets import views as datasets
from annotation.live import views as live
from annotation.reporting import views as reporting
from annotation.review import views as review
from annotation.studies import preview_views as study_preview
from annotation.studies import staff_views as study_staff
from annotation.studies import views as study
from puzzles.jobs import views as jobs

app_name = "annotation"
urlpatterns = [
    # live: the puzzle page and its event intake
    path("play/<str:uid>/", live.play, name="play"),
    path("play/<str:uid>/data/", live.play_data, name="play-data"),
    path("attempts/<str:uid>/events/", live.events, name="events"),
    path("puzzles/<str:puzzle_uid>/try/", live.try_puzzle, name="try"),
    path("puzzles/types/<str:type_name>/try/", study_preview.try_type, name="try-type"),
    # review: flags from the page, the staff's review
    path("attempts/<str:uid>/flag/", review.flag, name="flag"),
    path("review/", review.queue, name="review"),
    path("review/<str:uid>/", review.puzzle, name="review-puzzle"),
    path("review/<str:uid>/resolve/", review.resolve, name="review-resolve"),
    # studies: the annotator's way through, and the staff's pages
    path("s/<str:token>/", study.study_join, name="study-join"),
    path("s/<str:token>/next/", study.study_next, name="study-next"),
    path("s/<str:token>/pause/", study.study_pause, name="study-pause"),
    path("s/<str:token>/resume/<str:secret>/", study.study_resume, name="study-resume"),
    path("s/<str:token>/decline/", study.study_decline, name="study-decline"),
    path("studies/", study_staff.study_list, name="studies"),
    path("studies/new/", study_staff.study_new, name="study-new"),
    path("studies/<int:study_id>/", study_staff.study_detail, name="study"),
    path("studies/<int:study_id>/edit/", study_staff.study_edit, name="study-edit"),
    path("studies/<int:study_id>/status/", study_staff.study_status, name="study-status"),
    path("studies/<int:study_id>/preview/", study_preview.study_preview, name="study-preview"),
    path("studies/<int:study_id>/preview/next/", study_preview.study_preview_next, name="study-preview-next"),
    path(
        "studies/<int:study_id>/preview/play/<str:uid>/",
        study_preview.study_preview_play,
        name="study-preview-play",
    ),
    path("studies/<int:study_id>/annotators/", study_staff.study_annotators, name="study-annotators"),
    path(
        "studies/<int:study_id>/annotators/<int:enrollment_id>/attempts/",
        study_staff.annotator_detail,
        name="annotator-attempts",
    ),
    path(
        "studies/<int:study_id>/annotators/<int:enrollment_id>/",
        study_staff.annotator_exclusion,
        name="annotator-exclusion",
    ),
    path("studies/<int:study_id>/participants.csv", study_staff.participants_download, name="study-participants"),
    # reporting: downloads and the live dashboard
    path("studies/<int:study_id>/report.<str:fmt>", reporting.report_download, name="study-report"),
    path("studies/<int:study_id>/events.jsonl", reporting.events_download, name="study-events"),
    path("dashboard/", reporting.dashboard, name="dashboard"),
    path("dashboard/summary.json", reporting.dashboard_json, name="dashboard-json"),
    # agents: runs and their rollouts replayed turn by turn (staff)
    path("agents/", agents.runs, name="agent-runs"),
    path("agents/runs/<int:run_id>/", agents.run, name="agent-run"),
    path("agents/rollouts/<int:rollout_id>/", agents.rollout, name="agent-rollout"),
    path("agents/rollouts/<int:rollout_id>/screenshots/<int:step>.png", agents.screenshot, name="agent-screenshot"),
    # datasets: puzzle labels with filters, motion of people beside agents (staff)
    path("datasets/labels/", datasets.labels, name="dataset-labels"),
    path("datasets/motion/", datasets.motion, name="dataset-motion"),
    # jobs: heavy work on the workers, its progress and failures (staff; puzzles/jobs)
    path("jobs/", jobs.jobs, name="jobs"),
    path("jobs/<int:job_id>/cancel/", jobs.cancel, name="job-cancel"),
    path("jobs/start/generate/", jobs.start_generate, name="job-start-generate"),
    path("jobs/start/replay/", study_staff.bank_replay_start, name="job-start-replay"),
    path("studies/<int:study_id>/trajectories/", study_staff.study_trajectories_start, name="job-start-trajectories"),
]
