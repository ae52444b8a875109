from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.utils import timezone

from accounts.models import User
from feed_project.pagination import Cursor, Page, keyset_sql, make_page
from feed_project.refusals import NotFound
from posts import ids, page_queries, quotes
from posts.media import media_by_post
from posts.models import Like, Post
from posts.visibility import may_see, sql_readable
from relations.visibility import blocked_among, sql_muted_words_of

NO_SUCH_POST = "No such post."


def get_visible_post(post_id: str) -> Post | None:
    return Post.objects.visible().select_related("author").with_id(post_id).first()


def live_post(post_id: str, *, missing: str = NO_SUCH_POST) -> Post:
    """The live post of this id, whoever asks; NotFound(``missing``) when it is gone,
    hidden or no post id (a rule that needs the post first, as its author's, builds on it)."""
    post = get_visible_post(post_id)
    if post is None:
        raise NotFound(missing)
    return post


def visible_post(*, viewer_id: int | None, post_id: str, missing: str = NO_SUCH_POST) -> Post:
    """The live post of this id, if the viewer may see it (its level, blocks either way).

    Refuses with NotFound(``missing``) otherwise: a post you may not see is, as
    far as you know, one that does not exist.
    """
    post = live_post(post_id, missing=missing)
    if not may_see(viewer_id, post):
        raise NotFound(missing)
    return post


def original_to_act_on(*, viewer_id: int | None, post_id: str, missing: str = NO_SUCH_POST) -> Post:
    """What a like, a repost, a reply or a quote of ``post_id`` acts on: the live post,
    a repost's original in its place, that the viewer may see; else NotFound(``missing``).

    Only the original is asked ``may_see``: a repost shows nothing of its own,
    and the one probe fewer keeps an action's queries as they were.
    """
    post = live_post(post_id, missing=missing)
    if post.repost_of_id:
        post = live_post(post.repost_of_id, missing=missing)
    if not may_see(viewer_id, post):
        raise NotFound(missing)
    return post


# An author's live posts the viewer may read, one page: a range of the primary key
# (author_id, id). The rule in its SQL dialect (the level; blocks either way too,
# for which the profile shows no posts anyway): as a QuerySet, building the
# statement cost more CPU than running it, on every profile page.
_AUTHOR_POSTS_SQL = """
SELECT {columns}
FROM {post} p
WHERE p.author_id = %(author)s AND p.id >= %(low)s AND p.id < %(high)s
  AND p.deleted_at IS NULL AND p.hidden_at IS NULL AND {readable}{cursor}
ORDER BY p.id {direction}
LIMIT %(limit)s
"""


def author_posts_page(
    *, author: User, cursor: Cursor, limit: int = 20, viewer_id: int | None = None
) -> Page[Post]:
    """An author's posts, newest first: a range scan of the primary key.

    Reposts come with their original and its author; those whose original is
    gone or hidden, or (for a signed-in viewer) by someone blocked either way,
    are left out (so a page may hold fewer than ``limit``). Posts whose level
    the viewer may not read are not on the page at all.
    """
    low, high = ids.post_id_range(author.pk)
    params: dict[str, object] = {
        "author": author.pk,
        "low": low,
        "high": high,
        "viewer": viewer_id,
        "limit": limit + 1,
    }
    bounds, direction = keyset_sql("p.id", cursor, params)
    sql = _AUTHOR_POSTS_SQL.format(
        columns=page_queries.columns(Post, "p"),
        post=Post._meta.db_table,
        readable=sql_readable("p", viewer_id),
        cursor=bounds,
        direction=direction,
    )
    with connection.cursor() as db:
        db.execute(sql, params)
        posts = [page_queries.from_row(Post, row) for row in db.fetchall()]
    for post in posts:
        post.author = author
    page = make_page(posts, cursor=cursor, limit=limit, key=lambda post: post.pk)
    page.items = with_originals_shown(page.items, viewer_id)
    return page


