"""The timeline benchmark of issue 3: fan-out, home feed reads and rebuilds.

Each figure is printed beside a baseline measured in the same run, on the same
world and the same machine:

1. Fan-out of one post to every follower of ``bench_author``, through a real
   Celery worker (or in process with ``worker=False``), against the raw limit
   of the machine: one INSERT ... SELECT of the same rows and one pipelined
   ZADD to the same Redis keys.
2. Home feed pages (``timelines.selectors.home_feed``), with the reader's
   Redis cache warm and dropped, against the pull model for the same reader
   and cursor (``pull_keys`` and ``pull_reference_keys``, each + ``hydrate``).
3. ``timelines.services.rebuild`` of an inactive reader, against one
   set-based INSERT ... SELECT that writes the same inbox.

The world lives in a dedicated PostgreSQL database and is reused between runs
(the marker is the user ``bench_author``, whose bio records the world's size).
It is written in bulk (COPY and INSERT ... SELECT), keeping the invariants the
services keep: Follower and Followee mirror each other, the counters on the
user rows equal the rows, post ids come from posts.ids.
"""

import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext, override_settings
from django.utils import timezone

from accounts.models import User
from feed_project.celery import app as celery_app
from feed_project.pagination import Cursor
from posts import ids
from posts.services import create_post
from relations.models import Followee, Follower
from timelines import cache, selectors, services
from timelines.models import FanOut, InboxEntry, PullAuthor, TimelineState

Log = Callable[[str], None]

AUTHOR = "bench_author"  # followed by every other active user: the fan-out figure
READER = "bench_reader"  # active, follows `following` accounts: the home feed figure
IDLE = "bench_idle_"  # inactive, follow `following` accounts: the rebuild figure
FOLLOWER = "bench_"  # bench_1 ... bench_{users-1}; the first `authors` of them post
MARKER_PREFIX = "bench world v1"

POSTS_WINDOW = timedelta(days=21)
FOLLOWS_WINDOW = timedelta(days=28)
IDLE_FOR = timedelta(days=30)
DEEP_PAGE = 5


@dataclass(frozen=True)
class WorldSpec:
    """The size of the bench world; recorded in bench_author's bio."""

    users: int  # followers of bench_author, all active with a kept inbox (bench_reader included)
    following: int  # accounts bench_reader and each idle reader follow
    authors: int  # accounts with posts, each posts_min..posts_max of them
    idle_readers: int
    posts_min: int = 10
    posts_max: int = 30
    seed: int = 3

    @property
    def marker(self) -> str:
        return (
            f"{MARKER_PREFIX} users={self.users} following={self.following} "
            f"authors={self.authors} idle={self.idle_readers} "
            f"posts={self.posts_min}-{self.posts_max} seed={self.seed}"
        )

    def check(self) -> None:
        if self.users < 2 or self.following < 2 or self.idle_readers < 1:
            raise ValueError("users and following must be at least 2, idle readers at least 1")
        if not self.following <= self.authors < self.users:
            raise ValueError("need following <= authors < users")
        if not 1 <= self.posts_min <= self.posts_max:
            raise ValueError("need 1 <= posts_min <= posts_max")


FULL = WorldSpec(users=100_000, following=1000, authors=8000, idle_readers=10)
QUICK = WorldSpec(users=5000, following=200, authors=400, idle_readers=3)


@dataclass(frozen=True)
class World:
    author_id: int
    reader_id: int
    idle_ids: list[int]
    followers: int
    posts: int
    built: bool
    seconds: float


class WorldError(Exception):
    """The database holds a different bench world, or is not one the bench can use."""


# --- the world ------------------------------------------------------------------


def ensure_world(spec: WorldSpec, *, rebuild: bool, log: Log) -> World:
    """Reuse the bench world of this size, or build it (after dropping another one)."""
    spec.check()
    if connection.vendor != "postgresql":
        raise WorldError("the benchmark needs PostgreSQL (set DATABASE_URL)")
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
        posts=_count("SELECT count(*) FROM posts_post"),
        built=built,
        seconds=time.perf_counter() - started,
    )


