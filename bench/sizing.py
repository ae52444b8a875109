"""Sizing (docs/SCALING.md): measured bytes per row and per cached inbox, scaled up.

``manage.py bench_sizing`` reads the database it is pointed at (a bench world:
``bench_timelines`` builds one) after ``VACUUM ANALYZE``: rows and bytes of
every table of ``feed_project.sharding`` (heap, indexes and TOAST; on a Citus
coordinator, over every shard). A Redis sorted set filled like a cached inbox
at the cap (``FEED_INBOX_CAP`` keys, through ``timelines.cache``) gives the
memory of one cached inbox (``MEMORY USAGE``). Then it multiplies by a
written-down model of one user (``PerUser``) for each population.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from feed_project import sharding
from posts import ids
from timelines import cache

Log = Callable[[str], None]
# Fewer rows than this say little about a table's bytes per row.
MIN_ROWS = 10_000


@dataclass(frozen=True)
class PerUser:
    """What one user costs on average: the model the sizing multiplies out."""

    follows: int = 200  # rows in each of relations_follower and relations_followee
    posts: int = 500  # kept posts and reposts
    likes: int = 1_000
    notifications: int = 300
    active_share: float = 0.2  # readers seen within FEED_INACTIVE_DAYS: inbox and cache kept


# Tables the model sizes, by the PerUser field that counts their rows per user.
ROWS_PER_USER = {
    "accounts_user": lambda m: 1,
    "relations_follower": lambda m: m.follows,
    "relations_followee": lambda m: m.follows,
    "posts_post": lambda m: m.posts,
    "posts_like": lambda m: m.likes,
    "timelines_notification": lambda m: m.notifications,
    "timelines_inboxentry": lambda m: m.active_share * settings.FEED_INBOX_CAP,
    "timelines_inboxstate": lambda m: m.active_share,
}
# A Citus worker holds at most this much (data and indexes; an NVMe disk with
# room to rebalance), a Redis master at most this much (a failover copies it).
WORKER_BYTES = 1 << 40
REDIS_MASTER_BYTES = 25 << 30


@dataclass(frozen=True)
class Measured:
    table: str
    rows: int
    bytes: int

    @property
    def per_row(self) -> float | None:
        return self.bytes / self.rows if self.rows >= MIN_ROWS else None


def measure_tables(log: Log) -> list[Measured]:
    """Rows and total bytes of every table of the sharding map, after VACUUM ANALYZE."""
    citus = sharding.on_citus(connection)
    size = "citus_total_relation_size" if citus else "pg_total_relation_size"
    found = []
    with connection.cursor() as db:
        for table in sharding.TABLES:
            db.execute("SELECT to_regclass(%s) IS NOT NULL", [table])
            if not db.fetchone()[0]:
                continue
            db.execute(f'VACUUM ANALYZE "{table}"')
            db.execute(f'SELECT count(*), {size}(%s) FROM "{table}"', [table])
            rows, total = db.fetchone()
            found.append(Measured(table, rows, total))
    log(f"measured {len(found)} tables ({'Citus' if citus else 'PostgreSQL'})")
    return found


def cached_inbox_bytes(reader_id: int = 2**31 - 7) -> tuple[int, str]:
    """``MEMORY USAGE`` and encoding of a cached inbox holding FEED_INBOX_CAP keys.

    Written through ``timelines.cache`` as a rebuild writes it, for a reader id
    no one has, and deleted after.
    """
    redis = cache.client()
    if redis is None:
        raise RuntimeError("bench_sizing needs Redis (REDIS_URL)")
    cap = settings.FEED_INBOX_CAP
    keys = sorted(
        ids.post_id_to_timeline_key(ids.make_post_id(ids.KeyParts(time=n, author=n % 997, seq=0)))
        for n in range(1_000_000, 1_000_000 + cap)
    )
    inbox = cache.CachedInbox(reader_id, cache.generation())
    token = inbox.begin_fill()
    if token is None or not inbox.finish_fill(token, keys):
        raise RuntimeError("could not write the sample inbox to Redis")
    try:
        return int(redis.memory_usage(inbox.key)), redis.object("encoding", inbox.key).decode()
    finally:
        cache.drop(reader_id)


@dataclass(frozen=True)
class Sized:
    users: int
    table_bytes: dict[str, float]
    redis_bytes: float

    @property
    def database_bytes(self) -> float:
        return sum(self.table_bytes.values())

    @property
    def workers(self) -> int:
        return max(2, math.ceil(self.database_bytes / WORKER_BYTES))

    @property
    def redis_masters(self) -> int:
        return max(3, math.ceil(self.redis_bytes / REDIS_MASTER_BYTES))


def size_for(users: int, per_row: dict[str, float], inbox_bytes: int, model: PerUser) -> Sized:
    tables = {
        table: users * rows(model) * per_row[table]
        for table, rows in ROWS_PER_USER.items()
        if table in per_row
    }
    return Sized(users, tables, users * model.active_share * inbox_bytes)
