"""Pull: read posts straight from their authors' ranges of the post table.

Each author's posts are one primary-key range (posts.ids), so "the n posts
of these authors nearest a cursor" is one short index scan per author: on
PostgreSQL a UNION ALL of one leg per author, each filtered by the shard key
(posts by author), so that Citus runs each on one shard.
Elsewhere (SQLite, the embedded default) a plain query does the same.
"""

from collections import defaultdict

from django.conf import settings
from django.db import connection

from accounts.models import User
from feed_project import sharding
from feed_project.pagination import Cursor
from posts import ids
from posts.models import Post
from relations.selectors import followee_ids

# One index range scan per author, filtered by the author (the shard key):
# a UNION ALL of single-shard legs. A LATERAL join over arrays of bounds did
# the same on PostgreSQL, but Citus cannot push a LIMIT down a LATERAL
# subquery; each leg here is a router query it runs on the author's shard.
_LEG = """(SELECT timeline_key, author_id FROM {posts} p
  WHERE p.author_id = %s AND p.id >= %s AND p.id < %s
    AND p.deleted_at IS NULL AND p.hidden_at IS NULL {cursor_filter}
  ORDER BY p.id {direction} LIMIT %s)"""
# On Citus each leg above is a subplan of its own, run one after another (a
# round trip per author: seconds for a reader following hundreds). There the
# legs are one LATERAL join from the authors' user rows, correlated on the
# distribution column (posts and users are colocated), which Citus pushes down
# whole: one task per shard, each running its own authors' range scans, the
# shards in parallel. Each author's bounds are looked up by their position.
_LATERAL = """SELECT p.timeline_key, p.author_id FROM {users} u
CROSS JOIN LATERAL (
  SELECT timeline_key, author_id FROM {posts} p
  WHERE p.author_id = u.id
    AND p.id >= (%(lows)s::char(16)[])[array_position(%(authors)s::bigint[], u.id)]
    AND p.id < (%(highs)s::char(16)[])[array_position(%(authors)s::bigint[], u.id)]
    AND p.deleted_at IS NULL AND p.hidden_at IS NULL {cursor_filter}
  ORDER BY p.id {direction} LIMIT %(per_author)s
) p
WHERE u.id = ANY(%(authors)s)"""
# Legs per statement: 500 legs of 4 parameters (+2) stay far below
# PostgreSQL's 65,535 parameters, and one statement plans in a few ms.
LEGS_PER_STATEMENT = 500


def _bounds(author_id: int, cursor: Cursor) -> tuple[str, str]:
    """The part of an author's id range a cursor can still reach."""
    low, high = ids.post_id_bounds(author_id)
    if cursor.before is not None:
        time = ids.parse_timeline_key(cursor.before).time
        if time < ids.MAX_TIME:
            high = min(high, ids.first_post_id_at(author_id, time + 1))
    if cursor.after is not None:
        time = ids.parse_timeline_key(cursor.after).time
        low = max(low, ids.first_post_id_at(author_id, time))
    return low, high


def nearest_by_author(
    author_ids: list[int], *, cursor: Cursor, per_author: int, up: bool | None = None
) -> list[tuple[str, int]]:
    """(timeline key, author id) of each author's ``per_author`` live posts
    nearest the cursor, in its scan direction (or up when ``up``, down when not):
    the newest below ``before`` (or of all), or the oldest above ``after``.
    Unordered across authors."""
    up = cursor.newer_pages if up is None else up
    if not author_ids:
        return []
    if connection.vendor != "postgresql":
        return _nearest_by_author_portable(author_ids, cursor=cursor, per_author=per_author, up=up)
    if _lateral():
        return _nearest_by_author_citus(author_ids, cursor=cursor, per_author=per_author, up=up)
    filters, cursor_params = [], []
    if cursor.before is not None:
        filters.append("AND p.timeline_key < %s")
        cursor_params.append(cursor.before)
    if cursor.after is not None:
        filters.append("AND p.timeline_key > %s")
        cursor_params.append(cursor.after)
    leg = _LEG.format(
        posts=Post._meta.db_table,
        cursor_filter=" ".join(filters),
        direction="ASC" if up else "DESC",
    )
    rows: list[tuple[str, int]] = []
    with connection.cursor() as db:
        for start in range(0, len(author_ids), LEGS_PER_STATEMENT):
            batch = author_ids[start : start + LEGS_PER_STATEMENT]
            params: list[object] = []
            for author_id in batch:
                low, high = _bounds(author_id, cursor)
                params += [author_id, low, high, *cursor_params, per_author]
            db.execute("\nUNION ALL\n".join([leg] * len(batch)), params)
            rows += db.fetchall()
    return rows


