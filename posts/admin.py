"""Admin for posts: find, redact and delete them.

The moderation actions (hide, restore), the report queue, the log and the
user suspensions live in ``posts.moderation.admin``; importing it here is
what registers them when the admin autodiscovers ``posts.admin``.
"""

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.text import Truncator

from posts.media_admin import PostMediaInline
from posts.models import Post, PostTag, TrendingTag
from posts.moderation.admin import ModeratorOnlyAdmin, PostModerationActions
from posts.services import delete_post


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
class PostAdmin(PostModerationActions, admin.ModelAdmin):
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
    # Newest first across authors (ids sort by author first); served by the
    # timeline key's unique index.
    ordering = ("-timeline_key",)
    # COUNT(*) over the posts table on every changelist page is too slow.
    show_full_result_count = False
    raw_id_fields = ("author",)
    readonly_fields = (
        *("id", "timeline_key", "author", "created_at", "deleted_at"),
        *("hidden_at", "hidden_reason", "hashtags"),
    )
    fields = (
        *("id", "timeline_key", "author", "created_at", "deleted_at"),
        *("hidden_at", "hidden_reason", "spoiler_text", "text", "hashtags"),
    )
    actions = ("delete_posts", "hide_posts", "restore_posts")
    inlines = (PostMediaInline,)  # the post's images, hidden posts' too

    @admin.display(description="hashtags")
    def hashtags(self, post: Post) -> str:
        """The post's tags (PostTag has a composite key: no admin list of its own)."""
        tags = PostTag.objects.filter(author_id=post.author_id, post_id=post.pk)
        return " ".join(f"#{tag}" for tag in tags.values_list("tag", flat=True)) or "-"

    @admin.display(description="text")
    def short_text(self, post: Post) -> str:
        return Truncator(post.text).chars(60)

    @admin.action(
        description="Delete selected posts (they leave every feed)", permissions=["change"]
    )
    def delete_posts(self, request: HttpRequest, queryset: QuerySet[Post]) -> None:
        deleted = sum(delete_post(post=post) for post in queryset)
        self.message_user(request, f"Deleted {deleted} post(s).", messages.SUCCESS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(TrendingTag)
class TrendingTagAdmin(ModeratorOnlyAdmin):
    """The trending tags as the periodic task last computed them."""

    list_display = ("rank", "tag", "authors", "computed_at")
    ordering = ("rank",)
