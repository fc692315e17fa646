"""Staff admin: studies and enrolments (set up and run from the studies pages; here for search and
the record), participants, and read-only records of what the server scored."""

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from annotation.models import Attempt, Enrollment, EnvToken, Participant, Study
from annotation.studies.study_settings import CONSENT, CROWD, RECORD, SETUP, STUDY, in_section

# The set-up: shown for the record, changed on the study's page while a draft (it draws the pool).
SETUP_FIELDS = in_section(SETUP)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    """A study's wording and crowd settings are editable here; its pool, rules and status are set
    on its own page (/studies/<id>/), which draws the pool, keeps the places and logs each change."""

    list_display = ("name", "status", "split", "dataset", "puzzles_per_annotator", "overlap", "created_at")
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_filter = ("status", "split")
    search_fields = ("name", "token", "completion_code")
    readonly_fields = (*RECORD, *SETUP_FIELDS)
    fieldsets = (
        (STUDY, {"fields": (*in_section(STUDY), *RECORD)}),
        (CROWD, {"fields": in_section(CROWD)}),
        (CONSENT, {"fields": in_section(CONSENT)}),
        (SETUP, {"fields": SETUP_FIELDS}),
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made on /studies/new/, which draws its pool


@admin.register(Enrollment)
class EnrollmentAdmin(admin.ModelAdmin):
    list_display = ("participant", "study", "crowd_id", "joined_at", "finished_at", "excluded")
    list_filter = ("excluded", "study")
    search_fields = ("crowd_id", "participant__user__username", "study__name")
    readonly_fields = [f.name for f in Enrollment._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = ("user", "kind", "label", "created_at")
    list_filter = ("kind",)


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    """Attempts as the server scored them; nothing here is editable (the events are the record)."""

    list_display = (
        "uid",
        "participant",
        "puzzle",
        "submitted_at",
        "correct",
        "reward",
        "wall_ms",
        "active_ms",
        "action_count",
        "clock_ok",
    )
    list_filter = ("participant__kind", "correct", "clock_ok", "puzzle__type")
    search_fields = ("uid", "participant__user__username")
    readonly_fields = [f.name for f in Attempt._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(EnvToken)
class EnvTokenAdmin(admin.ModelAdmin):
    """Trainers' keys to the environment: made by `manage.py env token` (the key is shown once,
    only its hash kept); revoked here, after which the key opens nothing."""

    list_display = ("name", "datasets", "created_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name",)
    readonly_fields = ("name", "key_hash", "datasets", "created_at", "revoked_at")
    actions = ("revoke",)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[EnvToken]) -> None:
        revoked = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{revoked} token(s) revoked.")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # `manage.py env token` makes them and shows the key once
