"""Feed entries: the one statement that turns timeline keys into what a reader sees.

Inboxes and pulls hand over keys; here they become posts the reader may see
now (``posts.visibility``: an unfollow, a block or a mute takes effect at
once, before any inbox is cleaned), with each original shown once, at its
newest entry, and who of the people the reader follows reposted it (seed 004).
On PostgreSQL the statement hands back the row versions of the entries it keeps,
and their posts come from those the process holds (``timelines.home._held_posts``).
"""

import functools
import re
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.utils import timezone

from accounts.models import User
from feed_project import sharding
from posts import ids, page_queries, visibility
from posts.models import Post
from relations.visibility import sql_self_and_followees, standing
from timelines.home import _held_posts, _time_limit
from timelines.home._pull import WindowMerge
from timelines.home._reposters import reposted_by, reposts_scanned_most


@dataclass
class FeedItem:
    """One entry of a feed: a post, and who of the people you follow reposted it."""

    key: str
    post: Post
    reposted_by: list[User] = field(default_factory=list)


# The first ``limit`` entries among these posts that the reader's feed shows, in
# scan order, each with its author, its original (for a repost) and the
# original's author. An entry shows if the feed rule lets it, and if no newer
# repost of the same original by someone the reader follows shows instead (a
# post and its reposts collapse to the newest of them). One statement: the
# same rules as ORM Exists() filters cost more to build than to run, every page.
# Every subquery is a probe of an index led by the reader or by the original
# (post_reposts_idx). The posts are found by their keys in scan order
# (post_timeline_idx), so the rule is checked entry by entry until the page is
# full, not for every key of a window three times the page (where nothing is
# dropped, 21 entries checked instead of 63). It selects the entries' columns,
# or where the process holds posts (timelines.home._held_posts) their versions.
_ENTRIES_SQL = """
SELECT {selected}
FROM {post} p
JOIN {user} a ON a.id = p.author_id
LEFT JOIN {post} o ON o.id = p.repost_of_id
LEFT JOIN {user} oa ON oa.id = o.author_id
WHERE {holds}p.timeline_key {among_keys}
  AND {in_home_feed}
  AND NOT {newer_shown_repost}
ORDER BY p.timeline_key {direction}
LIMIT %(limit)s
"""
# Whether a repost of the entry's original that the feed shows is newer than the
# entry, looked up from the smaller side. Most originals have a few reposts:
# those are scanned (post_reposts_idx). A viral one has hundreds of thousands,
# nearly all by strangers: a scan of them grows with the post's reach, every page,
# so past %(scan_most)s reposts the reader and each person they follow are probed
# instead ((author, original): one index lookup each). A CASE, so that PostgreSQL
# runs each form as its own per-row subplan and never turns either into a join
# over every repost; the probe is a scalar subquery for the same reason. Most
# posts are never reposted: an original whose count is 0 (kept in the transaction
# that reposts or deletes, as ``_items`` relies on too) has no repost to look up.
_NEWER_SHOWN_REPOST_SQL = """(CASE
  WHEN COALESCE(o.repost_count, p.repost_count) = 0 THEN FALSE
  WHEN COALESCE(o.repost_count, p.repost_count) <= %(scan_most)s THEN EXISTS (
    SELECT 1 FROM {post} r
    WHERE r.repost_of_id = COALESCE(p.repost_of_id, p.id)
      AND r.timeline_key > p.timeline_key AND {shown_repost})
  ELSE EXISTS (
    SELECT 1 FROM {self_and_followees} w
    WHERE (SELECT 1 FROM {post} r
           WHERE r.author_id = w.id AND r.repost_of_id = COALESCE(p.repost_of_id, p.id)
             AND r.timeline_key > p.timeline_key AND {shown_repost}
           LIMIT 1) IS NOT NULL)
END)"""


