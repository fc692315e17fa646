from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "puzzles.jobs"
    label = "jobs"
    verbose_name = "Jobs on the workers"
    default_auto_field = "django.db.models.BigAutoField"
