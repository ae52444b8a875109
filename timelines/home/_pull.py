"""Pull: read posts straight from their authors' ranges of the post table.

Each author's posts are one primary-key range (posts.ids), so "the n posts
of these authors nearest a cursor" is one short index scan per author: on
PostgreSQL one statement of LATERAL scans, each correlated on the shard key
(posts by author), so that Citus runs each on its author's shard.
Elsewhere (SQLite, the embedded default) a plain query does the same.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from accounts.models import User
from feed_project import sharding
from feed_project.pagination import Cursor, keyset_sql
from posts import ids
from posts.models import Post
from relations.selectors import followee_ids
from timelines.home import _time_limit

# One index range scan per author, correlated on the author (the shard key and
# the primary key's first column), in one statement whatever the number of
# authors: a reader following 5,000 accounts is one plan of 5,000 probes (a
# UNION ALL of one leg per author, 500 legs a statement, was planned and had its
# parameters built leg by leg). On plain PostgreSQL the authors come from an array;
# on Citus from their user rows, correlated on the distribution column (posts
# and users are colocated), which Citus pushes down whole: one task per shard,
# the shards in parallel (it cannot push a LIMIT down a LATERAL over an array).
_NEAREST = """SELECT p.timeline_key, p.author_id FROM {source}
CROSS JOIN LATERAL (
  SELECT timeline_key, author_id FROM {posts} p
  WHERE p.author_id = a.id {range_filter}
    AND p.deleted_at IS NULL AND p.hidden_at IS NULL {cursor_filter}
  ORDER BY p.id {direction} LIMIT %(per_author)s
) p {where}"""
# Each author's posts are one primary-key range (posts.ids): with no cursor the
# author alone bounds the scan; a cursor narrows it to the ids it can reach.
# On plain PostgreSQL each author's bounds come on its row, the arrays unnested
# side by side: indexed by the author's position instead, a prepared statement's
# generic plan cast both arrays again for every author (O(authors^2), from the
# statement's sixth run on).
_ARRAY = {
    "source": "unnest(%(authors)s::bigint[]) AS a(id)",
    "windowed_source": "unnest(%(authors)s::bigint[], %(lows)s::{key}[], %(highs)s::{key}[])"
    " AS a(id, low, high)",
    "where": "",
    "range_filter": "AND p.id >= a.low AND p.id < a.high",
}
_USERS = {
    "source": "{users} a",
    "windowed_source": "{users} a",
    "where": "WHERE a.id = ANY(%(authors)s)",
    "range_filter": "AND p.id >= (%(lows)s::{key}[])[array_position(%(authors)s::bigint[], a.id)]"
    " AND p.id < (%(highs)s::{key}[])[array_position(%(authors)s::bigint[], a.id)]",
}


def _windows(author_ids: list[int], cursor: Cursor) -> tuple[list[str], list[str]]:
    """The part of each author's id range a cursor can still reach: (lows, highs)."""
    until = since = None
    if cursor.before is not None:
        until = ids.parse_timeline_key(cursor.before).time + 1
    if cursor.after is not None:
        since = ids.parse_timeline_key(cursor.after).time
    return ids.post_id_windows(author_ids, since=since, until=until)


def nearest_by_author(
    author_ids: list[int],
    *,
    cursor: Cursor,
    per_author: int,
    up: bool | None = None,
    timeout_ms: int | None = None,
) -> list[tuple[str, int]]:
    """(timeline key, author id) of each author's ``per_author`` live posts
    nearest the cursor, in its scan direction (or up when ``up``, down when not):
    the newest below ``before`` (or of all), or the oldest above ``after``.
    Unordered across authors. ``timeout_ms``: as for ``_time_limit.rows``."""
    up = cursor.newer_pages if up is None else up
    if not author_ids:
        return []
    if connection.vendor != "postgresql":
        return _nearest_by_author_portable(author_ids, cursor=cursor, per_author=per_author, up=up)
    form = _USERS if _lateral() else _ARRAY
    return _nearest_by_author_sql(
        author_ids, cursor=cursor, per_author=per_author, up=up, form=form, timeout_ms=timeout_ms
    )


def _lateral() -> bool:
    """The authors from their user rows on Citus; FEED_ROUTED_READS forces it either way,
    so that the tests run both forms on plain PostgreSQL (as timelines.home._items does)."""
    forced = settings.FEED_ROUTED_READS
    return sharding.on_citus(connection) if forced is None else forced


