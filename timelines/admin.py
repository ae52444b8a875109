"""Operators' view of delivery: fan-out lag per post, and who is delivered by pull."""

from django.contrib import admin

from feed_project.admin import ReadOnlyAdmin, RelatedAfterThePage
from timelines.models import FanOut, PullAuthor


@admin.register(FanOut)
class FanOutAdmin(RelatedAfterThePage, ReadOnlyAdmin):
    related_after_page = ("post",)
    list_display = ["post", "mode", "created_at", "lag", "recipients", "chunks"]
    list_filter = ["mode", ("finished_at", admin.EmptyFieldListFilter)]
    search_fields = ["post__id"]
    date_hierarchy = "created_at"
    show_full_result_count = False
    ordering = ["-created_at"]

    @admin.display(description="lag (ms)")
    def lag(self, fan_out: FanOut) -> str:
        return "unfinished" if fan_out.lag_ms is None else f"{fan_out.lag_ms:.0f}"

    @admin.display(description="chunks")
    def chunks(self, fan_out: FanOut) -> str:
        return f"{fan_out.chunks_done}/{fan_out.chunks_total}"


@admin.register(PullAuthor)
class PullAuthorAdmin(ReadOnlyAdmin):
    list_display = ["author", "since"]
    list_select_related = ["author"]
    search_fields = ["author__username"]