def with_originals_shown(posts: list[Post], viewer_id: int | None) -> list[Post]:
    """``posts`` with each repost's original loaded, less the reposts whose original
    the viewer may not see (gone, hidden, blocked either way), read after the
    page, so that no statement joins one author's posts to another's (one query routed by the
    originals' authors, one for blocks)."""
    wanted = {post.repost_of_id for post in posts if post.repost_of_id}
    if not wanted:
        return posts
    originals = {
        original.pk: original
        for original in Post.objects.with_ids(wanted).visible().select_related("author")
    }
    authors = {original.author_id for original in originals.values()}
    blocked = blocked_among(viewer_id, authors) if viewer_id is not None else set()
    shown = []
    for post in posts:
        if post.repost_of_id:
            original = originals.get(post.repost_of_id)
            if original is None or original.author_id in blocked:
                continue
            post.repost_of = original
        shown.append(post)
    return shown


def liked_post_ids(user: User | AnonymousUser | None, post_ids: Iterable[str]) -> set[str]:
    """Which of ``post_ids`` ``user`` likes: one range of the Like key, one query a page."""
    post_ids = list(post_ids)
    if user is None or not user.is_authenticated or not post_ids:
        return set()
    params: dict[str, object] = {"user": user.pk}
    return set(
        page_queries.column(
            f"SELECT post_id FROM {Like._meta.db_table}"
            f" WHERE user_id = %(user)s AND post_id {page_queries.among(post_ids, params)}",
            params,
        )
    )


def reposted_post_ids(user: User | AnonymousUser | None, post_ids: Iterable[str]) -> set[str]:
    """Which of ``post_ids`` ``user`` has a live repost of: one scan of their own posts."""
    post_ids = list(post_ids)
    if user is None or not user.is_authenticated or not post_ids:
        return set()
    low, high = ids.post_id_range(user.pk)
    params: dict[str, object] = {"user": user.pk, "low": low, "high": high}
    return set(
        page_queries.column(
            f"SELECT repost_of_id FROM {Post._meta.db_table}"
            " WHERE author_id = %(user)s AND id >= %(low)s AND id < %(high)s"
            f" AND repost_of_id {page_queries.among(post_ids, params)} AND deleted_at IS NULL",
            params,
        )
    )


def viewer_marks(user: User | AnonymousUser | None, posts: Iterable[Post]) -> dict[str, Any]:
    """The template context of what the viewer did to these posts (two queries a page),
    and the posts' images (``post_media``, one query).

    Also what the posts quote, as the viewer may see it (``quoted_posts``,
    posts.quotes: one query more when the page holds a quote), and whom its
    replies answer (``reply_names``: one query more when a reply's parent is
    not on the page). None of it is kept on the posts: a feed's are shared by
    every reader (timelines.home._held_posts).
    """
    posts = list(posts)
    post_ids = [post.pk for post in posts]
    viewer_id = user.pk if user is not None and user.is_authenticated else None
    return {
        "liked_ids": liked_post_ids(user, post_ids),
        "reposted_ids": reposted_post_ids(user, post_ids),
        "post_media": media_by_post(posts),
        "quoted_posts": quotes.quoted_posts(posts, viewer_id=viewer_id),
        "reply_names": reply_names(posts, viewer_id=viewer_id),
    }


def reply_names(posts: Iterable[Post], *, viewer_id: int | None) -> dict[str, str | None]:
    """Whom each reply on the page answers, by the parent's id: its author's username,
    or None when the viewer may not see the parent (deleted, hidden, blocked either way,
    or a level not for them), for "replying to @name" (``posts.post_html.render_post``).

    A parent on the page costs nothing (the viewer sees it; its author came with
    it). The rest are one query whatever the page holds, routed by the ids'
    authors, with the same rule as any list (``readable``, in SQL), and
    none on a page without such replies.
    """
    posts = list(posts)
    author = Post._meta.get_field("author")
    names: dict[str, str | None] = {
        post.pk: post.author.username for post in posts if author.is_cached(post)
    }
    missing = {
        post.in_reply_to_id
        for post in posts
        if post.in_reply_to_id and post.in_reply_to_id not in names
    }
    if missing:
        names.update(_readable_authors(sorted(missing), viewer_id))
        names.update((parent_id, None) for parent_id in missing if parent_id not in names)
    return names


