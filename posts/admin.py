"""Admin for posts and moderation: hide and restore posts, the report queue, the log.

Moderation actions need the ``posts.moderate`` permission (staff who lack it
neither see nor run them); they go through ``posts.moderation``, which logs
each one.
"""

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from feed_project.admin import ReadOnlyAdmin
from posts import moderation
from posts.models import ModerationLog, Post, Report
from posts.services import delete_post

MODERATE = "posts.moderate"


def is_moderator(request: HttpRequest) -> bool:
    return request.user.is_active and request.user.has_perm(MODERATE)


class DeletedFilter(admin.SimpleListFilter):
    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "No"), ("yes", "Yes")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Post]) -> QuerySet[Post]:
        if self.value() == "no":
            return queryset.filter(deleted_at__isnull=True)
        if self.value() == "yes":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


class HiddenFilter(admin.SimpleListFilter):
    title = "hidden"
    parameter_name = "hidden"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "No"), ("yes", "Yes"), *Post.HiddenReason.choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Post]) -> QuerySet[Post]:
        value = self.value()
        if value == "no":
            return queryset.filter(hidden_at__isnull=True)
        if value == "yes":
            return queryset.filter(hidden_at__isnull=False)
        if value in Post.HiddenReason.values:
            return queryset.filter(hidden_at__isnull=False, hidden_reason=value)
        return queryset


@admin.register(Post)
class PostAdmin(admin.ModelAdmin):
    """Posts are written by ``posts.services`` only.

    Adding here would skip the id codec, the author's counter and fan-out;
    changing the author would break the id prefix; the admin's own delete
    would drop the row (and free its id) without fixing the counter. So only
    the text can be edited (redaction), and deleting is the "Delete posts"
    action, which calls ``delete_post`` for each post.
    """

    list_display = ("id", "author", "short_text", "created_at", "deleted_at", "hidden_at")
    list_filter = (DeletedFilter, HiddenFilter)
    # "=" makes the username an exact, indexed match; the text is a scan.
    search_fields = ("text", "=author__username")
    list_select_related = ("author",)
    # COUNT(*) over the posts table on every changelist page is too slow.
    show_full_result_count = False
    raw_id_fields = ("author",)
    readonly_fields = (
        *("id", "timeline_key", "author", "created_at", "deleted_at"),
        *("hidden_at", "hidden_reason"),
    )
    fields = (
        *("id", "timeline_key", "author", "created_at", "deleted_at"),
        *("hidden_at", "hidden_reason", "text"),
    )
    actions = ("delete_posts", "hide_posts", "restore_posts")

    @admin.display(description="text")
    def short_text(self, post: Post) -> str:
        return Truncator(post.text).chars(60)

    @admin.action(
        description="Delete selected posts (they leave every feed)", permissions=["change"]
    )
    def delete_posts(self, request: HttpRequest, queryset: QuerySet[Post]) -> None:
        deleted = sum(delete_post(post=post) for post in queryset)
        self.message_user(request, f"Deleted {deleted} post(s).", messages.SUCCESS)

    def has_moderate_permission(self, request: HttpRequest) -> bool:
        return is_moderator(request)

    @admin.action(
        description="Hide selected posts (from everyone but moderators)", permissions=["moderate"]
    )
    def hide_posts(self, request: HttpRequest, queryset: QuerySet[Post]) -> None:
        hidden = sum(moderation.hide_post(moderator=request.user, post=post) for post in queryset)
        self.message_user(request, f"Hid {hidden} post(s).", messages.SUCCESS)

    @admin.action(description="Restore selected hidden posts", permissions=["moderate"])
    def restore_posts(self, request: HttpRequest, queryset: QuerySet[Post]) -> None:
        restored = sum(
            moderation.restore_post(moderator=request.user, post=post) for post in queryset
        )
        self.message_user(request, f"Restored {restored} post(s).", messages.SUCCESS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ModeratorOnlyAdmin(ReadOnlyAdmin):
    """Seen by moderators only, and never edited by hand: services write these rows."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_moderator(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_moderator(request)

    def has_moderate_permission(self, request: HttpRequest) -> bool:
        return is_moderator(request)


@admin.register(Report)
class ReportAdmin(ModeratorOnlyAdmin):
    """The report queue: open reports first, newest first (report_queue_idx)."""

    list_display = (
        *("created_at", "status", "reporter", "user", "post_link", "reason"),
        *("action", "resolved_by", "resolved_at"),
    )
    list_filter = ("status",)
    list_select_related = ("reporter", "user", "post", "resolved_by")
    # "open" sorts after "actioned" and "dismissed": descending puts it first.
    ordering = ("-status", "-created_at")
    actions = ("hide_reported_posts", "suspend_reported_users", "dismiss_reports")

    @admin.display(description="post")
    def post_link(self, report: Report) -> str:
        if report.post is None:
            return "(profile)"
        return Truncator(report.post.text).chars(60) or report.post_id

    def _resolve(self, request: HttpRequest, queryset: QuerySet[Report], action: str) -> int:
        done = 0
        for report in queryset.filter(status=Report.Status.OPEN).select_related("post", "user"):
            if action == moderation.HIDE_POST and report.post is None:
                continue
            done += moderation.resolve_report(moderator=request.user, report=report, action=action)
        return done

    @admin.action(description="Hide the reported posts", permissions=["moderate"])
    def hide_reported_posts(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        done = self._resolve(request, queryset, moderation.HIDE_POST)
        self.message_user(request, f"Hid the posts of {done} report(s).", messages.SUCCESS)

    @admin.action(description="Suspend the reported users", permissions=["moderate"])
    def suspend_reported_users(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        done = self._resolve(request, queryset, moderation.SUSPEND_USER)
        self.message_user(request, f"Suspended the users of {done} report(s).", messages.SUCCESS)

    @admin.action(description="Dismiss the reports", permissions=["moderate"])
    def dismiss_reports(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        done = self._resolve(request, queryset, moderation.DISMISS_REPORT)
        self.message_user(request, f"Dismissed {done} report(s).", messages.SUCCESS)


@admin.register(ModerationLog)
class ModerationLogAdmin(ModeratorOnlyAdmin):
    """Every moderation action, read-only."""

    list_display = ("created_at", "moderator", "action", "post", "user", "note")
    list_filter = ("action",)
    list_select_related = ("moderator", "post", "user")
    search_fields = ("=moderator__username", "=user__username", "note")
    ordering = ("-created_at", "-pk")
    raw_id_fields = ("post", "user", "moderator")
