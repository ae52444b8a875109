"""Admin for post images: moderators see every image, hidden posts' included.

The previews are the site's own image URLs (``posts.media_views``), which
answer moderators for hidden posts too. Images come and go with their post
(``posts.services``): nothing is added or deleted here; the alt text can be
redacted, as a post's text can.
"""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from posts.models import PostMedia

_READ_ONLY = (
    *("preview", "post", "author", "position", "content_type", "width", "height"),
    *("size", "file", "thumbnail", "created_at", "discarded_at"),
)


def _preview(item: PostMedia) -> SafeString:
    if item.post_id is None:  # an upload no post named yet: no page shows it
        return format_html("<em>{}</em>", "not attached to a post yet")
    return format_html(
        '<a href="{}"><img src="{}" alt="{}" width="{}" height="{}"></a>',
        reverse("posts:media", args=[item.post_id, item.position]),
        reverse("posts:media_thumbnail", args=[item.post_id, item.position]),
        item.alt_text,
        item.thumbnail_width // 4,
        item.thumbnail_height // 4,
    )


class PostMediaInline(admin.TabularInline):
    model = PostMedia
    fields = ("preview", "position", "alt_text", "content_type", "width", "height")
    readonly_fields = ("preview", "position", "content_type", "width", "height")
    extra = 0
    can_delete = False

    @admin.display(description="image")
    def preview(self, item: PostMedia) -> SafeString:
        return _preview(item)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(PostMedia)
class PostMediaAdmin(admin.ModelAdmin):
    list_display = ("preview", "post", "author", "position", "short_alt_text", "content_type")
    list_display_links = ("post",)
    list_filter = ("content_type",)
    search_fields = ("=post__id", "=author__username")
    list_select_related = ("author",)
    show_full_result_count = False
    raw_id_fields = ("author", "post")
    readonly_fields = _READ_ONLY
    fields = (*_READ_ONLY, "alt_text")

    @admin.display(description="image")
    def preview(self, item: PostMedia) -> SafeString:
        return _preview(item)

    @admin.display(description="alt text")
    def short_alt_text(self, item: PostMedia) -> str:
        return Truncator(item.alt_text).chars(60)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
