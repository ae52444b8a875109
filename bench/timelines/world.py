"""The bench world: reused when its marker matches, else built in bulk (COPY, INSERT ... SELECT)."""

import random
import time
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any

from django.contrib.auth.hashers import make_password
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from bench.timelines.rebuild import raw_rebuild
from bench.timelines.spec import (
    AUTHOR,
    FOLLOWER,
    IDLE,
    READER,
    Log,
    World,
    WorldError,
    WorldSpec,
)
from posts import ids
from relations.models import Followee, Follower

POSTS_WINDOW = timedelta(days=21)
FOLLOWS_WINDOW = timedelta(days=28)
IDLE_FOR = timedelta(days=30)


def ensure_world(spec: WorldSpec, *, rebuild: bool, log: Log) -> World:
    """Reuse the bench world of this size, or build it (after dropping another one)."""
    spec.check()
    if connection.vendor != "postgresql":
        raise WorldError("the benchmark needs PostgreSQL (set DATABASE_URL)")
    if User._meta.db_table not in connection.introspection.table_names():
        name = connection.settings_dict["NAME"]
        raise WorldError(f"database {name!r} has no tables: run manage.py migrate on it first")
    started = time.perf_counter()
    marker = User.objects.filter(username=AUTHOR).values_list("bio", flat=True).first()
    built = False
    if marker is not None and (rebuild or marker != spec.marker):
        if not rebuild:
            raise WorldError(
                f"this database holds another bench world ({marker!r}); "
                "pass --rebuild-world to replace it"
            )
        _drop_world(log)
        marker = None
    if marker is None:
        _build_world(spec, log)
        built = True
    world = _load_world(started, built=built)
    if not built:
        _refresh_activity(world)
    return world


def _load_world(started: float, *, built: bool) -> World:
    author = User.objects.values("id", "followers_count").get(username=AUTHOR)
    return World(
        author_id=author["id"],
        reader_id=User.objects.values_list("id", flat=True).get(username=READER),
        idle_ids=list(
            User.objects.filter(username__startswith=IDLE)
            .order_by("id")
            .values_list("id", flat=True)
        ),
        followers=author["followers_count"],
        posts=count_rows("SELECT count(*) FROM posts_post"),
        built=built,
        seconds=time.perf_counter() - started,
    )


def count_rows(sql: str, params: Iterable[Any] = ()) -> int:
    """The single value a ``SELECT count(*) ...`` returns."""
    with connection.cursor() as db:
        db.execute(sql, list(params))
        return db.fetchone()[0]


def _refresh_activity(world: World) -> None:
    """A reused world stays "active": followers last seen over a day ago are seen now."""
    with connection.cursor() as db:
        # The followers as a list, not a join: on Citus they are on other shards.
        db.execute(
            "UPDATE accounts_user SET last_active_at = %s WHERE last_active_at < %s "
            "AND id IN (SELECT follower_id FROM relations_follower WHERE user_id = %s)",
            [timezone.now(), timezone.now() - timedelta(days=1), world.author_id],
        )


def _drop_world(log: Log) -> None:
    """Empty the tables the bench writes. Only in a database that holds nothing else."""
    others = User.objects.exclude(username__startswith=FOLLOWER).count()
    if others:
        raise WorldError(
            f"this database has {others} users besides the bench world: "
            "use a dedicated database (see docs/BENCHMARKS.md)"
        )
    log("dropping the old bench world")
    with connection.cursor() as db:
        # TRUNCATE, not DELETE: posts.author_id has no index (posts are found by
        # their primary key), so the foreign-key check of deleting 100,000 users
        # would scan the post table once per user. CASCADE reaches every table
        # that points at users or posts; the inbox has no constraint, so by name.
        db.execute(
            "TRUNCATE accounts_user, accounts_usernameclaim, posts_post, timelines_inboxentry "
            "CASCADE"
        )


