"""What a rebuild writes into an inbox (``Inbox.rebuild`` owns the steps around it).

The newest FEED_REBUILD_PER_AUTHOR posts of each author (the reader's followees
and the reader) are pulled. Where an author had more, the pull is complete only
above that author's oldest pulled key, so nothing below the highest such key
(the floor) is written, and the newest FEED_INBOX_CAP above it are. On
PostgreSQL that is one INSERT ... SELECT (a LATERAL index scan per author,
the floor and the cap in the database: 20,000 pulled rows never leave it); on
Citus, which cannot push a LIMIT down a LATERAL join, and on SQLite, the rows
come back from ``timelines.home._pull`` and the same choice is made here.
"""

from dataclasses import dataclass

from django.db import connection

from feed_project.pagination import Cursor
from feed_project.sharding import on_plain_postgresql
from posts.models import Post
from timelines.home import _pull
from timelines.home._models import InboxEntry


@dataclass(frozen=True)
class Written:
    pulled: int  # rows the pull read
    oldest: str | None  # the oldest key written (None: nothing)
    cut_off: bool  # the pull or the cap stopped above older posts


_REBUILD_SQL = """
WITH pulled AS (
    SELECT p.timeline_key, p.author_id,
           count(*) OVER w AS taken, min(p.timeline_key) OVER w AS lowest
    FROM unnest(%(authors)s::bigint[]) AS b(author)
    CROSS JOIN LATERAL (
        SELECT timeline_key, author_id FROM {posts} p
        WHERE p.author_id = b.author AND p.deleted_at IS NULL AND p.hidden_at IS NULL
        ORDER BY p.id DESC LIMIT %(per_author)s
    ) p
    WINDOW w AS (PARTITION BY p.author_id)
), floor AS (
    SELECT max(lowest) AS key FROM pulled WHERE taken >= %(per_author)s
), kept AS (
    SELECT pulled.timeline_key, pulled.author_id FROM pulled, floor
    WHERE floor.key IS NULL OR pulled.timeline_key >= floor.key
    ORDER BY pulled.timeline_key DESC LIMIT %(cap)s
), written AS (
    INSERT INTO {inbox} (reader_id, timeline_key, author_id)
    SELECT %(reader)s, timeline_key, author_id FROM kept
    ON CONFLICT DO NOTHING
)
SELECT (SELECT count(*) FROM pulled), min(timeline_key), count(*), (SELECT key FROM floor)
FROM kept
"""


def write(authors: list[int], *, reader_id: int, per_author: int, cap: int) -> Written:
    """Write what the rebuild keeps of these authors' posts into the reader's inbox."""
    if on_plain_postgresql(connection):
        return _write_in_database(reader_id, authors, per_author=per_author, cap=cap)
    rows = _pull.nearest_by_author(authors, cursor=Cursor(), per_author=per_author)
    kept, cut_off = keep(rows, per_author=per_author, cap=cap)
    InboxEntry.objects.bulk_create(
        [InboxEntry(reader_id=reader_id, timeline_key=key, author_id=a) for key, a in kept],
        ignore_conflicts=True,
    )
    return Written(pulled=len(rows), oldest=kept[-1][0] if kept else None, cut_off=cut_off)


def _write_in_database(reader_id: int, authors: list[int], *, per_author: int, cap: int) -> Written:
    with connection.cursor() as db:
        db.execute(
            _REBUILD_SQL.format(posts=Post._meta.db_table, inbox=InboxEntry._meta.db_table),
            {
                "authors": authors,
                "per_author": per_author,
                "cap": cap,
                "reader": reader_id,
            },
        )
        pulled, oldest, kept, floor = db.fetchone()
    return Written(
        pulled=pulled, oldest=oldest, cut_off=kept > 0 and (floor is not None or kept == cap)
    )


def keep(
    rows: list[tuple[str, int]], *, per_author: int, cap: int
) -> tuple[list[tuple[str, int]], bool]:
    """Of pulled (key, author) rows: the newest ``cap`` at or above the floor,
    newest first, and whether the pull was cut off below them."""
    count: dict[int, int] = {}
    oldest: dict[int, str] = {}
    for key, author_id in rows:
        count[author_id] = count.get(author_id, 0) + 1
        oldest[author_id] = min(key, oldest.get(author_id, key))
    # Authors who returned per_author posts may have older ones: below the
    # highest of their oldest pulled keys, the pull is not complete.
    floor = max((oldest[a] for a, n in count.items() if n >= per_author), default="")
    # Only what the capped inbox keeps is written: the rest would be trimmed at once.
    kept = sorted((row for row in rows if row[0] >= floor), reverse=True)[:cap]
    return kept, bool(kept) and (bool(floor) or len(kept) == cap)
