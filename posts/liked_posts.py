"""The posts a person liked, the latest liked first (the API's favourites).

A liker's likes are one range of ``like_time_idx`` (user, like time, post), paged
by keyset, never by offset; a page's cursor is the like's place in that order as
one decimal number, as Mastodon's clients expect of an id. The posts come in one
more query, with the rule of who may read what (``posts.visibility.readable``):
a post liked once and gone, hidden or no longer readable since is left out.
"""

from datetime import timedelta
from typing import Any

from django.db.models import Q

from accounts.models import User
from feed_project.pagination import Cursor, Page, make_page
from posts import ids
from posts.models import Like, Post
from posts.visibility import readable

# A like's place in its liker's list: the like's time in microseconds since the ids'
# epoch, then the post's timeline key as a number, as one decimal (keys fit in
# KEY_DIGITS digits).
KEY_DIGITS = 25
MAX_LIKE_CURSOR_DIGITS = 40


def like_cursor(like: Like) -> str:
    """The cursor of a like in its liker's list, newest liked highest."""
    micros = (like.created_at - ids.EPOCH) // timedelta(microseconds=1)
    key = int(ids.decimal_of_key(ids.post_id_to_timeline_key(like.post_id)))
    return str(micros * 10**KEY_DIGITS + key)


def is_like_cursor(text: object) -> bool:
    return (
        isinstance(text, str)
        and text.isascii()
        and text.isdigit()
        and len(text) <= MAX_LIKE_CURSOR_DIGITS
    )


def _like_bound(cursor: str) -> tuple[Any, str]:
    """(the like's time, its post id) of a cursor ``is_like_cursor`` accepted."""
    micros, key = divmod(int(cursor), 10**KEY_DIGITS)
    moment = ids.EPOCH + timedelta(microseconds=micros)
    try:
        post_id = ids.timeline_key_to_post_id(ids.key_of_decimal(str(key)))
    except ids.InvalidKey:
        post_id = "0" * ids.KEY_LENGTH
    return moment, post_id


def liked_posts_page(*, user: User, cursor: Cursor, limit: int = 20) -> Page[tuple[str, Post]]:
    """The posts ``user`` liked, the latest liked first, as (like cursor, post): two queries.

    A keyset of the liker's rows by (like time, post id), one range of
    ``like_time_idx``; then the posts, less those gone, hidden, blocked either
    way or no longer readable at their level by the liker (so a page may hold
    fewer than ``limit``).
    """
    rows = Like.objects.filter(user_id=user.pk)
    for end, before in ((cursor.before, True), (cursor.after, False)):
        if end is None:
            continue
        moment, post_id = _like_bound(end)
        # The time's bound alone as well, so that it bounds the index's range scan.
        if before:
            rows = rows.filter(created_at__lte=moment).filter(
                Q(created_at__lt=moment) | Q(created_at=moment, post_id__lt=post_id)
            )
        else:
            rows = rows.filter(created_at__gte=moment).filter(
                Q(created_at__gt=moment) | Q(created_at=moment, post_id__gt=post_id)
            )
    order = ("created_at", "post_id") if cursor.newer_pages else ("-created_at", "-post_id")
    likes = list(rows.order_by(*order)[: limit + 1])
    page = make_page(likes, cursor=cursor, limit=limit, key=like_cursor)
    wanted = [like.post_id for like in page.items]
    posts = (
        readable(Post.objects.with_ids(wanted).visible(), user.pk)
        .select_related("author")
        .in_bulk()
        if wanted
        else {}
    )
    items = [
        (like_cursor(like), posts[like.post_id]) for like in page.items if like.post_id in posts
    ]
    return Page(items=items, older=page.older, newer=page.newer)
