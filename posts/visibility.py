"""Which posts a viewer may see: the post rules, built on ``relations.visibility``.

- A post is **live** when neither deleted by its author nor hidden by a
  moderator (``Post.objects.visible()``); only moderators see others.
- A viewer sees a live post unless its author and the viewer are blocked
  either way; a repost shows its original, so it needs a live original whose
  author is not blocked either way either.
- A post's **level** (``Post.visibility``) narrows who may read it: public
  and unlisted posts anyone (unlisted ones stay out of the *listings*:
  search, tag pages, the public timeline); followers-only posts the author
  and their followers; direct posts the author and the people they address
  (``Post.recipients``). Signed out, public and unlisted only. Only public
  and unlisted posts may be reposted or quoted (``Post.may_be_shared``).
- A post is **in the home feed** of a reader when it is live, by the reader
  or someone they follow, not by someone they muted, not a direct post
  unless by or to the reader (a followers-only post passes: the reader
  follows its author), its text and content warning have none of the reader's
  muted words, and,
  for a repost, its original is live, public or unlisted, by no one they
  muted or are blocked with either way, with none of those words, and the
  reposter's reposts are not hidden by the reader (``Followee.hide_reposts``).

The feed rule comes in three dialects side by side: a ``Q`` (the pull-model
reference), SQL (the entries statement of ``timelines.home._items``) and checks
over a ``relations.visibility.Standing`` read first (its form for a Citus
cluster, where one statement may not join users' shards);
``tests/posts/test_visibility.py`` holds them equal.
"""

from django.db.models import Exists, Q, QuerySet

from posts.models import Post, Visibility
from relations import visibility

OPEN = (Visibility.PUBLIC.value, Visibility.UNLISTED.value)
_DIRECT = Visibility.DIRECT.value
_FOLLOWERS = Visibility.FOLLOWERS.value
_SQL_OPEN = ", ".join(f"'{level}'" for level in OPEN)


def recipients_field(user_ids) -> str:
    """``Post.recipients`` of these readers: " 3 17 " (sorted, each once), or ""."""
    unique = sorted(set(user_ids))
    return f" {' '.join(str(user_id) for user_id in unique)} " if unique else ""


def _needle(viewer_id: int) -> str:
    return f" {viewer_id} "


# --- the level: who may read a post, blocks aside ------------------------------------


def level_allows(viewer_id: int | None, post: Post, *, follows_author: bool) -> bool:
    """Whether the post's level lets the viewer read it (the Python dialect), given
    whether they follow its author."""
    if post.visibility in OPEN:
        return True
    if viewer_id is None:
        return False
    if viewer_id == post.author_id:
        return True
    if post.visibility == _FOLLOWERS:
        return follows_author
    return _needle(viewer_id) in post.recipients


def readable_by(viewer_id: int | None, author_field: str = "author_id") -> Q:
    """Posts whose level lets the viewer read them (the ORM dialect of ``level_allows``)."""
    open_levels = Q(visibility__in=OPEN)
    if viewer_id is None:
        return open_levels
    followed = visibility.followed_or_self(viewer_id, author_field)
    return (
        open_levels
        | Q(**{author_field: viewer_id})
        | (Q(visibility=_FOLLOWERS) & followed)
        | Q(visibility=_DIRECT, recipients__contains=_needle(viewer_id))
    )


def listed() -> Q:
    """Posts that search, tag pages and the public timeline list: public ones."""
    return Q(visibility=Visibility.PUBLIC)


# What a muted word is looked for in: a post's text and its content warning.
MUTED_WORD_FIELDS = ("text", "spoiler_text")


def _muted_words_in(viewer_id: int, post_path: str = "") -> Exists:
    """Posts (at ``post_path``, "" or "repost_of__") with a muted word of the viewer's."""
    fields = (f"{post_path}{name}" for name in MUTED_WORD_FIELDS)
    return visibility.muted_words_match(viewer_id, *fields)


