"""The bank in the admin: puzzles (with their provenance), their assets and replay checks."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from puzzles.models import Asset, Puzzle, ReplayCheck


class AssetInline(admin.TabularInline):
    model = Asset
    extra = 0
    readonly_fields = ("key", "file", "width", "height")
    can_delete = False


@admin.register(Puzzle)
class PuzzleAdmin(admin.ModelAdmin):
    list_display = ("uid", "type", "split", "source_id", "dataset", "truth_public", "status", "created_at")
    list_filter = ("type", "split", "status", "truth_public", "dataset")
    search_fields = ("uid", "source_id")
    readonly_fields = ("uid", "type", "split", "dataset", "source_id", "index", "public", "truth", "created_at")
    exclude = ("masks",)
    inlines = [AssetInline]
    # truth_public stays editable: staff may clear it for an import whose answers were never published.


@admin.register(ReplayCheck)
class ReplayCheckAdmin(admin.ModelAdmin):
    list_display = ("puzzle", "verified", "reason", "seconds", "created_at")
    list_filter = ("verified", "puzzle__type")
    readonly_fields = ("puzzle", "verified", "reason", "attempt_uid", "page_at_failure", "seconds", "created_at")
    exclude = ("screenshot",)

    @admin.display(description="page at failure")
    def page_at_failure(self, check):
        if not check.screenshot:
            return "-"
        url = reverse("puzzles:replay-screenshot", args=[check.pk])
        return format_html('<img src="{}" width="640" alt="the page when the replay failed">', url)  # no style=: CSP
