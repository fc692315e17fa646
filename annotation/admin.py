"""Staff admin for participants and attempts: read-only records of what the server scored."""

from django.contrib import admin

from annotation.models import Attempt, Participant


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

    def has_add_permission(self, request):
        return False