def _build_world(spec: WorldSpec, log: Log) -> None:
    """Write the world in one transaction: a failed build leaves nothing behind."""
    rng = random.Random(spec.seed)
    now = timezone.now()
    with transaction.atomic():
        step = _Steps(log)
        names = [AUTHOR, READER]
        names += [f"{FOLLOWER}{i}" for i in range(1, spec.users)]
        names += [f"{IDLE}{i}" for i in range(1, spec.idle_readers + 1)]
        by_name = _insert_users(names, spec, now)
        step(f"{len(names):,} users")

        author, reader = by_name[AUTHOR], by_name[READER]
        followers = [reader] + [by_name[f"{FOLLOWER}{i}"] for i in range(1, spec.users)]
        posting = [by_name[f"{FOLLOWER}{i}"] for i in range(1, spec.authors + 1)]
        idle = [by_name[f"{IDLE}{i}"] for i in range(1, spec.idle_readers + 1)]
        follows = [(f, author) for f in followers]
        follows += [(reader, a) for a in rng.sample(posting, spec.following - 1)]
        for idle_id in idle:
            follows += [(idle_id, a) for a in rng.sample(posting, spec.following)]
        insert_follows(rng, follows, now)
        step(f"{len(follows):,} follows (x2: Follower and Followee)")

        posts = _insert_posts(rng, posting, spec, now)
        step(f"{posts:,} posts by {len(posting):,} authors")
        if spec.filler_posts:
            fillers = [by_name[f"{FOLLOWER}{i}"] for i in range(spec.authors + 1, spec.users)]
            _insert_filler_posts(fillers, spec.filler_posts, now)
            step(f"{spec.filler_posts:,} filler posts by {len(fillers):,} accounts nobody reads")

        with connection.cursor() as db:
            db.execute(
                "INSERT INTO timelines_inboxstate (reader_id, built_at) "
                "SELECT id, %s FROM unnest(%s::bigint[]) AS o(id)",
                [now, followers],
            )
        set_counters()
        # Written last: it is what tells a later run that the world is complete.
        User.objects.filter(pk=author).update(bio=spec.marker)
        step(f"{len(followers):,} kept inboxes, counters")
    with connection.cursor() as db:
        db.execute(
            "ANALYZE accounts_user, relations_follower, relations_followee, posts_post, "
            "timelines_inboxstate, timelines_inboxentry"
        )
    step("ANALYZE")
    # The rows Inbox.rebuild keeps (figure 3 checks that they are the same),
    # written by SQL so that the world does not depend on the code it measures.
    raw_rebuild(reader)
    step(f"{READER}'s inbox")
    _check_invariants(log)


class _Steps:
    def __init__(self, log: Log) -> None:
        self.log, self.last = log, time.perf_counter()

    def __call__(self, what: str) -> None:
        now = time.perf_counter()
        self.log(f"  world: {what} in {now - self.last:.1f} s")
        self.last = now


def _insert_users(names: list[str], spec: WorldSpec, now: Any) -> dict[str, int]:
    idle = set(range(len(names) - spec.idle_readers, len(names)))
    seen = [now - IDLE_FOR if i in idle else now for i in range(len(names))]
    with connection.cursor() as db:
        db.execute(
            """
            INSERT INTO accounts_user (
                password, is_superuser, username, first_name, last_name, email, is_staff,
                is_active, date_joined, display_name, bio, last_active_at,
                followers_count, following_count, posts_count)
            SELECT %(password)s, false, u.name, '', '', '', false,
                true, %(joined)s, '', '', u.seen, 0, 0, 0
            FROM unnest(%(names)s::text[], %(seen)s::timestamptz[]) AS u(name, seen)
            RETURNING username, id
            """,
            {
                "password": make_password(None),  # unusable: nobody logs in as these
                "joined": now - timedelta(days=60),
                "names": names,
                "seen": seen,
            },
        )
        by_name = dict(db.fetchall())
        # Their names' claims (accounts.unique_names), as User.save would write them.
        db.execute(
            "INSERT INTO accounts_usernameclaim (name, user_id) "
            "SELECT lower(u.username), u.id FROM accounts_user u WHERE u.id = ANY(%s)",
            [list(by_name.values())],
        )
        return by_name


def _copy(table: str, columns: tuple[str, ...], rows: Iterable[tuple[Any, ...]]) -> None:
    """COPY FROM STDIN: no model instances, no per-batch INSERT.

    (timelines.demo has the same writer, private to the demo world builder.)
    """
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as db, db.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def insert_follows(rng: random.Random, follows: list[tuple[int, int]], now: Any) -> None:
    """Each follow twice, once per table, from the same (follower, followee, moment)."""
    window = int(FOLLOWS_WINDOW.total_seconds())
    at = [now - timedelta(seconds=rng.randrange(window)) for _ in follows]
    edges = sorted(range(len(follows)), key=lambda e: follows[e])
    _copy(
        "relations_followee",
        ("user_id", "followee_id", "created_at"),
        ((follows[e][0], follows[e][1], at[e]) for e in edges),
    )
    # Grouped by followee, so the Follower B-tree fills in primary-key order.
    edges.sort(key=lambda e: (follows[e][1], follows[e][0]))
    _copy(
        "relations_follower",
        ("user_id", "follower_id", "created_at"),
        ((follows[e][1], follows[e][0], at[e]) for e in edges),
    )


