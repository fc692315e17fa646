from django.contrib import admin

from puzzles.models import Asset, Puzzle


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
