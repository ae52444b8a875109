"""Every moderation action of the admin, and the report queue and log.

Moderation actions need the ``posts.moderate`` permission (staff who lack it
neither see nor run them); they go through ``posts.moderation.services``,
which logs each one. ``posts.admin`` imports this module, so the admin's
autodiscovery registers what is here.

Suspending and unsuspending users are actions on the user admin: this module
extends the relations app's user admin (itself the accounts one) with them
and registers the result in its place, so ``accounts`` and ``relations``
know nothing of moderation.
"""

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from accounts.models import User
from feed_project.admin import ReadOnlyAdmin, RelatedAfterThePage
from posts.models import ModerationLog, Post, Report
from posts.moderation import services as moderation
from relations.admin import FollowGraphUserAdmin


def is_moderator(request: HttpRequest) -> bool:
    return moderation.is_moderator(request.user)


class PostModerationActions:
    """Hide and restore, for the posts admin (``posts.admin.PostAdmin``)."""

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


class ModeratorOnlyAdmin(ReadOnlyAdmin):
    """Seen by moderators only, and never edited by hand: services write these rows."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return is_moderator(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_moderator(request)

    def has_moderate_permission(self, request: HttpRequest) -> bool:
        return is_moderator(request)


@admin.register(Report)
class ReportAdmin(RelatedAfterThePage, ModeratorOnlyAdmin):
    """The report queue: open reports first, newest first (report_queue_idx)."""

    list_display = (
        *("created_at", "status", "reporter", "user", "post_link", "reason"),
        *("action", "resolved_by", "resolved_at"),
    )
    list_filter = ("status",)
    related_after_page = ("reporter", "user", "post", "resolved_by")
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
        for report in queryset.filter(status=Report.Status.OPEN).prefetch_related("post", "user"):
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
class ModerationLogAdmin(RelatedAfterThePage, ModeratorOnlyAdmin):
    """Every moderation action, read-only."""

    list_display = ("created_at", "moderator", "action", "post", "user", "note")
    list_filter = ("action",)
    related_after_page = ("moderator", "post", "user")
    search_fields = ("=moderator__username", "=user__username", "note")
    ordering = ("-created_at", "-pk")
    raw_id_fields = ("post", "user", "moderator")


class ModerationUserAdmin(FollowGraphUserAdmin):
    """The user admin (accounts, then relations' follow graph) plus suspend and unsuspend."""

    actions = ("suspend_users", "unsuspend_users")

    def has_moderate_permission(self, request: HttpRequest) -> bool:
        return is_moderator(request)

    @admin.action(
        description="Suspend selected users (no log-in, posts hidden)", permissions=["moderate"]
    )
    def suspend_users(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        # A moderator suspending themselves would lock the queue's last worker out.
        users = queryset.exclude(pk=request.user.pk)
        done = sum(moderation.suspend_user(moderator=request.user, user=user) for user in users)
        self.message_user(request, f"Suspended {done} user(s).", messages.SUCCESS)

    @admin.action(
        description="Unsuspend selected users (their suspended posts come back)",
        permissions=["moderate"],
    )
    def unsuspend_users(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        done = sum(
            moderation.unsuspend_user(moderator=request.user, user=user) for user in queryset
        )
        self.message_user(request, f"Unsuspended {done} user(s).", messages.SUCCESS)


# relations.admin registered FollowGraphUserAdmin when it was imported (above).
admin.site.unregister(User)
admin.site.register(User, ModerationUserAdmin)
