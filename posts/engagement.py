"""Who liked or reposted a post, as the API's lists page them (Mastodon's
``favourited_by`` and ``reblogged_by``; the site shows counts only).

Each is one keyset-paged query of the post's likes or live reposts, then one of
the people, less those blocked either way with the viewer (one more): the rule
of ``relations.visibility``, so blocked people see nothing of each other. A
like has no id of its own: its key (``like_key``) is its time and the liker in
a key's alphabet and width, so it pages as a status id does.
"""

from datetime import timedelta

from django.db.models import Q

from accounts.models import User
from feed_project.pagination import Cursor, Page, keyset_page, make_page
from posts import ids
from posts.models import Like, Post
from relations.visibility import blocked_among

# A like's key: its time in microseconds, then the liker; unique, as one person
# likes a post once, and ordered as likes are listed (newest first).
LIKE_TIME_WIDTH = ids.KEY_LENGTH - ids.AUTHOR_WIDTH


def like_key(like: Like) -> str:
    micros = (like.created_at - ids.EPOCH) // timedelta(microseconds=1)
    return ids.encode_number(micros, LIKE_TIME_WIDTH) + ids.encode_number(
        like.user_id, ids.AUTHOR_WIDTH
    )


def _like_bound(key: str, operator: str) -> Q:
    """Likes before (``lt``) or after (``gt``) the like of this key, as ``like_key`` orders."""
    moment = ids.EPOCH + timedelta(microseconds=ids.decode_number(key[:LIKE_TIME_WIDTH]))
    liker = ids.decode_number(key[LIKE_TIME_WIDTH:])
    return Q(**{f"created_at__{operator}": moment}) | Q(
        created_at=moment, **{f"user_id__{operator}": liker}
    )


def likers_page(
    post: Post, *, viewer_id: int | None, cursor: Cursor, limit: int = 20
) -> Page[tuple[str, User]]:
    """Who likes ``post``, newest like first, as (the like's key, the person): the likes
    by the post's id, then their people (two queries), less those blocked either way
    with the viewer (one more; so a page may hold fewer than ``limit``)."""
    likes = Like.objects.filter(post_id=post.pk)
    if cursor.after is not None:
        likes = likes.filter(_like_bound(cursor.after, "gt"))
    if cursor.before is not None:
        likes = likes.filter(_like_bound(cursor.before, "lt"))
    order = ("created_at", "user_id") if cursor.newer_pages else ("-created_at", "-user_id")
    rows = list(likes.order_by(*order).only("user_id", "created_at")[: limit + 1])
    page = make_page(rows, cursor=cursor, limit=limit, key=like_key)
    return _with_people(page, [(like_key(like), like.user_id) for like in page.items], viewer_id)


def reposters_page(
    post: Post, *, viewer_id: int | None, cursor: Cursor, limit: int = 20
) -> Page[tuple[str, User]]:
    """Who reposted ``post`` (live reposts), newest first, as (the repost's timeline key,
    the person): the reposts by ``post_reposts_idx``, then their people (two queries),
    less those blocked either way with the viewer (one more)."""
    reposts = Post.objects.visible().filter(repost_of_id=post.pk)
    page = keyset_page(
        reposts.only("id", "timeline_key", "author_id"),
        field="timeline_key",
        cursor=cursor,
        limit=limit,
    )
    return _with_people(
        page, [(repost.timeline_key, repost.author_id) for repost in page.items], viewer_id
    )


def _with_people(
    page: Page, keyed: list[tuple[str, int]], viewer_id: int | None
) -> Page[tuple[str, User]]:
    """``page`` with its items as (key, person), less people gone or blocked either way
    with the viewer; its cursors are kept, so the next page starts after what was left out."""
    people = {user.pk: user for user in User.objects.filter(pk__in={pk for _, pk in keyed})}
    blocked = blocked_among(viewer_id, set(people)) if viewer_id is not None else set()
    page.items = [(key, people[pk]) for key, pk in keyed if pk in people and pk not in blocked]
    return page