def _nearest_by_author_sql(
    author_ids: list[int],
    *,
    cursor: Cursor,
    per_author: int,
    up: bool,
    form: dict[str, str],
    timeout_ms: int | None,
) -> list[tuple[str, int]]:
    params: dict[str, object] = {}
    sql = _nearest_sql(
        author_ids, cursor=cursor, per_author=per_author, up=up, form=form, params=params
    )
    return _time_limit.rows(sql, params, timeout_ms=timeout_ms)


def _nearest_sql(
    author_ids: list[int],
    *,
    cursor: Cursor,
    per_author: int,
    up: bool,
    form: dict[str, str],
    params: dict[str, object],
) -> str:
    """``nearest_by_author``'s statement; its parameters (``authors``, ``per_author``,
    the cursor's, ``lows`` and ``highs``) put in ``params``, which must not hold them."""
    own: dict[str, object] = {"authors": author_ids, "per_author": per_author}
    bounds, _ = keyset_sql("p.timeline_key", cursor, own)
    if bounds:
        own["lows"], own["highs"] = _windows(author_ids, cursor)
    assert own.keys().isdisjoint(params), "a pull's parameter would replace another"
    params.update(own)
    return _NEAREST.format(
        source=form["windowed_source" if bounds else "source"].format(
            users=User._meta.db_table, key=ids.SQL_TYPE
        ),
        where=form["where"],
        posts=Post._meta.db_table,
        range_filter=form["range_filter"].format(key=ids.SQL_TYPE) if bounds else "",
        cursor_filter=bounds,
        direction="ASC" if up else "DESC",
    )


# The first %(window)s keys among a window's and a pull's, newest first: what
# feed._window does in Python, inside the statement that reads the window.
_MERGED_WINDOW = (
    "ARRAY(SELECT w.k FROM (SELECT unnest({keys}) UNION SELECT n.timeline_key"
    " FROM ({nearest}) n) w(k) ORDER BY w.k DESC LIMIT %(window)s)"
)


@dataclass(frozen=True)
class WindowMerge:
    """A window of ``limit`` keys below ``cursor.before``, newest first, with these
    authors' posts merged in by the statement that reads it (``merged``'s one pass,
    in SQL: ``timelines.home._items.hydrate_after``)."""

    authors: list[int]
    cursor: Cursor
    limit: int

    @classmethod
    def of(cls, author_ids: list[int], *, cursor: Cursor, limit: int) -> "WindowMerge | None":
        """None unless there are authors and ``merged`` would take one pass over them,
        older pages' way (plain PostgreSQL: the authors go as an array)."""
        if (
            not author_ids
            or cursor.newer_pages
            or len(author_ids) * limit > SINGLE_PASS_ROWS
            or not sharding.on_plain_postgresql(connection)
        ):
            return None
        return cls(author_ids, cursor, limit)

    def sql(self, keys: str, params: dict[str, object]) -> str:
        """The merged window, an array, from ``keys`` (an array expression); its
        parameters put in ``params``."""
        nearest = _nearest_sql(
            self.authors,
            cursor=self.cursor,
            per_author=self.limit,
            up=False,
            form=_ARRAY,
            params=params,
        )
        assert "window" not in params, "a pull's parameter would replace another"
        params["window"] = self.limit
        return _MERGED_WINDOW.format(keys=keys, nearest=nearest)


def _nearest_by_author_portable(
    author_ids: list[int], *, cursor: Cursor, per_author: int, up: bool
) -> list[tuple[str, int]]:
    posts = Post.objects.visible().filter(author_id__in=author_ids)
    if cursor.before is not None:
        posts = posts.filter(timeline_key__lt=cursor.before)
    if cursor.after is not None:
        posts = posts.filter(timeline_key__gt=cursor.after)
    posts = posts.order_by("timeline_key" if up else "-timeline_key")
    taken: dict[int, int] = defaultdict(int)
    rows = []
    for key, author_id in posts.values_list("timeline_key", "author_id").iterator():
        if taken[author_id] < per_author:
            taken[author_id] += 1
            rows.append((key, author_id))
    return rows


# Below this many rows at most (authors x limit), merged() reads every author's
# nearest `limit` posts in one pass; above it, in two (its docstring).
SINGLE_PASS_ROWS = 5_000
# From this many authors merged() walks first: for a reader following 5,000 the
# walk found a page sooner than the probes, while for one following 1,000 it
# missed page 5 within its budget and the page came later (docs/BENCHMARKS.md
# has the figures). The more authors, the likelier their posts are dense enough.
WALK_FROM_AUTHORS = 2_000