def without_muted_words(rows: QuerySet, viewer_id: int | None, post_path: str = ""):
    """``rows`` less those whose post (at ``post_path``: "" for posts, "post__" for rows
    that point at one) has one of the viewer's muted words in force in its text or
    content warning (threads, search, the public timeline: inside the statement, so
    pages stay full)."""
    if viewer_id is None:
        return rows
    return rows.exclude(_muted_words_in(viewer_id, post_path))


def is_listed(post: Post) -> bool:
    """The Python dialect of ``listed``: a public post (reposts are listed nowhere)."""
    return post.visibility == Visibility.PUBLIC and post.repost_of_id is None


def readable(rows: QuerySet, viewer_id: int | None) -> QuerySet:
    """``rows`` (posts) the viewer may read: not blocked either way, and their level allows."""
    return visible_to(rows, viewer_id).filter(readable_by(viewer_id))


def readable_among(viewer_id: int, posts: dict[str, Post]) -> dict[str, Post]:
    """Those of ``posts`` whose level lets the viewer read them (blocks aside): one
    query for the viewer's follows, only when a followers-only post of another is
    among them (a page of public posts costs nothing more)."""
    others = {
        post.author_id
        for post in posts.values()
        if post.visibility == _FOLLOWERS and post.author_id != viewer_id
    }
    followed = visibility.followed_among(viewer_id, others) if others else set()
    return {
        key: post
        for key, post in posts.items()
        if level_allows(viewer_id, post, follows_author=post.author_id in followed)
    }


def addressed_or_not_direct(viewer_id: int, post: Post) -> bool:
    """A direct post only for its author and the people it addresses: the part of the
    level the home feed checks (its other posts are by people the reader follows)."""
    return (
        post.visibility != _DIRECT
        or post.author_id == viewer_id
        or _needle(viewer_id) in post.recipients
    )


def _q_addressed_or_not_direct(viewer_id: int) -> Q:
    return (
        ~Q(visibility=_DIRECT) | Q(author_id=viewer_id) | Q(recipients__contains=_needle(viewer_id))
    )


def _sql_addressed_to_viewer(post: str) -> str:
    """The SQL dialect of ``_needle(viewer) in post.recipients``."""
    return f"{post}.recipients LIKE '%% ' || CAST(%(viewer)s AS TEXT) || ' %%'"


def _sql_addressed_or_not_direct(post: str) -> str:
    return (
        f"({post}.visibility <> '{_DIRECT}' OR {post}.author_id = %(viewer)s"
        f" OR {_sql_addressed_to_viewer(post)})"
    )


def sql_readable(post: str, viewer_id: int | None) -> str:
    """``readable`` in SQL over a post row ``post``, the viewer ``%(viewer)s``: its level
    lets the viewer read it, and its author and the viewer are not blocked either way
    (a visitor, ``viewer_id`` None: the open levels). Its subqueries are the viewer's
    lists and a probe of the author's blocks, forms a Citus cluster runs too."""
    open_levels = f"{post}.visibility IN ({_SQL_OPEN})"
    if viewer_id is None:
        return open_levels
    return f"""(
  ({open_levels} OR {post}.author_id = %(viewer)s
   OR ({post}.visibility = '{_FOLLOWERS}' AND {post}.author_id IN {visibility.sql_followee_ids()})
   OR ({post}.visibility = '{_DIRECT}' AND {_sql_addressed_to_viewer(post)}))
  AND {post}.author_id NOT IN {visibility.sql_blocked_ids()}
  AND NOT {visibility.sql_blocks_viewer(f"{post}.author_id")})"""


def visible_to(rows: QuerySet, viewer_id: int | None, user_field: str = "author_id") -> QuerySet:
    """``rows`` less those whose ``user_field`` user is blocked either way with the viewer."""
    if viewer_id is None:
        return rows
    return rows.exclude(visibility.blocked_either_way(viewer_id, user_field))


def may_see(viewer_id: int | None, post: Post) -> bool:
    """Whether the viewer may see this live post (its own author and level, not a repost's
    original): one probe for blocks, one more for a followers-only post."""
    if viewer_id is not None and viewer_id == post.author_id:
        return True
    follows = (
        post.visibility == _FOLLOWERS
        and viewer_id is not None
        and visibility.follows(viewer_id, post.author_id)
    )
    if not level_allows(viewer_id, post, follows_author=follows):
        return False
    return viewer_id is None or not visibility.is_blocked_either_way(viewer_id, post.author_id)


