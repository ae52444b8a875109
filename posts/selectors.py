from collections.abc import Iterable

from accounts.models import User
from feed_project.pagination import BadCursor, Cursor, Page, make_page
from posts import ids
from posts.models import Post


def get_visible_post(post_id: str) -> Post | None:
    if not ids.is_timeline_key(post_id):  # same alphabet and length as a post id
        return None
    return Post.objects.visible().select_related("author").filter(pk=post_id).first()


def posts_by_ids(post_ids: Iterable[str]) -> dict[str, Post]:
    """Live posts with their authors, one query, keyed by id."""
    return {
        post.pk: post
        for post in Post.objects.visible().select_related("author").filter(pk__in=list(post_ids))
    }


def author_posts_page(*, author: User, cursor: Cursor, limit: int = 20) -> Page[Post]:
    """An author's posts, newest first: a range scan of the primary key."""
    for value in (cursor.before, cursor.after):
        if value is not None and not ids.is_timeline_key(value):
            raise BadCursor("not a post id")
    posts = Post.objects.visible().by_author(author.pk).select_related("author")
    if cursor.newer_pages:
        posts = posts.filter(pk__gt=cursor.after).order_by("pk")
    else:
        if cursor.before is not None:
            posts = posts.filter(pk__lt=cursor.before)
        posts = posts.order_by("-pk")
    return make_page(list(posts[: limit + 1]), cursor=cursor, limit=limit, key=lambda p: p.pk)