# The posts from the cursor on in scan order (post_timeline_idx), every author's,
# at most %(budget)s of them, keeping the first %(limit)s live ones by these
# authors. The inner LIMIT bounds the walk whatever the authors' share of all
# posts; the outer one stops it as soon as the page is found.
_WALK = """SELECT w.timeline_key FROM (
  SELECT p.timeline_key, p.author_id, p.deleted_at, p.hidden_at FROM {posts} p
  WHERE TRUE {cursor_filter}
  ORDER BY p.timeline_key {direction} LIMIT %(budget)s
) w
WHERE w.author_id = ANY(%(authors)s::bigint[]) AND w.deleted_at IS NULL AND w.hidden_at IS NULL
ORDER BY w.timeline_key {direction} LIMIT %(limit)s"""


def _walked(
    author_ids: list[int], *, cursor: Cursor, limit: int, timeout_ms: int | None
) -> list[str] | None:
    """The first ``limit`` keys of these authors from the cursor on, found by walking
    every author's posts in scan order; None when FEED_PULL_WALK_ROWS_PER_AUTHOR rows
    per author held fewer (their posts are too rare there, or run out: the probes
    decide). Plain PostgreSQL only: on Citus the walk would read every shard."""
    budget = settings.FEED_PULL_WALK_ROWS_PER_AUTHOR * len(author_ids)
    if not budget or not sharding.on_plain_postgresql(connection):
        return None
    params: dict[str, object] = {"authors": author_ids, "budget": budget, "limit": limit}
    bounds, direction = keyset_sql("p.timeline_key", cursor, params)
    sql = _WALK.format(posts=Post._meta.db_table, cursor_filter=bounds, direction=direction)
    keys = [key for (key,) in _time_limit.rows(sql, params, timeout_ms=timeout_ms)]
    return keys if len(keys) == limit else None


def merged(
    author_ids: list[int], *, cursor: Cursor, limit: int, timeout_ms: int | None = None
) -> list[str]:
    """The first ``limit`` keys of these authors' posts from the cursor on, in scan order.

    Thousands of authors are first walked for (``_walked``, ``WALK_FROM_AUTHORS``):
    where their posts are not rare among all, a walk of every author's posts
    finds the page sooner than a probe per author. Else, for many authors, two
    passes (a threshold top-k, seed 000's answer to readers who follow
    thousands): first each author's one nearest key. The ``limit``-th nearest
    of those, T, bounds the answer: ``limit`` authors have a key between the
    cursor and T, so no key of the answer lies beyond T, and only authors whose
    nearest key is not beyond T can have one. Then those authors' keys up to T.
    A reader following 5,000 accounts reads 5,000 one-row probes and about a
    page of rows, not a page of every author. ``timeout_ms`` bounds each
    statement on PostgreSQL (``_time_limit.rows``).
    """
    up = cursor.newer_pages
    if len(author_ids) >= WALK_FROM_AUTHORS:
        walked = _walked(author_ids, cursor=cursor, limit=limit, timeout_ms=timeout_ms)
        if walked is not None:
            return walked
    if len(author_ids) * limit > SINGLE_PASS_ROWS:
        nearest = sorted(
            nearest_by_author(author_ids, cursor=cursor, per_author=1, timeout_ms=timeout_ms),
            reverse=not up,
        )
        if len(nearest) >= limit:
            threshold = nearest[limit - 1][0]
            authors = [author for _, author in nearest[:limit]]
            if up:
                bounded = Cursor(before=threshold, after=cursor.after)
            else:
                bounded = Cursor(before=cursor.before, after=threshold)
            rows = nearest_by_author(
                authors, cursor=bounded, per_author=limit, up=up, timeout_ms=timeout_ms
            )
            return sorted({threshold, *(key for key, _ in rows)}, reverse=not up)[:limit]
        # Fewer authors than a page have posts here: a single pass over them.
        author_ids = [author for _, author in nearest]
    rows = nearest_by_author(
        author_ids, cursor=cursor, per_author=limit, up=up, timeout_ms=timeout_ms
    )
    return sorted({key for key, _ in rows}, reverse=not up)[:limit]


def reader_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """A reader's feed keys by pull (followees and their own posts): the engine's fallback
    below the inbox. Unfiltered: the entries statement drops what the reader may not see."""
    return merged([*followee_ids(reader_id), reader_id], cursor=cursor, limit=limit)
