"""Sizing (docs/SCALING.md): measured bytes per row and per cached inbox, scaled up.

``manage.py bench_sizing`` writes SAMPLE rows of typical content into each
table the model sizes, inside a transaction it rolls back (on Citus:
committed, measured, then deleted), and reads how much each table grew
(heap, indexes and TOAST; on a Citus coordinator, over every shard): bytes
per row as freshly written, so real tables, whose indexes split and bloat,
run larger. A Redis list filled like a cached inbox at
the cap (``FEED_INBOX_CAP`` keys, through ``timelines.home._cache``) gives the
memory of one cached inbox (``MEMORY USAGE``). Then it multiplies by a
written-down model of one user (``PerUser``) for each population.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from feed_project import sharding
from posts import ids
from posts.models import Like, Post
from relations.models import Followee, Follower
from timelines.home import _cache as cache
from timelines.home._models import InboxEntry, InboxState
from timelines.notifications.models import Notification

Log = Callable[[str], None]
SAMPLE = 20_000
# A post as people write them: Weibo's and Mastodon's averages are well under 140 characters.
TEXT = "Lunch at the new noodle place by the station, worth the queue. 排队半小时 值得"


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


def _sample_rows(n: int) -> dict[type, list]:
    """``n`` rows of each sized table, as the site writes them, about ``n`` users."""
    now = timezone.now()
    users = [
        User(
            id=10**9 + i,
            username=f"sizing_{i}",
            display_name=f"Sizing User {i}",
            email=f"sizing_{i}@example.com",
            bio="Coffee, trains and long walks. 喜欢咖啡和火车。",
            password="pbkdf2_sha256$1000000$" + "x" * 22 + "$" + "y" * 44,
            last_active_at=now,
        )
        for i in range(n)
    ]
    posts = []
    for i, user in enumerate(users):
        post_id = ids.make_post_id(ids.KeyParts(time=10**8 + i, author=user.id, seq=0))
        key = ids.post_id_to_timeline_key(post_id)
        posts.append(Post(id=post_id, timeline_key=key, author_id=user.id, text=TEXT))
    pairs = [(users[i].id, users[(i * 7 + 1) % n].id) for i in range(n)]
    return {
        User: users,
        Post: posts,
        Follower: [Follower(user_id=b, follower_id=a, created_at=now) for a, b in pairs],
        Followee: [Followee(user_id=a, followee_id=b, created_at=now) for a, b in pairs],
        Like: [
            Like(user_id=a, post_id=posts[i].id, created_at=now) for i, (a, _) in enumerate(pairs)
        ],
        Notification: [
            Notification(
                recipient_id=b, kind="like", actor_id=a, post_id=posts[i].id, created_at=now
            )
            for i, (a, b) in enumerate(pairs)
        ],
        InboxEntry: [
            InboxEntry(reader_id=a, timeline_key=posts[i].timeline_key, author_id=b)
            for i, (a, b) in enumerate(pairs)
        ],
        InboxState: [InboxState(reader_id=u.id, built_at=now - timedelta(days=1)) for u in users],
    }


class _RollBack(Exception):
    pass


# The column each sample row is keyed by: a sample user's id (one shard each on Citus).
OWNER = {
    User: "id",
    Post: "author",
    Follower: "user",
    Followee: "user",
    Like: "user",
    Notification: "recipient",
    InboxEntry: "reader",
    InboxState: "reader",
}


def _sizes(db, tables: list[str], size: str) -> dict[str, int]:
    db.execute(f"SELECT {', '.join(f'{size}(%s)' for _ in tables)}", tables)
    return dict(zip(tables, db.fetchone(), strict=True))


def _write(rows: dict[type, list]) -> None:
    for model, objects in rows.items():
        model.objects.bulk_create(objects, batch_size=2_000)


def _delete(rows: dict[type, list]) -> None:
    """Delete the committed sample rows, by their owners' ids, children before parents."""
    owners = [user.pk for user in rows[User]]
    with transaction.atomic(), connection.cursor() as db:
        for model in reversed(rows):
            column = model._meta.get_field(OWNER[model]).column
            db.execute(f"DELETE FROM {model._meta.db_table} WHERE {column} = ANY(%s)", [owners])


def bytes_per_row(log: Log, n: int = SAMPLE) -> dict[str, float]:
    """How much each sized table grows per row written, measured on ``n`` sample rows.

    On plain PostgreSQL the rows are written, measured and rolled back in one
    transaction. Citus measures a distributed table over other connections and
    refuses to in a transaction that wrote rows, so there they are committed,
    measured, then deleted.
    """
    rows = _sample_rows(n)
    tables = [model._meta.db_table for model in rows]
    if sharding.on_citus(connection):
        with connection.cursor() as db:
            before = _sizes(db, tables, "citus_total_relation_size")
        with transaction.atomic():
            _write(rows)
        try:
            with connection.cursor() as db:
                after = _sizes(db, tables, "citus_total_relation_size")
        finally:
            _delete(rows)
        log(f"wrote, measured and deleted {n:,} rows in each of {len(tables)} tables")
        return {t: (after[t] - before[t]) / n for t in tables}
    grown: dict[str, float] = {}
    try:
        with transaction.atomic(), connection.cursor() as db:
            before = _sizes(db, tables, "pg_total_relation_size")
            _write(rows)
            after = _sizes(db, tables, "pg_total_relation_size")
            grown = {t: (after[t] - before[t]) / n for t in tables}
            raise _RollBack
    except _RollBack:
        pass
    log(f"wrote and rolled back {n:,} rows in each of {len(tables)} tables")
    return grown


def cached_inbox_bytes(reader_id: int = 2**31 - 7) -> tuple[int, str]:
    """``MEMORY USAGE`` and encoding of a cached inbox holding FEED_INBOX_CAP keys.

    Written through ``timelines.home._cache`` as a rebuild writes it, for a reader id
    no one has, and deleted after.
    """
    redis = cache.client()
    if redis is None:
        raise RuntimeError("bench_sizing needs Redis (REDIS_URL)")
    cap = settings.FEED_INBOX_CAP
    keys = sorted(  # newest first, as the table hands them to a fill
        ids.post_id_to_timeline_key(ids.make_post_id(ids.KeyParts(time=n, author=n % 997, seq=0)))
        for n in range(1_000_000, 1_000_000 + cap)
    )[::-1]
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
    """The model multiplied out for ``users``, by the measured bytes per row."""
    tables = {
        table: users * rows(model) * per_row[table]
        for table, rows in ROWS_PER_USER.items()
        if table in per_row
    }
    return Sized(users, tables, users * model.active_share * inbox_bytes)
