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
    list_display = ("uid", "type", "split", "source_id", "dataset", "status", "created_at")
    list_filter = ("type", "split", "status", "dataset")
    search_fields = ("uid", "source_id")
    readonly_fields = ("uid", "type", "split", "dataset", "source_id", "index", "public", "truth", "created_at")
    exclude = ("masks",)
    inlines = [AssetInline]


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
        return format_html('<img src="{}" style="max-width: 640px; border: 1px solid #ccc">', url)