def _count(sql: str, params: Iterable[Any] = ()) -> int:
    with connection.cursor() as db:
        db.execute(sql, list(params))
        return db.fetchone()[0]


def _refresh_activity(world: World) -> None:
    """A reused world stays "active": followers last seen over a day ago are seen now."""
    with connection.cursor() as db:
        db.execute(
            "UPDATE accounts_user u SET last_active_at = %s FROM relations_follower f "
            "WHERE f.user_id = %s AND u.id = f.follower_id AND u.last_active_at < %s",
            [timezone.now(), world.author_id, timezone.now() - timedelta(days=1)],
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
        db.execute("TRUNCATE accounts_user, posts_post, timelines_inboxentry CASCADE")


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
        _insert_follows(rng, follows, now)
        step(f"{len(follows):,} follows (x2: Follower and Followee)")

        posts = _insert_posts(rng, posting, spec, now)
        step(f"{posts:,} posts by {len(posting):,} authors")

        with connection.cursor() as db:
            db.execute(
                "INSERT INTO timelines_timelinestate (owner_id, built_at) "
                "SELECT id, %s FROM unnest(%s::bigint[]) AS o(id)",
                [now, followers],
            )
        _set_counters()
        # Written last: it is what tells a later run that the world is complete.
        User.objects.filter(pk=author).update(bio=spec.marker)
        step(f"{len(followers):,} kept inboxes, counters")
    with connection.cursor() as db:
        db.execute(
            "ANALYZE accounts_user, relations_follower, relations_followee, posts_post, "
            "timelines_timelinestate, timelines_inboxentry"
        )
    step("ANALYZE")
    # The rows services.rebuild keeps (figure 3 checks that they are the same),
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
        return dict(db.fetchall())


def _copy(table: str, columns: tuple[str, ...], rows: Iterable[tuple[Any, ...]]) -> None:
    """COPY FROM STDIN: no model instances, no per-batch INSERT.

    (timelines.demo has the same writer, private to the demo world builder.)
    """
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as db, db.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def _insert_follows(rng: random.Random, follows: list[tuple[int, int]], now: Any) -> None:
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


_COUNTERS = """
UPDATE accounts_user u SET {column} = c.n
FROM (SELECT {key} AS id, count(*) AS n FROM {table} {where} GROUP BY {key}) c
WHERE u.id = c.id
"""


def _set_counters() -> None:
    """Counters from the rows: they start at 0 and every bench user is new."""
    with connection.cursor() as db:
        for column, table, key, where in (
            ("followers_count", "relations_follower", "user_id", ""),
            ("following_count", "relations_followee", "user_id", ""),
            ("posts_count", "posts_post", "author_id", "WHERE deleted_at IS NULL"),
        ):
            db.execute(_COUNTERS.format(column=column, table=table, key=key, where=where))


_INVARIANTS = {
    "Follower rows without their Followee mirror": """
        SELECT count(*) FROM relations_follower f LEFT JOIN relations_followee e
        ON e.user_id = f.follower_id AND e.followee_id = f.user_id WHERE e.user_id IS NULL""",
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
    broken = [what for what, sql in _INVARIANTS.items() if _count(sql)]
    if counts[0] != counts[1]:
        broken.append(f"{counts[0]} Follower rows but {counts[1]} Followee rows")
    if broken:
        raise WorldError("the bench world breaks invariants: " + "; ".join(broken))
    log("  world: invariants hold (mirrored follows, counters, timeline keys)")


# --- measuring ------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """Milliseconds of each sample."""

    ms: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.ms)

    @property
    def p99(self) -> float:
        if len(self.ms) < 2:
            return self.ms[0]
        return statistics.quantiles(self.ms, n=100, method="inclusive")[98]


def measure(
    fn: Callable[[], Any], *, samples: int, warmup: int, setup: Callable[[], Any] | None = None
) -> Timing:
    """Time ``fn`` ``samples`` times after ``warmup`` untimed calls; ``setup`` is untimed."""
    ms = []
    for n in range(warmup + samples):
        if setup is not None:
            setup()
        started = time.perf_counter_ns()
        fn()
        elapsed = time.perf_counter_ns() - started
        if n >= warmup:
            ms.append(elapsed / 1e6)
    return Timing(ms)


def count_queries(fn: Callable[[], Any], setup: Callable[[], Any] | None = None) -> int:
    if setup is not None:
        setup()
    with CaptureQueriesContext(connection) as queries:
        fn()
    return len(queries)


@dataclass
class Table:
    title: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    figure: str
    measured: str
    baseline: str
    ratio: str
    target: str
    met: bool


def _ms(value: float) -> str:
    return f"{value:,.2f} ms" if value < 100 else f"{value:,.0f} ms"


# --- 1. fan-out -------------------------------------------------------------------


def _cache_key(owner_id: int, generation: int) -> str:
    # The key format of timelines.cache (tl:{<reader>}:<generation>); a wrong
    # format here would show as "0 live caches hold the post" in the report.
    return f"tl:{{{owner_id}}}:{generation}"


def fill_caches(owner_ids: list[int]) -> int:
    """Make these readers' Redis caches live, holding what their inbox table holds."""
    redis = cache.client()
    if redis is None or not owner_ids:
        return 0
    inboxes: dict[int, list[str]] = {owner: [] for owner in owner_ids}
    with connection.cursor() as db:
        db.execute(
            "SELECT owner_id, timeline_key FROM timelines_inboxentry "
            "WHERE owner_id = ANY(%s) ORDER BY owner_id, timeline_key DESC",
            [owner_ids],
        )
        for owner, key in db.fetchall():
            inboxes[owner].append(key)
    generation, ttl = cache.generation(), cache.ttl_seconds()
    pipe = redis.pipeline(transaction=False)
    for owner, keys in inboxes.items():
        key = _cache_key(owner, generation)
        members = dict.fromkeys([cache.SENTINEL, *keys[: settings.FEED_INBOX_CAP]], 0)
        pipe.delete(key)
        pipe.zadd(key, members)
        pipe.expire(key, ttl)
    pipe.execute()
    probe = cache.CachedInbox(owner_ids[0], generation)
    return len(owner_ids) if probe.older(None, 1) is not None else 0


def _raw_fan_out(author_id: int, followers: list[int]) -> tuple[float, int, float]:
    """The machine's raw limit: one INSERT ... SELECT (rolled back), one pipelined ZADD.

    Returns (SQL seconds, rows inserted, Redis seconds).
    """
    fresh = ids.make_timeline_key(
        ids.KeyParts(time=ids.time_of(timezone.now()), author=author_id, seq=ids.MAX_SEQ)
    )
    with transaction.atomic(), connection.cursor() as db:
        started = time.perf_counter_ns()
        db.execute(
            "INSERT INTO timelines_inboxentry (owner_id, timeline_key, author_id) "
            "SELECT f.follower_id, %s, %s FROM relations_follower f WHERE f.user_id = %s "
            "ON CONFLICT DO NOTHING",
            [fresh, author_id, author_id],
        )
        sql_s = (time.perf_counter_ns() - started) / 1e9
        rows = db.rowcount
        transaction.set_rollback(True)
    redis = cache.client()
    if redis is None:
        return sql_s, rows, 0.0
    generation = cache.generation()
    keys = [_cache_key(owner, generation) for owner in followers]
    started = time.perf_counter_ns()
    pipe = redis.pipeline(transaction=False)
    for key in keys:
        pipe.zadd(key, {fresh: 0})
    pipe.execute()
    redis_s = (time.perf_counter_ns() - started) / 1e9
    # Undo: ZREM of a sorted set's last member deletes it, so the caches that
    # were not live are not live again, and the live ones lose the fake key.
    pipe = redis.pipeline(transaction=False)
    for key in keys:
        pipe.zrem(key, fresh)
    pipe.execute()
    return sql_s, rows, redis_s


def _database_url() -> str:
    db = settings.DATABASES["default"]
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@contextmanager
def celery_worker(*, threshold: int, log: Log, ready_timeout: float = 60) -> Iterator[str]:
    """A real worker (prefork, 2 processes) on this database and broker; stopped after."""
    if not settings.CELERY_BROKER_URL:
        raise WorldError("a worker needs a broker: set REDIS_URL (or run with --no-worker)")
    others = celery_app.control.ping(timeout=0.5)
    if others:
        log(f"  note: other workers answer on this broker and may share the fan-out: {others}")
    celery_app.control.purge()  # stale messages of an interrupted run
    name = f"bench{os.getpid()}@{socket.gethostname()}"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "FEED_BIG_ACCOUNT_FOLLOWERS": str(threshold),
    }
    command = [sys.executable, "-m", "celery", "-A", "feed_project", "worker"]
    command += ["--pool=prefork", "--concurrency=2", "-Q", "celery", "-n", name, "-l", "WARNING"]
    output = Path(tempfile.mkstemp(prefix="bench-worker-", suffix=".log")[1])
    with output.open("wb") as log_file:
        worker = subprocess.Popen(
            command,
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as one below
        )
    try:
        deadline = time.monotonic() + ready_timeout
        while not celery_app.control.ping(destination=[name], timeout=0.5):
            if worker.poll() is not None or time.monotonic() > deadline:
                tail = output.read_text(errors="replace")[-2000:]
                raise WorldError(f"the Celery worker did not start; its log ({output}):\n{tail}")
        log(f"  worker {name} (pid {worker.pid}) ready; log: {output}")
        yield f"through worker {name}"
    finally:
        _stop(worker)