_POST_FIELDS = [field.attname for field in Post._meta.concrete_fields]
# _ENTRIES_SQL selects a post's columns with its author's as posts.page_queries.post_of
# reads them, for the entry, then for its original.
_ENTRY_COLUMNS = (
    f"{page_queries.post_and_author_columns('p', 'a')}, "
    f"{page_queries.post_and_author_columns('o', 'oa')}"
)
_ENTRY_VERSIONS = (
    f"p.id, {_held_posts.sql_version('p', 'a')}, o.id, {_held_posts.sql_version('o', 'oa')}"
)


def _one_line(sql: str) -> str:
    """A statement's text without its line breaks and indents (no literal holds one):
    psycopg parses a text once only up to 4,096 bytes, and the page's statement is
    close to that (a test holds it there)."""
    return re.sub(r"\s*\n\s*", " ", sql).strip()


# Its texts, by form: formatted once per process, not once a page.
# A process talks to one kind of database (as feed_project.sharding assumes).
@functools.lru_cache(maxsize=64)
def _entries_sql(*, holding: bool, ascending: bool, among_keys: str, holds: str = "") -> str:
    """The entries statement; after a prelude (``holds``, its condition), it also
    selects each entry's key and reads nothing unless ``holds`` does."""
    selected = _ENTRY_VERSIONS if holding else _ENTRY_COLUMNS
    sql = _ENTRIES_SQL.format(
        selected=f"p.timeline_key AS entry_key, {selected}" if holds else selected,
        post=Post._meta.db_table,
        user=User._meta.db_table,
        in_home_feed=visibility.sql_in_home_feed("p", "o"),
        newer_shown_repost=_NEWER_SHOWN_REPOST_SQL.format(
            post=Post._meta.db_table,
            self_and_followees=sql_self_and_followees(),
            shown_repost=visibility.sql_shown_repost_of("r"),
        ),
        among_keys=among_keys,
        direction="ASC" if ascending else "DESC",
        holds=f"({holds}) AND " if holds else "",
    )
    return _one_line(sql)


def _entries_params(reader_id: int, *, following: int, limit: int) -> dict[str, object]:
    return {
        "viewer": reader_id,
        "limit": limit,
        "now": timezone.now(),
        "scan_most": reposts_scanned_most(following),
    }


def _read_entries(
    keys: list[str],
    *,
    reader_id: int,
    following: int,
    limit: int,
    ascending: bool,
    prelude: "Prelude | None" = None,
    merge: WindowMerge | None = None,
) -> tuple[list[tuple], bool]:
    """The entries statement's rows (after a prelude's, when given), and whether they
    carry versions of held posts rather than the posts' columns. With ``merge``,
    the entries are read from ``keys`` with its authors' posts merged in, under
    FEED_PULL_TIMEOUT_MS (a DatabaseError past it)."""
    params = _entries_params(reader_id, following=following, limit=limit)
    if prelude is not None:
        params.update(prelude.params)  # its %(viewer)s is the reader too
    holding = _held_posts.enabled()
    if merge is None:
        among_keys = page_queries.among(keys, params, "keys")
    else:
        among_keys = f"= ANY({merge.sql(page_queries.array(keys, params, 'keys'), params)})"
    sql = _entries_sql(
        holding=holding,
        ascending=ascending,
        among_keys=among_keys,
        holds=prelude.holds if prelude is not None else "",
    )
    if prelude is not None:
        sql = _after_prelude_sql(prelude.sql, prelude.holds, sql)
    if merge is None:
        return _time_limit.rows(sql, params, timeout_ms=None), holding
    # Planned once, as psycopg's prepared statements are (_time_limit._one_trip).
    limit_ms = settings.FEED_PULL_TIMEOUT_MS
    return _time_limit.rows(sql, params, timeout_ms=limit_ms, generic_plan=True), holding


def _shown_entries(
    keys: list[str], *, reader_id: int, following: int, limit: int, ascending: bool
) -> list[tuple[str, Post]]:
    """The first ``limit`` entries among these keys that the reader's feed shows, in
    scan order: (entry key, post shown: a repost's original) pairs, each post with its
    author loaded."""
    rows, holding = _read_entries(
        keys, reader_id=reader_id, following=following, limit=limit, ascending=ascending
    )
    return _held_entries(rows) if holding else _entries_of(rows)