def in_home_feed(reader_id: int) -> Q:
    """Live posts the reader's home feed may show (the ORM dialect)."""
    original_ok = (
        Q(repost_of__deleted_at__isnull=True, repost_of__hidden_at__isnull=True)
        & Q(repost_of__visibility__in=OPEN)
        & ~visibility.muted(reader_id, "repost_of__author_id")
        & ~visibility.blocked_either_way(reader_id, "repost_of__author_id")
        & ~visibility.reposts_hidden(reader_id, "author_id")
        & ~_muted_words_in(reader_id, "repost_of__")
    )
    return (
        Q(deleted_at__isnull=True, hidden_at__isnull=True)
        & visibility.followed_or_self(reader_id, "author_id")
        & ~visibility.muted(reader_id, "author_id")
        & _q_addressed_or_not_direct(reader_id)
        & ~_muted_words_in(reader_id)
        & (Q(repost_of__isnull=True) | original_ok)
    )


def sql_in_home_feed(post: str, original: str) -> str:
    """The same rule in SQL over a post row ``post`` LEFT JOINed to its original
    ``original``; the reader is ``%(viewer)s``, the time ``%(now)s`` (muted words'
    expiry)."""
    return f"""(
  {post}.deleted_at IS NULL AND {post}.hidden_at IS NULL
  AND {visibility.sql_followed_or_self(f"{post}.author_id", few_rows=True)}
  AND NOT {visibility.sql_muted(f"{post}.author_id")}
  AND {_sql_addressed_or_not_direct(post)}
  AND NOT {visibility.sql_muted_words(f"{post}.text", f"{post}.spoiler_text")}
  AND ({post}.repost_of_id IS NULL OR (
         {original}.deleted_at IS NULL AND {original}.hidden_at IS NULL
         AND {original}.visibility IN ({_SQL_OPEN})
         AND NOT {visibility.sql_muted(f"{original}.author_id")}
         AND NOT {visibility.sql_blocked_either_way(f"{original}.author_id")}
         AND NOT {visibility.sql_reposts_hidden(f"{post}.author_id")}
         AND NOT {visibility.sql_muted_words(f"{original}.text", f"{original}.spoiler_text")})))"""


def sql_shown_repost_of(repost: str) -> str:
    """A repost ``repost`` (a live post) by the reader or someone they follow and not muted:
    one whose newer entry makes an older one of the same original collapse into it."""
    return f"""(
  {repost}.deleted_at IS NULL AND {repost}.hidden_at IS NULL
  AND {visibility.sql_followed_or_self(f"{repost}.author_id")}
  AND NOT {visibility.sql_muted(f"{repost}.author_id")}
  AND NOT {visibility.sql_reposts_hidden(f"{repost}.author_id")})"""


def reposts_shown_to(reader_id: int) -> Q:
    """The ORM dialect of ``sql_shown_repost_of``: whose reposts say "reposted by"."""
    return (
        Q(deleted_at__isnull=True, hidden_at__isnull=True)
        & visibility.followed_or_self(reader_id, "author_id")
        & ~visibility.muted(reader_id, "author_id")
        & ~visibility.reposts_hidden(reader_id, "author_id")
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
        and addressed_or_not_direct(standing.viewer_id, post)
        and not standing.mutes_text(post.text, post.spoiler_text)
    ):
        return False
    if post.repost_of_id is None:
        return True
    return (
        original is not None
        and is_live(original)
        and original.visibility in OPEN
        and not standing.is_muted(original.author_id)
        and not standing.blocked_either_way(original.author_id)
        and not standing.hides_reposts_of(post.author_id)
        and not standing.mutes_text(original.text, original.spoiler_text)
    )


def is_shown_repost(standing: visibility.Standing, repost: Post) -> bool:
    """The standing's dialect of ``sql_shown_repost_of``."""
    return (
        is_live(repost)
        and standing.followed_or_self(repost.author_id)
        and not standing.is_muted(repost.author_id)
        and not standing.hides_reposts_of(repost.author_id)
    )
