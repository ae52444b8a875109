"""Opening a reader's inbox for a page: the state statement, and the rebuild when the
inbox is not built.

A page needs three things before it reads keys (``timelines.home._page``): whether
the inbox is built, the cache generation, and the pulled authors the reader
follows. One statement reads them, alone or as the prelude of the page's
entries statement (``state_prelude``), after a cache read under the
generation this process last saw (``seen_generation``).
"""

import functools
import json
from dataclasses import dataclass
from threading import Lock

from django.conf import settings
from django.core.cache import cache as django_cache
from django.db import connection

from posts import page_queries
from relations.visibility import sql_followed_or_self
from timelines import outbox
from timelines.home._inbox import Inbox
from timelines.home._items import Prelude
from timelines.home._models import CacheGeneration, InboxState
from timelines.models import PullAuthor


class NotBuilt:
    """The source of a visit that does not wait for its inbox's rebuild: it holds
    nothing and covers nothing, so ``timelines.home._page`` pulls every window."""

    def older(self, before: str | None, limit: int) -> list[str]:
        return []

    def newer(self, after: str, limit: int) -> tuple[list[str], bool]:
        return [], False


@dataclass(frozen=True)
class OpenInbox:
    """A source of keys ready to read, and the pulled authors among its reader's
    followees and the reader, whose posts it does not hold: a page merges theirs in."""

    inbox: Inbox | NotBuilt
    pulled: list[int]


# Whether the inbox is built, the cache generation, the pulled authors the
# reader follows (or is) and the inbox's floor, in order, in one row (no row:
# the inbox is not kept):
# what every page needs before it reads keys. Most readers of a microblog follow
# some big account; asking for them apart cost such a page a QuerySet of its
# own. Alone it is a page's first statement; as a page's prelude
# (``state_prelude``) it rides in the entries statement's round trip.
_STATE_SQL = """
SELECT s.built_at IS NOT NULL AS built,
       COALESCE((SELECT g.value FROM {generation} g WHERE g.id = 1), 0) AS generation,
       {pulled} AS pulled,
       s.floor
FROM {state} s
WHERE s.reader_id = %(viewer)s
"""
STATE_WIDTH = 4  # its columns


# The pulled authors as an array; SQLite, which has none, lists them in JSON.
_PULLED = {
    "postgresql": "ARRAY({authors})",
    "sqlite": "(SELECT json_group_array(author_id) FROM ({authors}))",
}


@functools.cache
def _state_sql() -> str:
    # A probe of the reader's follows for each pulled author (the big accounts, a
    # few): left to itself, PostgreSQL hashed all of the reader's follows for a
    # page, for the sake of those few.
    followed = sql_followed_or_self("pa.author_id", few_rows=True)
    authors = (
        f"SELECT pa.author_id FROM {PullAuthor._meta.db_table} pa"
        f" WHERE {followed} ORDER BY pa.author_id"
    )
    return _STATE_SQL.format(
        generation=CacheGeneration._meta.db_table,
        pulled=_PULLED[connection.vendor].format(authors=authors),
        state=InboxState._meta.db_table,
    )


# The generation the last state read in this process found, by database: what a
# page's cache read goes by before the state is read (``state_prelude``).
_seen: dict[str, int] = {}
# The pulled authors the last state read in this process found for a reader, for
# the readers who had some, the latest last: what a page merges in before the
# state is read. At most PULLED_SEEN_READERS (a few hundred bytes each).
_pulled_seen: dict[int, list[int]] = {}
_pulled_seen_lock = Lock()
PULLED_SEEN_READERS = 10_000


def seen_generation() -> int | None:
    """The cache generation this process last read, or None before its first read."""
    return _seen.get(connection.settings_dict["NAME"])


def pulled_seen(reader_id: int) -> list[int]:
    """The pulled authors this process last found for the reader (none if it has not
    read their state): a guess, which ``state_prelude`` checks."""
    return _pulled_seen.get(reader_id, [])


def _saw_pulled(reader_id: int, pulled: list[int]) -> None:
    with _pulled_seen_lock:  # shared by the process's threads
        _pulled_seen.pop(reader_id, None)
        if pulled:
            if len(_pulled_seen) >= PULLED_SEEN_READERS:
                del _pulled_seen[next(iter(_pulled_seen))]  # the least recently read
            _pulled_seen[reader_id] = pulled


def state_prelude(reader_id: int, generation: int, *, pulled: list[int], lowest: str) -> Prelude:
    """The state statement as a page's prelude, holding when what the page read before
    it are the page's: the inbox built, the cache read of ``generation``, the
    pulled authors the page merges in (``pulled``, in order) theirs, and no key
    read (``lowest``, the lowest) below the floor."""
    params: dict[str, object] = {"viewer": reader_id, "guess": generation, "lowest": lowest}
    pulled_array = page_queries.array(pulled, params, "pulled", "bigint")
    return Prelude(
        sql=_state_sql(),
        params=params,
        holds=(
            f"pre.built AND pre.generation = %(guess)s AND pre.pulled = {pulled_array}"
            " AND pre.floor <= %(lowest)s"
        ),
        width=STATE_WIDTH,
    )


def opened_from(
    reader_id: int, rows: list[tuple], *, read: Inbox | None = None
) -> OpenInbox | None:
    """The inbox as the state statement's row says (its first STATE_WIDTH columns),
    or None unless it is built. ``read``, an inbox read from already, is kept when
    the row names its generation."""
    if not rows or not rows[0][0]:
        return None
    _, generation, pulled, floor = rows[0][:STATE_WIDTH]
    if isinstance(pulled, str):  # SQLite's JSON
        pulled = sorted(json.loads(pulled))
    _seen[connection.settings_dict["NAME"]] = generation
    _saw_pulled(reader_id, pulled)
    if read is None or read.generation != generation:
        read = Inbox(reader_id, generation=generation)
    read.floor = floor
    return OpenInbox(read, pulled=pulled)


def _read_state(reader_id: int, *, read: Inbox | None = None) -> OpenInbox | None:
    """One query for what every page needs before it reads keys; None unless built."""
    with connection.cursor() as db:
        db.execute(_state_sql(), {"viewer": reader_id})
        return opened_from(reader_id, db.fetchall(), read=read)


REBUILD_QUEUED = "rebuild-queued:{}"  # a cache key: this reader's rebuild is on its way


def open_built(reader_id: int, *, following: int, read: Inbox | None = None) -> OpenInbox:
    """The reader's inbox, built first when it is not (never visited, or
    released while away): the step a home page takes before it reads.

    A reader who follows more than FEED_REBUILD_INLINE_FOLLOWING accounts does not
    wait for that: the rebuild (thousands of authors' posts) is queued, and until it
    is done the pages are pulled, which ``timelines.home._pull.merged`` does in two
    passes (seed 000's answer to readers who follow thousands). ``read``: as for
    ``opened_from``, kept only when the inbox was built already.
    """
    opened = _read_state(reader_id, read=read)
    if opened is not None:
        return opened
    if following > settings.FEED_REBUILD_INLINE_FOLLOWING:
        key = REBUILD_QUEUED.format(reader_id)
        if django_cache.add(key, 1, timeout=settings.FEED_SWEEP_AFTER_SECONDS):
            outbox.send("timelines.rebuild", reader_id)
        return OpenInbox(NotBuilt(), pulled=[])  # the pull reads every followee
    Inbox(reader_id).rebuild()
    opened = _read_state(reader_id)
    assert opened is not None  # the rebuild has just marked it built
    return opened
