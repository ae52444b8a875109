"""Pull: read posts straight from their authors' ranges of the post table.

Each author's posts are one primary-key range (posts.ids), so "the n posts
of these authors nearest a cursor" is one short index scan per author: on
PostgreSQL a UNION ALL of one leg per author, each filtered by the shard key
(posts by author), so that Citus runs each on one shard.
Elsewhere (SQLite, the embedded default) a plain query does the same.
"""

from collections import defaultdict
from collections.abc import Iterator

from django.db import connection
from django.utils import timezone

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


# merged() reads in time windows moving away from the cursor: the first spans
# FIRST_WINDOW_MS, each next one WIDEN times the last. Within a window every
# author's posts up to the limit are read, so once `limit` keys are in hand the
# first `limit` are exact. A reader following thousands of accounts reads a
# few windows of one-probe legs (most authors post nothing in a recent hour),
# not `limit` posts of every author (seed 000's pull by time buckets).
FIRST_WINDOW_MS = 3_600_000
WIDEN = 8
# Below this many rows at most (authors x limit), one statement over the whole
# range reads less than a window walk costs in statements.
WINDOWLESS_ROWS = 5_000


def _edge(time: int) -> str:
    """Below every key of ``time`` and above every key before it (no author 0)."""
    return ids.make_timeline_key(ids.KeyParts(max(0, min(time, ids.MAX_TIME)), 0, 0))


def _windows(cursor: Cursor) -> Iterator[Cursor]:
    """The cursor's range cut into time windows, in its scan direction."""
    span = FIRST_WINDOW_MS
    if cursor.newer_pages:
        start = ids.parse_timeline_key(cursor.after).time
        now = ids.time_of(timezone.now())
        after = cursor.after
        while start + span <= now:
            yield Cursor(after=after, before=_edge(start + span))
            start, after, span = start + span, _edge(start + span), span * WIDEN
        yield Cursor(after=after)
        return
    top = ids.time_of(timezone.now()) + 1
    if cursor.before is not None:
        top = min(top, ids.parse_timeline_key(cursor.before).time + 1)
    floor = ids.parse_timeline_key(cursor.after).time if cursor.after is not None else 0
    before = cursor.before or _edge(ids.MAX_TIME)
    while top - span > floor:
        yield Cursor(before=before, after=_edge(top - span))
        top, before, span = top - span, _edge(top - span), span * WIDEN
    yield Cursor(before=before, after=cursor.after)


def merged(author_ids: list[int], *, cursor: Cursor, limit: int) -> list[str]:
    """The first ``limit`` keys of these authors' posts from the cursor on, in scan order."""
    keys: list[str] = []
    windows = _windows(cursor) if len(author_ids) * limit > WINDOWLESS_ROWS else [cursor]
    for window in windows:
        rows = nearest_by_author(author_ids, cursor=window, per_author=limit, up=cursor.newer_pages)
        keys += sorted({key for key, _ in rows}, reverse=not cursor.newer_pages)
        if len(keys) >= limit:
            break
    return keys[:limit]


def reader_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """A reader's feed keys by pull (followees and their own posts): the engine's fallback
    below the inbox. Unfiltered: the entries statement drops what the reader may not see."""
    return merged([*followee_ids(reader_id), reader_id], cursor=cursor, limit=limit)
