"""Pull: read posts straight from their authors' ranges of the post table.

Each author's posts are one primary-key range (posts.ids), so "the newest n
posts of these authors below a cursor" is one short index scan per author:
on PostgreSQL a LATERAL join over arrays of bounds, which filters every scan by
the shard key (posts by author) as a distributed PostgreSQL would need.
Elsewhere (SQLite, the embedded default) a plain query does the same.
"""

from collections import defaultdict

from django.db import connection

from feed_project.pagination import Cursor
from posts import ids
from posts.models import Post

_LATERAL = """
SELECT p.timeline_key, p.author_id
FROM unnest(%(lows)s::char(16)[], %(highs)s::char(16)[]) AS b(low, high)
CROSS JOIN LATERAL (
    SELECT timeline_key, author_id FROM {posts} p
    WHERE p.id >= b.low AND p.id < b.high
      AND p.deleted_at IS NULL AND p.hidden_at IS NULL {cursor_filter}
    ORDER BY p.id {direction}
    LIMIT %(per_author)s
) p
"""


def _bounds(author_id: int, cursor: Cursor) -> tuple[str, str]:
    """The part of an author's id range a cursor can still reach."""
    prefix = ids.author_prefix(author_id)
    low = prefix + "0" * (ids.TIME_WIDTH + ids.SEQ_WIDTH)
    high = ids.post_id_range(author_id)[1].ljust(ids.KEY_LENGTH, "0")
    if cursor.before is not None:
        time = ids.parse_timeline_key(cursor.before).time
        if time < ids.MAX_TIME:
            high = min(high, prefix + ids.encode_number(time + 1, ids.TIME_WIDTH) + "00")
    if cursor.after is not None:
        time = ids.parse_timeline_key(cursor.after).time
        low = max(low, prefix + ids.encode_number(time, ids.TIME_WIDTH) + "00")
    return low, high


def newest_by_author(
    author_ids: list[int], *, cursor: Cursor, per_author: int
) -> list[tuple[str, int]]:
    """(timeline key, author id) of each author's ``per_author`` live posts
    nearest the cursor: the newest below ``before``, or the oldest above ``after``.
    Unordered across authors."""
    if not author_ids:
        return []
    if connection.vendor != "postgresql":
        return _newest_by_author_portable(author_ids, cursor=cursor, per_author=per_author)
    bounds = [_bounds(author_id, cursor) for author_id in author_ids]
    cursor_filter, params = "", {}
    if cursor.before is not None:
        cursor_filter, params["key"] = "AND p.timeline_key < %(key)s", cursor.before
    elif cursor.after is not None:
        cursor_filter, params["key"] = "AND p.timeline_key > %(key)s", cursor.after
    sql = _LATERAL.format(
        posts=Post._meta.db_table,
        cursor_filter=cursor_filter,
        direction="ASC" if cursor.newer_pages else "DESC",
    )
    params.update(
        lows=[low for low, _ in bounds], highs=[high for _, high in bounds], per_author=per_author
    )
    with connection.cursor() as db:
        db.execute(sql, params)
        return db.fetchall()


def _newest_by_author_portable(
    author_ids: list[int], *, cursor: Cursor, per_author: int
) -> list[tuple[str, int]]:
    posts = Post.objects.visible().filter(author_id__in=author_ids)
    if cursor.before is not None:
        posts = posts.filter(timeline_key__lt=cursor.before).order_by("-timeline_key")
    elif cursor.after is not None:
        posts = posts.filter(timeline_key__gt=cursor.after).order_by("timeline_key")
    else:
        posts = posts.order_by("-timeline_key")
    taken: dict[int, int] = defaultdict(int)
    rows = []
    for key, author_id in posts.values_list("timeline_key", "author_id").iterator():
        if taken[author_id] < per_author:
            taken[author_id] += 1
            rows.append((key, author_id))
    return rows


def merged(author_ids: list[int], *, cursor: Cursor, limit: int) -> list[str]:
    """The first ``limit`` keys of these authors' posts from the cursor on, in scan order."""
    rows = newest_by_author(author_ids, cursor=cursor, per_author=limit)
    keys = sorted({key for key, _ in rows}, reverse=not cursor.newer_pages)
    return keys[:limit]