def _held_entries(rows: list[tuple]) -> list[tuple[str, Post]]:
    """Entries from their versions: (post id, version, original id, version) rows. The
    posts are the held ones, shared by every reader and never changed (``_held_posts``)."""
    versions = {}
    for post_id, version, original_id, original_version in rows:
        versions[post_id] = version
        if original_id is not None:
            versions[original_id] = original_version
    found = _held_posts.posts(versions)
    entries = []
    for post_id, _, original_id, _ in rows:
        if post_id not in found or (original_id is not None and original_id not in found):
            continue  # gone since the statement read its version
        entries.append((found[post_id].timeline_key, found[original_id or post_id]))
    return entries


def _entries_of(rows: list[tuple]) -> list[tuple[str, Post]]:
    """Entries from their columns and their originals'."""
    width = page_queries.POST_AND_AUTHOR_WIDTH  # the entry's, then its original's
    entries = []
    for row in rows:
        post = page_queries.post_of(row[:width])
        shown = page_queries.post_of(row[width:]) if post.repost_of_id else post
        entries.append((post.timeline_key, shown))
    return entries


# --- the routed form, for a Citus cluster ----------------------------------------
# A statement there may join a user's rows only to the same user's (a post to
# its author), so the entries statement's joins to originals, to other people's
# reposts and to the reader's follows become reads that each route by their
# shard key, and the rule is checked over them in Python
# (posts.visibility.shown_in_home_feed, held equal to the SQL by a test).


def _live_posts(post_ids: list[str]) -> dict[str, Post]:
    """These posts, live, with their authors: each author's shard, one probe each."""
    rows = (
        Post.objects.with_ids(post_ids)
        .visible()
        .select_related("author")
        .only(*_POST_FIELDS, *(f"author__{name}" for name in page_queries.AUTHOR_FIELDS))
    )
    return {post.pk: post for post in rows}


def routed_items(
    post_ids: list[str], *, reader_id: int, limit: int, ascending: bool
) -> list[FeedItem]:
    """``hydrate``'s answer by reads that each route by their shard key: the
    posts, their originals, the reader's standing, reposts by people they follow."""
    posts = _live_posts(post_ids)
    originals = _live_posts([p.repost_of_id for p in posts.values() if p.repost_of_id])
    reader = standing(reader_id, blocks_among={o.author_id for o in originals.values()})
    shown = {
        post.pk: post
        for post in posts.values()
        if visibility.shown_in_home_feed(reader, post, originals.get(post.repost_of_id))
    }
    reposted = [
        original.pk
        for original in (originals.get(p.repost_of_id, p) for p in shown.values())
        if original.repost_count
    ]
    reposts: dict[str, list[Post]] = {}  # shown reposts by original, newest first
    if reposted:
        # Read from the shards of the people the reader follows only.
        rows = (
            Post.objects.filter(
                repost_of_id__in=reposted, author_id__in={reader_id, *reader.followed}
            )
            .select_related("author")
            .only(*_POST_FIELDS, *(f"author__{name}" for name in page_queries.AUTHOR_FIELDS))
            .order_by("-timeline_key")
        )
        for repost in rows:
            if visibility.is_shown_repost(reader, repost):
                reposts.setdefault(repost.repost_of_id, []).append(repost)
    items = []
    for post in sorted(shown.values(), key=lambda p: p.timeline_key, reverse=not ascending):
        original = originals.get(post.repost_of_id, post)
        newer = reposts.get(original.pk, [])
        if newer and newer[0].timeline_key > post.timeline_key:
            continue  # shown at its newest repost instead
        post.repost_of = originals.get(post.repost_of_id)
        items.append(FeedItem(post.timeline_key, original, [repost.author for repost in newer]))
    return items[:limit]


def _routed() -> bool:
    forced = settings.FEED_ROUTED_READS
    return sharding.on_citus(connection) if forced is None else forced


