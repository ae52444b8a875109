"""Posts held in this process under their rows' versions: what a feed page shows, read
once per process rather than once per page, on PostgreSQL.

The entries statement (``timelines.home._items``) still checks the feed rule for
every page, and for the entries it keeps it hands back each row's version
instead of its columns: the post's and its author's, and for a repost its
original's and that author's. PostgreSQL writes a new row version for every
change, by any path (an edit, a count, a moderator's hide, a new display name),
and ``xmin``:``cmin`` (the transaction and the command that wrote it) tells
versions apart; a version never names two contents of a row. So a post held
under the version read is the row as it stands, and one that is not held is
read (one statement for all of a page's) and held: what is held is never
stale, only missing.

Held posts are shared between requests and threads, so nothing may change
them: what a reader may see of a post (what it quotes, whom it answers, their
likes) goes beside it, in the page's context (``posts.selectors.viewer_marks``),
never on it (which would take a copy of each post for each page). At most
``FEED_HELD_POSTS`` are held, the least recently shown going first. SQLite (no
row versions) and Citus (where a statement may not join a post to its original
on another shard) read posts with the entries, as before: ``enabled`` says which.
"""

from collections import OrderedDict
from threading import Lock

from django.conf import settings
from django.db import connection

from feed_project import sharding
from posts import page_queries
from posts.models import Post


def sql_version(post: str, author: str) -> str:
    """The version of a post row and its author's row, as text (NULL without a post)."""
    return (
        f"({post}.xmin::text || ':' || {post}.cmin::text || '/'"
        f" || {author}.xmin::text || ':' || {author}.cmin::text)"
    )


def enabled() -> bool:
    """Whether feeds read their posts through here: on PostgreSQL but not Citus, when
    FEED_HELD_POSTS allows any."""
    return settings.FEED_HELD_POSTS > 0 and sharding.on_plain_postgresql(connection)


class _Shelf:
    """Post id to (version, post with its author), least recently used first; one per
    process, shared by its threads."""

    def __init__(self) -> None:
        self._rows: OrderedDict[tuple[str, str], tuple[str, Post]] = OrderedDict()
        self._lock = Lock()

    def find(self, database: str, versions: dict[str, str]) -> dict[str, Post]:
        """Those of these post ids held at these versions (one lock for a page's)."""
        found = {}
        with self._lock:
            for post_id, version in versions.items():
                key = (database, post_id)
                held = self._rows.get(key)
                if held is not None and held[0] == version:
                    self._rows.move_to_end(key)
                    found[post_id] = held[1]
        return found

    def put(self, key: tuple[str, str], version: str, post: Post) -> None:
        with self._lock:
            self._rows[key] = (version, post)
            self._rows.move_to_end(key)
            while len(self._rows) > settings.FEED_HELD_POSTS:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


_shelf = _Shelf()


def clear() -> None:
    """Forget every held post, as a new process starts."""
    _shelf.clear()


def posts(versions: dict[str, str]) -> dict[str, Post]:
    """The posts of these ids as they stand at these versions (read and held when not
    held), each with its author: shared, never to be changed. A post gone since its
    version was read is left out."""
    database = connection.settings_dict["NAME"]
    found = _shelf.find(database, versions)
    missing = [post_id for post_id in versions if post_id not in found]
    if missing:
        for version, post in _read(missing):
            _shelf.put((database, post.pk), version, post)
            found[post.pk] = post
    return found


def _read(post_ids: list[str]) -> list[tuple[str, Post]]:
    """(version, post with its author) of these posts: the version read with the row,
    so the two always agree."""
    params: dict[str, object] = {}
    columns = f"{sql_version('p', 'a')}, {page_queries.post_and_author_columns('p', 'a')}"
    sql = page_queries.by_ids(post_ids, params, columns=columns)
    with connection.cursor() as db:
        db.execute(sql, params)
        return [(row[0], page_queries.post_of(row[1:])) for row in db.fetchall()]
