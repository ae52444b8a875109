"""Which posts a viewer may see: the post rules, built on ``relations.visibility``.

- A post is **live** when neither deleted by its author nor hidden by a
  moderator (``Post.objects.visible()``); only moderators see others.
- A viewer sees a live post unless its author and the viewer are blocked
  either way; a repost shows its original, so it needs a live original whose
  author is not blocked either way either.
- A post is **in the home feed** of a reader when it is live, by the reader
  or someone they follow, not by someone they muted, and, for a repost, its
  original is live and by no one they muted or are blocked with either way.

The feed rule comes in three dialects side by side: a ``Q`` (the pull-model
reference), SQL (the entries statement of ``timelines.entries``) and checks
over a ``relations.visibility.Standing`` read first (its form for a Citus
cluster, where one statement may not join users' shards);
``tests/posts/test_visibility.py`` holds them equal.
"""

from django.db.models import Q, QuerySet

from posts.models import Post
from relations import visibility


def visible_to(rows: QuerySet, viewer_id: int | None, user_field: str = "author_id") -> QuerySet:
    """``rows`` less those whose ``user_field`` user is blocked either way with the viewer."""
    if viewer_id is None:
        return rows
    return rows.exclude(visibility.blocked_either_way(viewer_id, user_field))


def may_see(viewer_id: int | None, post: Post) -> bool:
    """Whether the viewer may see this live post (its own author, not a repost's original)."""
    return (
        viewer_id is None
        or viewer_id == post.author_id
        or not visibility.is_blocked_either_way(viewer_id, post.author_id)
    )


def in_home_feed(reader_id: int) -> Q:
    """Live posts the reader's home feed may show (the ORM dialect)."""
    original_ok = (
        Q(repost_of__deleted_at__isnull=True, repost_of__hidden_at__isnull=True)
        & ~visibility.muted(reader_id, "repost_of__author_id")
        & ~visibility.blocked_either_way(reader_id, "repost_of__author_id")
    )
    return (
        Q(deleted_at__isnull=True, hidden_at__isnull=True)
        & visibility.followed_or_self(reader_id, "author_id")
        & ~visibility.muted(reader_id, "author_id")
        & (Q(repost_of__isnull=True) | original_ok)
    )


def sql_in_home_feed(post: str, original: str) -> str:
    """The same rule in SQL over a post row ``post`` LEFT JOINed to its original
    ``original``; the reader is ``%(viewer)s``."""
    return f"""(
  {post}.deleted_at IS NULL AND {post}.hidden_at IS NULL
  AND {visibility.sql_followed_or_self(f"{post}.author_id")}
  AND NOT {visibility.sql_muted(f"{post}.author_id")}
  AND ({post}.repost_of_id IS NULL OR (
         {original}.deleted_at IS NULL AND {original}.hidden_at IS NULL
         AND NOT {visibility.sql_muted(f"{original}.author_id")}
         AND NOT {visibility.sql_blocked_either_way(f"{original}.author_id")})))"""


def sql_shown_repost_of(repost: str) -> str:
    """A repost ``repost`` (a live post) by the reader or someone they follow and not muted:
    one whose newer entry makes an older one of the same original collapse into it."""
    return f"""(
  {repost}.deleted_at IS NULL AND {repost}.hidden_at IS NULL
  AND {visibility.sql_followed_or_self(f"{repost}.author_id")}
  AND NOT {visibility.sql_muted(f"{repost}.author_id")})"""


def reposts_shown_to(reader_id: int) -> Q:
    """The ORM dialect of ``sql_shown_repost_of``: whose reposts say "reposted by"."""
    return (
        Q(deleted_at__isnull=True, hidden_at__isnull=True)
        & visibility.followed_or_self(reader_id, "author_id")
        & ~visibility.muted(reader_id, "author_id")
    )


def is_live(post: Post) -> bool:
    return post.deleted_at is None and post.hidden_at is None


def shown_in_home_feed(standing: visibility.Standing, post: Post, original: Post | None) -> bool:
    """The feed rule over a standing that knows the blocks of the original's author:
    ``post`` with its ``original`` (None for a post that is not a repost, or whose
    original is gone)."""
    if not (
        is_live(post)
        and standing.followed_or_self(post.author_id)
        and not standing.is_muted(post.author_id)
    ):
        return False
    if post.repost_of_id is None:
        return True
    return (
        original is not None
        and is_live(original)
        and not standing.is_muted(original.author_id)
        and not standing.blocked_either_way(original.author_id)
    )


def is_shown_repost(standing: visibility.Standing, repost: Post) -> bool:
    """The standing's dialect of ``sql_shown_repost_of``."""
    return (
        is_live(repost)
        and standing.followed_or_self(repost.author_id)
        and not standing.is_muted(repost.author_id)
    )