def _readable_authors(post_ids: list[str], viewer_id: int | None) -> list[tuple[str, str]]:
    """(id, author's username) of those of these posts the viewer may read, live: plain
    SQL, as the ORM's QuerySet of the rule costs more than the query itself on every page."""
    params: dict[str, object] = {"viewer": viewer_id}
    sql = page_queries.by_ids(post_ids, params, columns="p.id, a.username") + (
        f"  AND p.deleted_at IS NULL AND p.hidden_at IS NULL AND {sql_readable('p', viewer_id)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@dataclass
class Entry:
    """A post as a list shows it: the original, and who reposted it."""

    post: Post
    reposted_by: list[User] = field(default_factory=list)


@dataclass
class Thread:
    """A detail page: the post's ancestors (oldest first; None where one is not
    shown: deleted, hidden or blocked), the post, and a page of its replies."""

    post: Post
    ancestors: list[Post | None]
    replies: Page[Post]


def ancestors_of(post: Post, *, viewer_id: int | None) -> list[Post | None]:
    """The posts ``post`` replies to, oldest first, up to MAX_ANCESTORS: by the ids the
    reply keeps (``Post.ancestry``), each routed by its author, then which of them the
    viewer may read (``_readable_authors``, the rule in SQL): two statements.

    The chain goes on through deleted or hidden posts, which come back as None,
    as do posts of people blocked either way and posts of a level not for the
    viewer; it ends at a post erased for good.
    """
    if post.in_reply_to_id is None:
        return []
    found = {row.pk: row for row in page_queries.posts_with_authors(post.ancestor_ids)}
    readable = {post_id for post_id, _ in _readable_authors(list(found), viewer_id)}
    ancestors: list[Post | None] = []
    for parent_id in reversed(post.ancestor_ids):
        parent = found.get(parent_id)
        if parent is None:
            break
        shown = parent_id in readable and not parent.repost_of_id
        ancestors.append(parent if shown else None)
    ancestors.reverse()
    return ancestors


# A page of a post's live replies the viewer may read (``readable``, less their
# muted words), by timeline key: a post_replies_idx (in_reply_to, timeline_key)
# range. The rule in its SQL dialect: as a QuerySet, building the statement cost
# more CPU than running it, on every detail page.
_REPLIES_SQL = """
SELECT {columns}
FROM {post} p
JOIN {user} a ON a.id = p.author_id
WHERE p.in_reply_to_id = %(parent)s AND p.deleted_at IS NULL AND p.hidden_at IS NULL
  AND {readable}{unmuted}{cursor}
ORDER BY p.timeline_key {direction}
LIMIT %(limit)s
"""


def replies_page(
    post: Post, *, viewer_id: int | None, cursor: Cursor, limit: int = 20
) -> Page[Post]:
    """A post's live replies, newest first, that the viewer may read (their level, and
    not by people blocked either way), less those with the viewer's muted words."""
    params: dict[str, object] = {"parent": post.pk, "viewer": viewer_id, "limit": limit + 1}
    unmuted = ""
    if viewer_id is not None:
        params["now"] = timezone.now()
        muted = sql_muted_words_of(viewer_id, params, "p.text", "p.spoiler_text")
        unmuted = f" AND NOT {muted}"
    bounds, direction = keyset_sql("p.timeline_key", cursor, params)
    sql = _REPLIES_SQL.format(
        columns=page_queries.post_and_author_columns("p", "a"),
        post=Post._meta.db_table,
        user=User._meta.db_table,
        readable=sql_readable("p", viewer_id),
        unmuted=unmuted,
        cursor=bounds,
        direction=direction,
    )
    with connection.cursor() as db:
        db.execute(sql, params)
        replies = [page_queries.post_of(row) for row in db.fetchall()]
    return make_page(replies, cursor=cursor, limit=limit, key=lambda reply: reply.timeline_key)


def thread(post: Post, *, viewer_id: int | None, cursor: Cursor) -> Thread:
    """The detail page of ``post``: two queries, whatever the thread holds."""
    return Thread(
        post=post,
        ancestors=ancestors_of(post, viewer_id=viewer_id),
        replies=replies_page(post, viewer_id=viewer_id, cursor=cursor),
    )


def profile_entries(items: list[Post], *, owner: User) -> list[Entry]:
    """A profile's posts as shown: a repost is its original, "reposted by" the owner."""
    return [
        Entry(post=post.repost_of, reposted_by=[owner]) if post.repost_of_id else Entry(post=post)
        for post in items
    ]