def _insert_posts(rng: random.Random, authors: list[int], spec: WorldSpec, now: Any) -> int:
    window_ms = POSTS_WINDOW // timedelta(milliseconds=1)
    first_ms = ids.time_of(now) - window_ms
    total = 0

    def rows() -> Iterator[tuple[str, str, int, str]]:
        nonlocal total
        for author_id in sorted(authors):
            count = rng.randint(spec.posts_min, spec.posts_max)
            # Distinct milliseconds, so every post has sequence 0; ids ascend per author.
            for n, ms in enumerate(sorted(rng.sample(range(window_ms), count))):
                post_id = ids.make_post_id(
                    ids.KeyParts(time=first_ms + ms, author=author_id, seq=0)
                )
                total += 1
                yield post_id, ids.post_id_to_timeline_key(post_id), author_id, f"bench post {n}"

    _copy("posts_post", ("id", "timeline_key", "author_id", "text"), rows())
    return total


def _base36(expr: str, width: int) -> str:
    """SQL for ``ids.encode_number(expr, width)``: the bench writes millions of ids in
    the database, not through Python."""
    digits = [
        f"substr('{ids.ALPHABET}', mod(({expr}) / {ids.BASE**i}, {ids.BASE})::int + 1, 1)"
        for i in reversed(range(width))
    ]
    return " || ".join(digits)


def _insert_filler_posts(authors: list[int], count: int, now: Any) -> None:
    """``count`` posts spread evenly over the posts' window, each by one of ``authors``
    (a stride through them), written by one INSERT ... SELECT."""
    window_ms = POSTS_WINDOW // timedelta(milliseconds=1)
    first_ms = ids.time_of(now) - window_ms
    time, author = "f.t", "f.a"
    time_digits, author_digits = _base36(time, ids.TIME_WIDTH), _base36(author, ids.AUTHOR_WIDTH)
    seq = "'" + ids.ALPHABET[0] * ids.SEQ_WIDTH + "'"
    with connection.cursor() as db:
        db.execute(
            f"""INSERT INTO posts_post (id, timeline_key, author_id, text)
            SELECT {author_digits} || {time_digits} || {seq},
                   {time_digits} || {author_digits} || {seq}, f.a, 'bench filler post'
            FROM (SELECT %(first)s::bigint + g * %(window)s::bigint / %(count)s AS t,
                         (%(authors)s::bigint[])[1 + mod(g::bigint * 7919, %(n)s)] AS a
                  FROM generate_series(0, %(count)s - 1) AS g) f""",
            {
                "first": first_ms,
                "window": window_ms,
                "count": count,
                "authors": authors,
                "n": len(authors),
            },
        )


_COUNTERS = """
UPDATE accounts_user u SET {column} = c.n
FROM (SELECT {key} AS id, count(*) AS n FROM {table} {where} GROUP BY {key}) c
WHERE u.id = c.id
"""


def set_counters() -> None:
    """Counters from the rows: they start at 0 and every bench user is new."""
    with connection.cursor() as db:
        for column, table, key, where in (
            ("followers_count", "relations_follower", "user_id", ""),
            ("following_count", "relations_followee", "user_id", ""),
            ("posts_count", "posts_post", "author_id", "WHERE deleted_at IS NULL"),
        ):
            db.execute(_COUNTERS.format(column=column, table=table, key=key, where=where))


_INVARIANTS = {
    # A set difference, not a join on the follower: on Citus the mirror is on
    # another shard (and Citus plans no outer join across shards).
    "Follower rows without their Followee mirror": """
        SELECT count(*) FROM (SELECT follower_id, user_id FROM relations_follower
        EXCEPT SELECT user_id, followee_id FROM relations_followee) missing""",
    "users whose followers_count is not their Follower rows": """
        SELECT count(*) FROM accounts_user u WHERE u.followers_count <>
        (SELECT count(*) FROM relations_follower f WHERE f.user_id = u.id)""",
    "users whose following_count is not their Followee rows": """
        SELECT count(*) FROM accounts_user u WHERE u.following_count <>
        (SELECT count(*) FROM relations_followee f WHERE f.user_id = u.id)""",
    "posts whose timeline key is not their id's": """
        SELECT count(*) FROM posts_post
        WHERE timeline_key <> substr(id, 7, 8) || substr(id, 1, 6) || substr(id, 15, 2)""",
}


def _check_invariants(log: Log) -> None:
    counts = (Follower.objects.count(), Followee.objects.count())
    broken = [what for what, sql in _INVARIANTS.items() if count_rows(sql)]
    if counts[0] != counts[1]:
        broken.append(f"{counts[0]} Follower rows but {counts[1]} Followee rows")
    if broken:
        raise WorldError("the bench world breaks invariants: " + "; ".join(broken))
    log("  world: invariants hold (mirrored follows, counters, timeline keys)")