def _stop(worker: subprocess.Popen) -> None:
    """TERM the worker's process group (a warm shutdown), KILL it if it lingers."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(worker.pid, sig)
        except ProcessLookupError:
            return
        try:
            worker.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@dataclass(frozen=True)
class Delivery:
    post_id: str
    lag_s: float
    queued_s: float
    recipients: int
    trimmed: bool


def deliver_one(author: User, *, timeout: float) -> Delivery:
    """Publish through the service and wait for its FanOut row to finish."""
    post = create_post(author=author, text="bench fan-out")
    deadline = time.monotonic() + timeout
    fields = ("created_at", "started_at", "finished_at", "recipients", "mode")
    while True:
        row = FanOut.objects.filter(pk=post.pk).values(*fields).first()
        if row and row["finished_at"] is not None:
            break
        if time.monotonic() > deadline:
            raise WorldError(f"the fan-out of {post.pk} did not finish in {timeout:.0f} s")
        time.sleep(0.02)
    if row["mode"] != FanOut.Mode.PUSH:
        raise WorldError(f"the post was delivered by {row['mode']!r}, not push")
    started = row["started_at"] or row["created_at"]
    return Delivery(
        post_id=post.pk,
        lag_s=(row["finished_at"] - row["created_at"]).total_seconds(),
        queued_s=(started - row["created_at"]).total_seconds(),
        recipients=row["recipients"],
        # The rule of services.deliver_chunk: one post in FEED_TRIM_EVERY also trims.
        trimmed=zlib.crc32(post.pk.encode()) % settings.FEED_TRIM_EVERY == 0,
    )


@contextmanager
def _tasks_in_process(on: bool) -> Iterator[None]:
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = on
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = before


@dataclass(frozen=True)
class Options:
    samples: int = 200
    warmup: int = 20
    rebuild_runs: int = 20
    rebuild_warmup: int = 3
    fanouts: int = 3
    fanout_warmup: int = 1
    live_caches: int | None = None  # None: half the followers
    worker: bool = True
    timeout: float = 300.0


def fan_out_figure(world: World, options: Options, log: Log) -> tuple[Table, Verdict]:
    """Figure 1: one post to every follower of bench_author, against the raw limit."""
    followers = list(
        Follower.objects.filter(user_id=world.author_id)
        .order_by("follower_id")
        .values_list("follower_id", flat=True)
    )
    wanted = len(followers) // 2 if options.live_caches is None else options.live_caches
    wanted = max(0, min(wanted, len(followers)))
    chosen = followers[:: max(1, len(followers) // wanted)][:wanted] if wanted else []
    live = fill_caches(chosen)
    log(f"fan-out: {live:,} of {len(followers):,} followers' Redis caches made live")

    configured = settings.FEED_BIG_ACCOUNT_FOLLOWERS
    threshold = max(configured, world.followers + 1)
    if threshold == configured:
        how = "FEED_BIG_ACCOUNT_FOLLOWERS as configured"
    else:
        how = "override_settings here, FEED_BIG_ACCOUNT_FOLLOWERS in the worker's environment"

    log(f"fan-out: raw limit, {options.fanouts} x (INSERT ... SELECT + pipelined ZADD)")
    raw = [_raw_fan_out(world.author_id, followers) for _ in range(options.fanouts)]
    sql_s = statistics.median(r[0] for r in raw)
    redis_s = statistics.median(r[2] for r in raw)
    raw_rows = raw[-1][1]

    author = User.objects.get(pk=world.author_id)
    with (
        override_settings(FEED_BIG_ACCOUNT_FOLLOWERS=threshold),
        _tasks_in_process(not options.worker),
    ):
        runner = celery_worker(threshold=threshold, log=log) if options.worker else _in_process()
        with runner as where:
            for _ in range(options.fanout_warmup):
                log("fan-out: warm-up post")
                deliver_one(author, timeout=options.timeout)
            deliveries = []
            for n in range(options.fanouts):
                deliveries.append(deliver_one(author, timeout=options.timeout))
                log(f"fan-out: post {n + 1} of {options.fanouts} in {deliveries[-1].lag_s:.2f} s")

    lag = statistics.median(d.lag_s for d in deliveries)
    queued = statistics.median(d.queued_s for d in deliveries)
    recipients = deliveries[-1].recipients
    raw_s = sql_s + redis_s
    in_table, in_caches = _delivered(deliveries[-1].post_id, chosen if live else [])

    def rate(rows: int, seconds: float) -> str:
        return f"{rows / seconds:,.0f}" if seconds > 0 else "-"

    table = Table(
        title=f"1. Fan-out of one post to {recipients:,} active followers",
        header=("step", "seconds", "rows/s"),
        rows=[
            (
                f"fan-out lag {where} (median of {len(deliveries)})",
                f"{lag:.3f}",
                rate(recipients, lag),
            ),
            ("  queued: post committed -> worker started", f"{queued:.3f}", ""),
            ("  delivered: worker started -> last chunk", f"{lag - queued:.3f}", ""),
            (
                "raw limit: one INSERT ... SELECT (rolled back)",
                f"{sql_s:.3f}",
                rate(raw_rows, sql_s),
            ),
            (
                "raw limit: one pipelined ZADD to every key",
                f"{redis_s:.3f}",
                rate(len(followers), redis_s),
            ),
            ("raw limit: both", f"{raw_s:.3f}", rate(raw_rows, raw_s)),
        ],
        notes=[
            f"live Redis caches before the post: {live:,} of {len(followers):,} followers",
            f"lags: {', '.join(f'{d.lag_s:.3f} s' for d in deliveries)}"
            f" (after {options.fanout_warmup} warm-up post(s), not counted)",
            f"the last post reached {in_table:,} inboxes and {in_caches:,} of {len(chosen):,} "
            "live caches",
            f"big-account threshold {threshold:,} ({how})",
            f"FEED_FANOUT_CHUNK {settings.FEED_FANOUT_CHUNK:,}; posts that also trimmed inboxes: "
            f"{sum(d.trimmed for d in deliveries)} of {len(deliveries)}",
        ],
    )
    verdict = Verdict(
        figure=f"Fan-out lag, 1 post -> {recipients:,} inboxes",
        measured=f"{lag:.2f} s",
        baseline=f"{raw_s:.2f} s raw",
        ratio=f"{lag / raw_s:.1f}x" if raw_s else "-",
        target="<= 2x raw",
        met=raw_s > 0 and lag <= 2 * raw_s,
    )
    return table, verdict


@contextmanager
def _in_process() -> Iterator[str]:
    yield "in process (eager tasks)"


def _delivered(post_id: str, live_ids: list[int]) -> tuple[int, int]:
    """How many inboxes, and how many of the live caches, hold the post."""
    key = ids.post_id_to_timeline_key(post_id)
    in_table = _count("SELECT count(*) FROM timelines_inboxentry WHERE timeline_key = %s", [key])
    redis = cache.client()
    if redis is None or not live_ids:
        return in_table, 0
    generation = cache.generation()
    pipe = redis.pipeline(transaction=False)
    for owner in live_ids:
        pipe.zscore(_cache_key(owner, generation), key)
    return in_table, sum(score is not None for score in pipe.execute())


# --- 2. home feed -----------------------------------------------------------------


def home_figures(world: World, options: Options, log: Log) -> tuple[Table, list[Verdict]]:
    """Figure 2: page 1 and a deep page, cached and not, beside the pull model."""
    reader = User.objects.get(pk=world.reader_id)
    limit = selectors.page_size(None)
    cursor = Cursor()
    for _ in range(DEEP_PAGE - 1):
        older = selectors.home_feed(reader=reader, cursor=cursor).older
        if older is None:
            raise WorldError(f"{READER}'s feed has fewer than {DEEP_PAGE} pages")
        cursor = Cursor(before=older)
    table = Table(
        title=f"2. Home feed of {READER} (follows {reader.following_count:,} accounts), "
        f"{limit} posts a page",
        header=("read", "p50", "p99", "queries/call"),
        notes=[
            f"{options.samples} samples each after {options.warmup} warm-up calls; "
            f"'cache dropped' runs timelines.cache.drop({READER}) before each sample (untimed)",
            f"the pull model asks for {limit + 1} keys, as home_feed does (one more than a page)",
        ],
    )
    verdicts = []
    drop = _Call(cache.drop, reader.pk)
    for number, page_cursor in ((1, Cursor()), (DEEP_PAGE, cursor)):
        feed = _Call(selectors.home_feed, reader=reader, cursor=page_cursor)
        cases = [
            ("home_feed, cache warm", feed, None),
            ("home_feed, cache dropped", feed, drop),
            (
                "pull_keys + hydrate",
                _Pull(selectors.pull_keys, reader.pk, page_cursor, limit),
                None,
            ),
            (
                "pull_reference_keys + hydrate",
                _Pull(selectors.pull_reference_keys, reader.pk, page_cursor, limit),
                None,
            ),
        ]
        timings = {}
        for label, fn, setup in cases:
            log(f"home page {number}: {label}")
            timing = measure(fn, samples=options.samples, warmup=options.warmup, setup=setup)
            timings[label] = timing
            table.rows.append(
                (
                    f"page {number}: {label}",
                    _ms(timing.p50),
                    _ms(timing.p99),
                    str(count_queries(fn, setup)),
                )
            )
        cached = timings["home_feed, cache warm"]
        pull = min(timings["pull_keys + hydrate"].p50, timings["pull_reference_keys + hydrate"].p50)
        verdicts.append(
            Verdict(
                figure=f"Home page {number}, cached, p50",
                measured=_ms(cached.p50),
                baseline=f"{_ms(pull)} pull",
                ratio=f"{pull / cached.p50:.0f}x faster",
                target=">= 10x faster",
                met=pull >= 10 * cached.p50,
            )
        )
        verdicts.append(
            Verdict(
                figure=f"Home page {number}, cached, p99",
                measured=_ms(cached.p99),
                baseline="",
                ratio="",
                target="< 10 ms",
                met=cached.p99 < 10,
            )
        )
    # The sampled calls leave the reader's cache live, as a visit would.
    return table, verdicts


class _Call:
    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def __call__(self) -> Any:
        return self.fn(*self.args, **self.kwargs)


class _Pull:
    """A pull-model page: the keys, then the posts, as a page would need them."""

    def __init__(self, keys: Callable[..., list[str]], reader_id: int, cursor: Cursor, limit: int):
        self.keys, self.reader_id, self.cursor, self.limit = keys, reader_id, cursor, limit

    def __call__(self) -> list[selectors.FeedItem]:
        keys = self.keys(reader_id=self.reader_id, cursor=self.cursor, limit=self.limit + 1)
        return selectors.hydrate(keys, reader_id=self.reader_id)


# --- 3. rebuild -------------------------------------------------------------------


def _forget_inbox(owner_id: int) -> None:
    """Back to a reader who was away: no inbox rows, no state row, no cache."""
    InboxEntry.objects.filter(owner_id=owner_id).delete()
    TimelineState.objects.filter(owner_id=owner_id).delete()
    cache.drop(owner_id)


_RAW_REBUILD = """
WITH pulled AS (
    SELECT p.timeline_key, p.author_id,
           count(*) OVER w AS taken, min(p.timeline_key) OVER w AS lowest
    FROM unnest(%(lows)s::char(16)[], %(highs)s::char(16)[]) AS b(low, high)
    CROSS JOIN LATERAL (
        SELECT timeline_key, author_id FROM posts_post p
        WHERE p.id >= b.low AND p.id < b.high AND p.deleted_at IS NULL AND p.hidden_at IS NULL
        ORDER BY p.id DESC LIMIT %(per_author)s
    ) p
    WINDOW w AS (PARTITION BY p.author_id)
), floor AS (
    SELECT max(lowest) AS key FROM pulled WHERE taken >= %(per_author)s
)
INSERT INTO timelines_inboxentry (owner_id, timeline_key, author_id)
SELECT %(owner)s, pulled.timeline_key, pulled.author_id FROM pulled, floor
WHERE floor.key IS NULL OR pulled.timeline_key >= floor.key
ORDER BY pulled.timeline_key DESC LIMIT %(cap)s
ON CONFLICT DO NOTHING
"""


def raw_rebuild(owner_id: int) -> None:
    """The rows services.rebuild keeps, written by one INSERT ... SELECT.

    The same pull (each followee's newest FEED_REBUILD_PER_AUTHOR posts), the
    same floor (entries below an author who had more are dropped), the same
    cap; the database picks the newest FEED_INBOX_CAP instead of Python
    inserting every pulled row and trimming after.
    """
    pulled = set(PullAuthor.objects.values_list("author_id", flat=True))
    authors = [
        a
        for a in Followee.objects.filter(user_id=owner_id).values_list("followee_id", flat=True)
        if a not in pulled
    ]
    if owner_id not in pulled:
        authors.append(owner_id)
    width = ids.TIME_WIDTH + ids.SEQ_WIDTH
    lows = [ids.author_prefix(a) + "0" * width for a in authors]
    highs = [ids.post_id_range(a)[1].ljust(ids.KEY_LENGTH, "0") for a in authors]
    with connection.cursor() as db:
        db.execute(
            _RAW_REBUILD,
            {
                "lows": lows,
                "highs": highs,
                "per_author": settings.FEED_REBUILD_PER_AUTHOR,
                "owner": owner_id,
                "cap": settings.FEED_INBOX_CAP,
            },
        )


def _inbox_keys(owner_id: int) -> list[str]:
    return list(
        InboxEntry.objects.filter(owner_id=owner_id)
        .order_by("-timeline_key")
        .values_list("timeline_key", flat=True)
    )


def rebuild_figure(world: World, options: Options, log: Log) -> tuple[Table, list[Verdict]]:
    """Figure 3: services.rebuild of an inactive reader, beside the set-based raw limit."""
    owners = _Cycle(world.idle_ids)
    first = world.idle_ids[0]
    _forget_inbox(first)
    pulled = services.rebuild(owner_id=first)
    kept = _inbox_keys(first)
    _forget_inbox(first)
    raw_rebuild(first)
    same = _inbox_keys(first) == kept

    log(f"rebuild: services.rebuild x {options.rebuild_runs}")
    rebuild = measure(
        lambda: services.rebuild(owner_id=owners.current),
        samples=options.rebuild_runs,
        warmup=options.rebuild_warmup,
        setup=lambda: _forget_inbox(owners.next()),
    )
    rebuild_queries = count_queries(
        lambda: services.rebuild(owner_id=owners.current),
        setup=lambda: _forget_inbox(owners.next()),
    )
    log(f"rebuild: raw limit x {options.rebuild_runs}")
    raw = measure(
        lambda: raw_rebuild(owners.current),
        samples=options.rebuild_runs,
        warmup=options.rebuild_warmup,
        setup=lambda: _forget_inbox(owners.next()),
    )
    raw_queries = count_queries(
        lambda: raw_rebuild(owners.current), setup=lambda: _forget_inbox(owners.next())
    )
    for owner in world.idle_ids:  # leave every idle reader as a rebuild leaves it
        _forget_inbox(owner)
        services.rebuild(owner_id=owner)

    reader_following = User.objects.values_list("following_count", flat=True).get(pk=first)
    table = Table(
        title=f"3. Rebuild of an inactive reader following {reader_following:,} accounts",
        header=("step", "p50", "p99", "queries/call"),
        rows=[
            ("services.rebuild", _ms(rebuild.p50), _ms(rebuild.p99), str(rebuild_queries)),
            (
                "raw limit: one INSERT ... SELECT of the same rows",
                _ms(raw.p50),
                _ms(raw.p99),
                str(raw_queries),
            ),
        ],
        notes=[
            f"{options.rebuild_runs} runs each after {options.rebuild_warmup} warm-up runs, "
            f"cycling over {len(world.idle_ids)} idle readers; before each run (untimed) the "
            "reader's inbox rows, state row and cache are deleted",
            f"services.rebuild pulled {pulled:,} rows and kept {len(kept):,} "
            f"(FEED_REBUILD_PER_AUTHOR {settings.FEED_REBUILD_PER_AUTHOR}, "
            f"FEED_INBOX_CAP {settings.FEED_INBOX_CAP})",
            "the raw limit wrote the same inbox as services.rebuild: " + ("yes" if same else "NO"),
        ],
    )
    verdicts = [
        Verdict(
            figure=f"Rebuild, {quantile}",
            measured=_ms(value),
            baseline=f"{_ms(base)} raw",
            ratio=f"{value / base:.1f}x",
            target="< 200 ms",
            met=value < 200,
        )
        for quantile, value, base in (
            ("p50", rebuild.p50, raw.p50),
            ("p99", rebuild.p99, raw.p99),
        )
    ]
    return table, verdicts


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


class _Cycle:
    def __init__(self, items: list[int]) -> None:
        self.items, self.index = items, -1

    @property
    def current(self) -> int:
        return self.items[self.index % len(self.items)]

    def next(self) -> int:
        self.index += 1
        return self.current


# --- the whole run ----------------------------------------------------------------


def run(spec: WorldSpec, options: Options, *, rebuild_world: bool, log: Log) -> list[Table]:
    """Build or reuse the world, measure the three figures, and sum them up."""
    world = ensure_world(spec, rebuild=rebuild_world, log=log)
    how = "built" if world.built else "reused"
    log(f"world {how} in {world.seconds:.1f} s")
    tables = [
        Table(
            title="World",
            header=("what", "count"),
            rows=[
                (f"followers of {AUTHOR} (active, inbox kept)", f"{world.followers:,}"),
                (f"accounts followed by {READER} and by each idle reader", f"{spec.following:,}"),
                ("accounts with posts", f"{spec.authors:,}"),
                ("posts", f"{world.posts:,}"),
                ("idle readers (inactive, no inbox)", f"{len(world.idle_ids):,}"),
            ],
            notes=[
                f"{how} in {world.seconds:.1f} s; {connection.settings_dict['NAME']} "
                f"on PostgreSQL {connection.pg_version // 10000}; "
                f"{os.cpu_count()} CPUs, load average {_load()} at the start",
            ],
        )
    ]
    fan_out, fan_out_verdict = fan_out_figure(world, options, log)
    home, home_verdicts = home_figures(world, options, log)
    rebuild, rebuild_verdicts = rebuild_figure(world, options, log)
    summary = Table(
        title="Summary",
        header=("figure", "measured", "baseline", "ratio", "target", "met"),
        rows=[
            (v.figure, v.measured, v.baseline, v.ratio, v.target, "yes" if v.met else "MISSED")
            for v in [fan_out_verdict, *home_verdicts, *rebuild_verdicts]
        ],
        notes=[f"load average {_load()} at the end (other work on the machine skews figures)"],
    )
    return [*tables, fan_out, home, rebuild, summary]