def hydrate(
    keys: list[str],
    *,
    reader_id: int,
    following: int,
    limit: int | None = None,
    ascending: bool = False,
) -> list[FeedItem]:
    """The first ``limit`` feed items among these entry keys, in scan order.

    ``following`` (how many people the reader follows, as their row says) only
    chooses how reposts of an original are looked up (``reposts_scanned_most``).
    Two queries, the second only when a post shown was reposted (on Citus,
    ``routed_items``: four or five, each routed by its shard key).
    """
    if not keys:
        return []
    if _routed():
        return routed_items(
            ids.stored_keys_to_post_ids(keys),
            reader_id=reader_id,
            limit=limit or len(keys),
            ascending=ascending,
        )
    entries = _shown_entries(
        keys,
        reader_id=reader_id,
        following=following,
        limit=limit or len(keys),
        ascending=ascending,
    )
    return _items(entries, reader_id=reader_id, following=following)


def _items(entries: list[tuple[str, Post]], *, reader_id: int, following: int) -> list[FeedItem]:
    """Feed items of the shown entries ((entry key, post shown: a repost's original)
    pairs), with who reposted each original (one query, only when a post shown was
    reposted)."""
    reposted = [shown for _, shown in entries if shown.repost_count]
    reposters = reposted_by(reader_id, reposted, following=following) if reposted else {}
    return [FeedItem(key, shown, reposters.get(shown.pk, [])) for key, shown in entries]


@dataclass(frozen=True)
class Prelude:
    """A statement read in the round trip of a page's entries statement: its rows come
    back first, and the entries are read only when ``holds`` (SQL over its columns,
    alias ``pre``) does; its parameters are the statement's too."""

    sql: str
    params: dict[str, object]
    holds: str
    width: int  # its columns


# The prelude's rows, whether its condition holds, then the entries (none unless it
# does: over the prelude's columns alone, the condition is a one-time filter that
# PostgreSQL checks before it reads anything). OFFSET 0 keeps the prelude a
# subquery read once: pulled up into the statement, each subquery among its
# columns ran once for each use of the column (the state's pulled authors three
# times).
_AFTER_PRELUDE_SQL = """
SELECT pre.*, ({holds}) AS holds, e.*
FROM ({prelude} OFFSET 0) pre
LEFT JOIN LATERAL ({entries}) e ON TRUE
ORDER BY e.entry_key DESC
"""


@functools.lru_cache(maxsize=16)
def _after_prelude_sql(prelude: str, holds: str, entries: str) -> str:
    return _one_line(_AFTER_PRELUDE_SQL.format(holds=holds, prelude=prelude, entries=entries))


def follows_a_prelude() -> bool:
    """Whether ``hydrate_after`` may be called: on PostgreSQL, outside the routed form
    (on Citus the entries are several statements, each routed by its shard key)."""
    return connection.vendor == "postgresql" and not _routed()


def hydrate_after(
    prelude: Prelude,
    keys: list[str],
    *,
    reader_id: int,
    following: int,
    limit: int,
    merge: WindowMerge | None = None,
) -> tuple[list[tuple], list[FeedItem] | None]:
    """``hydrate`` (newest first) in the round trip of ``prelude``: the prelude's rows
    (their first ``prelude.width`` columns), and the items, None unless its
    condition _held_posts. With ``merge``, of ``keys`` with its authors' posts merged
    in, in the same statement, under FEED_PULL_TIMEOUT_MS (a DatabaseError past
    it): the pull of big accounts must not hold up the page (seed 002)."""
    rows, holding = _read_entries(
        keys,
        reader_id=reader_id,
        following=following,
        limit=limit,
        ascending=False,
        prelude=prelude,
        merge=merge,
    )
    width = prelude.width
    preludes = [row[:width] for row in rows]
    if not rows or not rows[0][width]:
        return preludes, None
    # Past the prelude's columns and "holds": the entry's key, then its columns.
    shown = [row[width + 2 :] for row in rows if row[width + 1] is not None]
    entries = _held_entries(shown) if holding else _entries_of(shown)
    return preludes, _items(entries, reader_id=reader_id, following=following)