def _lateral() -> bool:
    """The LATERAL form on Citus; FEED_ROUTED_READS forces it either way, so that the
    tests run both forms on plain PostgreSQL (as timelines.entries does)."""
    forced = settings.FEED_ROUTED_READS
    return sharding.on_citus(connection) if forced is None else forced


def _nearest_by_author_citus(
    author_ids: list[int], *, cursor: Cursor, per_author: int, up: bool
) -> list[tuple[str, int]]:
    bounds = [_bounds(author_id, cursor) for author_id in author_ids]
    params = {
        "authors": author_ids,
        "lows": [low for low, _ in bounds],
        "highs": [high for _, high in bounds],
        "before": cursor.before,
        "after": cursor.after,
        "per_author": per_author,
    }
    filters = []
    if cursor.before is not None:
        filters.append("AND p.timeline_key < %(before)s")
    if cursor.after is not None:
        filters.append("AND p.timeline_key > %(after)s")
    sql = _LATERAL.format(
        users=User._meta.db_table,
        posts=Post._meta.db_table,
        cursor_filter=" ".join(filters),
        direction="ASC" if up else "DESC",
    )
    with connection.cursor() as db:
        db.execute(sql, params)
        return db.fetchall()


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


def merged(author_ids: list[int], *, cursor: Cursor, limit: int) -> list[str]:
    """The first ``limit`` keys of these authors' posts from the cursor on, in scan order.

    Many authors take two passes (a threshold top-k, seed 000's answer to readers
    who follow thousands): first each author's one nearest key. The
    ``limit``-th nearest of those, T, bounds the answer: ``limit`` authors have
    a key between the cursor and T, so no key of the answer lies beyond T, and
    only authors whose nearest key is not beyond T can have one. Then those
    authors' keys up to T. A reader following 5,000 accounts reads 5,000
    one-row probes and about a page of rows, not a page of every author.
    """
    up = cursor.newer_pages
    if len(author_ids) * limit > SINGLE_PASS_ROWS:
        nearest = sorted(nearest_by_author(author_ids, cursor=cursor, per_author=1), reverse=not up)
        if len(nearest) >= limit:
            threshold = nearest[limit - 1][0]
            authors = [author for _, author in nearest[:limit]]
            if up:
                bounded = Cursor(before=threshold, after=cursor.after)
            else:
                bounded = Cursor(before=cursor.before, after=threshold)
            rows = nearest_by_author(authors, cursor=bounded, per_author=limit, up=up)
            return sorted({threshold, *(key for key, _ in rows)}, reverse=not up)[:limit]
        # Fewer authors than a page have posts here: a single pass over them.
        author_ids = [author for _, author in nearest]
    rows = nearest_by_author(author_ids, cursor=cursor, per_author=limit, up=up)
    return sorted({key for key, _ in rows}, reverse=not up)[:limit]


def reader_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """A reader's feed keys by pull (followees and their own posts): the engine's fallback
    below the inbox. Unfiltered: the entries statement drops what the reader may not see."""
    return merged([*followee_ids(reader_id), reader_id], cursor=cursor, limit=limit)
