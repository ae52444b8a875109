"""Reading the home feed.

``pull_reference_keys`` is the pull model of DESIGN.md written as plainly as
possible: it is the reference every other path is tested against, and the
fallback when the others cannot answer.
"""

from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Q

from accounts.models import User
from feed_project.pagination import BadCursor, Cursor, Page, make_page
from posts import ids
from posts.models import Post
from posts.selectors import posts_by_ids
from relations.models import Followee


@dataclass
class FeedItem:
    """One entry of a feed: a post, and who of the people you follow reposted it."""

    key: str
    post: Post
    reposted_by: list[User] = field(default_factory=list)


def check_cursor(cursor: Cursor) -> None:
    for value in (cursor.before, cursor.after):
        if value is not None and not ids.is_timeline_key(value):
            raise BadCursor("not a timeline key")


def page_size(limit: int | None) -> int:
    if limit is None:
        return settings.FEED_PAGE_SIZE
    return max(1, min(limit, settings.FEED_MAX_PAGE_SIZE))


def pull_reference_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """Timeline keys of the reader's feed by the pull model, in scan order.

    Posts by the accounts the reader follows now, plus the reader's own,
    minus deleted posts, ordered by timeline key.
    """
    followees = Followee.objects.filter(user_id=reader_id).values("followee_id")
    posts = Post.objects.visible().filter(Q(author_id__in=followees) | Q(author_id=reader_id))
    if cursor.newer_pages:
        posts = posts.filter(timeline_key__gt=cursor.after).order_by("timeline_key")
    else:
        if cursor.before is not None:
            posts = posts.filter(timeline_key__lt=cursor.before)
        posts = posts.order_by("-timeline_key")
    return list(posts.values_list("timeline_key", flat=True)[:limit])


def hydrate(keys: list[str]) -> list[FeedItem]:
    """Join timeline keys to live posts in one query, keeping their order."""
    posts = posts_by_ids(ids.timeline_key_to_post_id(key) for key in keys)
    items = []
    for key in keys:
        post = posts.get(ids.timeline_key_to_post_id(key))
        if post is not None:
            items.append(FeedItem(key=key, post=post))
    return items


def home_feed(*, reader: User, cursor: Cursor, limit: int | None = None) -> Page[FeedItem]:
    """One page of the reader's home feed, newest first."""
    check_cursor(cursor)
    limit = page_size(limit)
    keys = pull_reference_keys(reader_id=reader.pk, cursor=cursor, limit=limit + 1)
    return make_page(hydrate(keys), cursor=cursor, limit=limit, key=lambda item: item.key)
