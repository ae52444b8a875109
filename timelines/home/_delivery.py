"""New posts into inboxes, and deleted ones back out: the writes of fan-out.

``deliver_to_followers`` is a fan-out chunk's one statement: the post's key
into the kept inboxes of the author's followers in a range of follower ids,
then their live caches. Each delivery of a new post ends by sending
``delivered`` (the hook live delivery attaches to, as Mastodon's streaming
hangs off its FeedManager's push); backfills, rebuilds and repairs bring old
posts and send nothing.
"""

from django.db import IntegrityError, connection, transaction
from django.dispatch import Signal

from relations.models import Follower
from timelines.home import _cache
from timelines.home._inbox import Inbox
from timelines.home._models import InboxEntry, InboxState
from timelines.home._trim import cap

# Sent with ``reader_ids`` (the inboxes a new post just reached, their caches
# included), ``timeline_key`` and ``author_id``, once per delivery.
delivered = Signal()


# The chunk's followers come first, from the author's Follower rows (one
# shard); the INSERT ... SELECT then takes those with a kept inbox from the
# state rows by reader id, the shard key of both the state and the inbox, so
# Citus runs it inside each shard (a join from Follower, sharded by the author,
# would repartition). The range on the reader ids lets the planner range-scan.
# No activity check: the trim sweep releases the inboxes of readers away
# (``_trim.sweep_batch``), since joined to each reader's user row here it was a
# large part of every chunk's statement (docs/BENCHMARKS.md has the figures).
# The chunk's followers come back as one value, an array's text (a JSON list on
# SQLite), that the INSERT takes as it is: no row of them reaches Python, where
# 10,000 ints in as rows and out through psycopg's list dumper were a large part
# of the worker's CPU a post.
_CHUNK_FOLLOWERS_SQL = """
SELECT {aggregate} FROM {follower}
WHERE user_id = %(author)s AND follower_id > %(after)s AND follower_id <= %(upto)s
"""
_FOLLOWERS = {
    "postgresql": ("array_agg(follower_id)::text", "= ANY(%(followers)s::text::bigint[])"),
    "sqlite": ("json_group_array(follower_id)", "IN (SELECT value FROM json_each(%(followers)s))"),
}
# The target's alias: pushed down to many shards without one, Citus wrote the
# RETURNING list against the table's own name, which the shard's statement lacks.
_PUSH_CHUNK_SQL = """
INSERT INTO {inbox} AS i (reader_id, timeline_key, author_id)
SELECT s.reader_id, %(key)s, %(author)s
FROM {state} s
WHERE s.reader_id {in_followers}
  AND s.reader_id > %(after)s AND s.reader_id <= %(upto)s
{on_conflict}
RETURNING reader_id
"""
# A plain INSERT, unless some of the rows are in already: a run of a chunk
# again (after its commit) or a rebuild that got there first. Then again with
# each such row updated in place, so that it is returned too and its cache
# pushed. ON CONFLICT on every run (DO NOTHING too) made every chunk's INSERT
# costlier for the rare run that needs it (docs/BENCHMARKS.md has the figures).
_ON_CONFLICT = "ON CONFLICT (reader_id, timeline_key) DO UPDATE SET author_id = excluded.author_id"


def deliver_to_followers(*, timeline_key: str, author_id: int, after: int, upto: int) -> list[int]:
    """Push a new post into the kept inboxes of its author's followers with ids in
    (``after``, ``upto``], then into their live caches; returns those readers.

    One INSERT ... SELECT. Should some of the rows be in already, it runs again
    with ON CONFLICT DO UPDATE (not DO NOTHING), so that a retry still returns
    every recipient and the cache push reaches them all.
    """
    params = {"key": timeline_key, "author": author_id, "after": after, "upto": upto}
    try:
        readers = _insert_chunk(params, on_conflict="")
    except IntegrityError:  # some rows are in already (_ON_CONFLICT)
        readers = _insert_chunk(params, on_conflict=_ON_CONFLICT)
    _cache.push(readers, [timeline_key], cap=cap())
    _announce(readers, timeline_key, author_id)
    return readers


def _insert_chunk(params: dict, *, on_conflict: str) -> list[int]:
    """The chunk's inbox rows, in one transaction: the readers they went to."""
    tables = {
        "inbox": InboxEntry._meta.db_table,
        "follower": Follower._meta.db_table,
        "state": InboxState._meta.db_table,
    }
    aggregate, in_followers = _FOLLOWERS[connection.vendor]
    with transaction.atomic(), connection.cursor() as db:
        db.execute(_CHUNK_FOLLOWERS_SQL.format(aggregate=aggregate, **tables), params)
        followers = db.fetchone()[0]
        statement = _PUSH_CHUNK_SQL.format(
            in_followers=in_followers, on_conflict=on_conflict, **tables
        )
        db.execute(statement, {**params, "followers": followers})
        return [row[0] for row in db.fetchall()]


def deliver_own(*, timeline_key: str, author_id: int) -> None:
    """The author sees their own new post at once, whatever their activity (if their
    inbox is kept: one that is not is rebuilt, post included, on their next page)."""
    own = Inbox(author_id)
    if own.is_kept():
        own.push([(timeline_key, author_id)])
        _announce([author_id], timeline_key, author_id)


def _announce(reader_ids: list[int], timeline_key: str, author_id: int) -> None:
    """``delivered``, robustly (Django logs a receiver's error): the post is in the
    inboxes, and a reader who missed the live notice finds it on the next page."""
    if reader_ids:
        delivered.send_robust(
            sender=None, reader_ids=reader_ids, timeline_key=timeline_key, author_id=author_id
        )


def withdraw(reader_ids: list[int], timeline_key: str) -> None:
    """A deleted post's key leaves these inboxes and their caches."""
    InboxEntry.objects.filter(reader_id__in=reader_ids, timeline_key=timeline_key).delete()
    _cache.remove(reader_ids, [timeline_key])


def withdraw_from_followers(*, timeline_key: str, author_id: int, after: int, upto: int) -> None:
    """A deleted post's key leaves the inboxes of its author's followers with ids in
    (``after``, ``upto``], filtered by reader (the shard key), like every query."""
    readers = list(
        Follower.objects.filter(
            user_id=author_id, follower_id__gt=after, follower_id__lte=upto
        ).values_list("follower_id", flat=True)
    )
    withdraw(readers, timeline_key)
