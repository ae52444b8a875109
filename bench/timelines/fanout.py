"""Figure 1: fan-out of one post to every follower of bench_author, beside the raw limit."""

import os
import statistics
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache as django_cache
from django.db import connection, transaction
from django.test.utils import override_settings
from django.utils import timezone

from accounts.models import User
from bench.timelines import cpu
from bench.timelines.report import Table, Verdict
from bench.timelines.spec import AUTHOR, Log, Options, World, WorldError
from bench.timelines.worker import celery_worker, in_process, tasks_in_process
from bench.timelines.world import count_rows
from feed_project import sharding
from posts import ids
from posts.models import Post
from posts.services import create_post
from relations.models import Follower
from timelines import home, outbox
from timelines.home import _cache as cache
from timelines.home._models import InboxState
from timelines.models import FanOut
from timelines.tasks import TRIM_SWEEP

TRIM_INBOXES = "timelines.trim_inboxes"


def fill_caches(reader_ids: list[int]) -> int:
    """Make these readers' Redis caches live, holding what their inbox table holds."""
    redis = cache.client()
    if redis is None or not reader_ids:
        return 0
    inboxes: dict[int, list[str]] = {owner: [] for owner in reader_ids}
    with connection.cursor() as db:
        db.execute(
            "SELECT reader_id, timeline_key FROM timelines_inboxentry "
            "WHERE reader_id = ANY(%s) ORDER BY reader_id, timeline_key DESC",
            [reader_ids],
        )
        for owner, key in db.fetchall():
            inboxes[owner].append(key)
    generation, ttl = cache.generation(), cache.ttl_seconds()
    sentinel = cache.sentinel(redis)
    pipe = redis.pipeline(transaction=False)
    for owner, keys in inboxes.items():
        key = cache.inbox_key(owner, generation)
        pipe.delete(key)
        pipe.rpush(key, sentinel, *keys[: home.cap()])
        pipe.expire(key, ttl)
    pipe.execute()
    probe = cache.CachedInbox(reader_ids[0], generation)
    return len(reader_ids) if probe.older(None, 1) is not None else 0


# The raw limit's table half: the engine's join (the author's followers with a
# kept inbox), committed, returning the recipients as the engine's chunk
# statement does (their caches are pushed next). A plain INSERT, as the
# engine's first try is (a new post's key is in no inbox).
_RAW_INSERT_SQL = """
INSERT INTO timelines_inboxentry (reader_id, timeline_key, author_id)
SELECT f.follower_id, %(key)s, %(author)s
FROM relations_follower f
JOIN timelines_inboxstate s ON s.reader_id = f.follower_id
WHERE f.user_id = %(author)s
RETURNING reader_id
"""
# On Citus the same in the engine's two steps (timelines/fanout.py): the
# author's followers from their Follower rows (one shard), then the state
# rows by reader id, which Citus reads inside each shard (the join from
# Follower, sharded by the author, would repartition).
_RAW_FOLLOWERS_SQL = "SELECT follower_id FROM relations_follower WHERE user_id = %(author)s"
_RAW_INSERT_ROUTED_SQL = """
INSERT INTO timelines_inboxentry (reader_id, timeline_key, author_id)
SELECT s.reader_id, %(key)s, %(author)s
FROM timelines_inboxstate s
WHERE s.reader_id = ANY(%(followers)s)
RETURNING reader_id
"""
# The raw limit's Redis half: one server-side call per chunk, a bare loop (LPUSH
# onto the caches that exist), none of the engine's incarnation, order or trim
# checks. The readers go as the engine sends them: their ids in one argument,
# the keys built in the script (timelines.home._cache_scripts.PUSH_MANY).
# ARGV: head, tail, readers, member.
_RAW_PUSH_LUA = """
for reader in string.gmatch(ARGV[3], '%d+') do
  local key = ARGV[1] .. reader .. ARGV[2]
  if redis.call('EXISTS', key) == 1 then redis.call('LPUSH', key, ARGV[4]) end
end
return 0
"""
_RAW_UNDO_LUA = """
for reader in string.gmatch(ARGV[3], '%d+') do
  redis.call('LREM', ARGV[1] .. reader .. ARGV[2], '1', ARGV[4])
end
return 0
"""


@dataclass(frozen=True)
class RawRun:
    sql_s: float
    rows: int
    redis_s: float
    cpu: cpu.Cpu  # of the two timed steps only, not of the undo


def _raw_fan_out(author_id: int) -> RawRun:
    """The machine's raw limit: one committed INSERT ... SELECT with the engine's join,
    then one Lua call per FEED_FANOUT_CHUNK recipients; both undone after (untimed,
    and outside its CPU figure).
    """
    fresh = ids.make_timeline_key(
        ids.KeyParts(time=ids.time_of(timezone.now()), author=author_id, seq=ids.MAX_SEQ)
    )
    params = {"key": fresh, "author": author_id}
    with connection.cursor() as db:
        before = cpu.sample(os.getpid())
        started = time.perf_counter_ns()
        with transaction.atomic():
            if sharding.on_citus(connection):
                db.execute(_RAW_FOLLOWERS_SQL, params)
                params["followers"] = [row[0] for row in db.fetchall()]
                db.execute(_RAW_INSERT_ROUTED_SQL, params)
            else:
                db.execute(_RAW_INSERT_SQL, params)
            readers = [row[0] for row in db.fetchall()]
        sql_s = (time.perf_counter_ns() - started) / 1e9
        spent = cpu.sample(os.getpid()) - before
    redis = cache.client()
    redis_s = 0.0
    if redis is not None:
        head, tail, _ = cache.key_layout(cache.generation())
        size = settings.FEED_FANOUT_CHUNK
        chunks = [
            ",".join(map(str, readers[at : at + size])) for at in range(0, len(readers), size)
        ]
        push, undo = redis.register_script(_RAW_PUSH_LUA), redis.register_script(_RAW_UNDO_LUA)
        push(args=[head, tail, "", fresh])  # loads the script: untimed
        before = cpu.sample(os.getpid())
        started = time.perf_counter_ns()
        pipe = redis.pipeline(transaction=False)
        for chunk in chunks:
            push(args=[head, tail, chunk, fresh], client=pipe)
        pipe.execute()
        redis_s = (time.perf_counter_ns() - started) / 1e9
        spent += cpu.sample(os.getpid()) - before
        pipe = redis.pipeline(transaction=False)
        for chunk in chunks:
            undo(args=[head, tail, chunk, fresh], client=pipe)
        pipe.execute()
    with connection.cursor() as db:
        db.execute(
            "DELETE FROM timelines_inboxentry WHERE reader_id = ANY(%s) AND timeline_key = %s",
            [readers, fresh],
        )
    return RawRun(sql_s, len(readers), redis_s, spent)


def remove_posts(world: World, followers: list[int]) -> int:
    """Delete bench_author's posts (this run's fan-outs, or an earlier run's) with
    their inbox rows, so that every run measures the world as it was built.

    bench_reader follows bench_author: left behind, they filled the top of its
    feed run after run, and the plain query's walk for page 1 found them at once
    instead of looking for its followees' posts among the rest (0.05% of them).
    """
    posts = Post.objects.filter(author_id=world.author_id)
    keys = list(posts.values_list("timeline_key", flat=True))
    if not keys:
        return 0
    with transaction.atomic():
        with connection.cursor() as db:
            db.execute(
                "DELETE FROM timelines_inboxentry"
                " WHERE reader_id = ANY(%s) AND timeline_key = ANY(%s)",
                [followers, keys],
            )
        posts.delete()
        User.objects.filter(pk=world.author_id).update(posts_count=0)
    return len(keys)


def fill_inboxes(world: World, entries: int, log: Log) -> float:
    """Fill every follower's inbox to about ``entries`` keys of real posts (once per world).

    The world builds near-empty inboxes; real ones hold hundreds of entries, and
    the fan-out's INSERT and trim cost more on a bigger table and index.
    Returns the mean entries per inbox now.
    """
    with connection.cursor() as db:
        sample = list(range(world.author_id + 1, world.author_id + 1001))
        db.execute(
            "SELECT count(*)::float / %s FROM timelines_inboxentry WHERE reader_id = ANY(%s)",
            [len(sample), sample],
        )
        mean = db.fetchone()[0]
        if mean >= entries * 0.9:
            return mean
        log(f"fan-out: filling inboxes to ~{entries} entries (once per world)")
        # Each inbox gets `entries` of the 4 x `entries` newest posts, a window
        # chosen by the reader's id; ON CONFLICT skips what the inbox holds.
        # Not bench_reader's: its pages are measured, and an inbox holds only
        # the posts of those its reader follows.
        db.execute(
            """
            WITH recent AS (
                SELECT timeline_key, author_id, row_number() OVER (ORDER BY timeline_key DESC) n
                FROM (SELECT timeline_key, author_id FROM posts_post
                      ORDER BY timeline_key DESC LIMIT %(pool)s) p
            )
            INSERT INTO timelines_inboxentry (reader_id, timeline_key, author_id)
            SELECT f.follower_id, r.timeline_key, r.author_id
            FROM relations_follower f
            JOIN recent r ON r.n %% 4 = f.follower_id %% 4
            WHERE f.user_id = %(author)s AND f.follower_id <> %(reader)s
            ON CONFLICT (reader_id, timeline_key) DO NOTHING
            """,
            {"pool": 4 * entries, "author": world.author_id, "reader": world.reader_id},
        )
    return entries


def vacuum_analyze(log: Log) -> None:
    """Autovacuum may be off, and every run leaves dead rows behind: clean before measuring."""
    log("fan-out: VACUUM ANALYZE")
    with connection.cursor() as db:
        db.execute(
            "VACUUM ANALYZE timelines_inboxentry, timelines_inboxstate, relations_follower, "
            "accounts_user, timelines_fanout, timelines_pendingtask, posts_post, "
            # What reads probe: a page's rule and the pull read the reader's follows
            # (never vacuumed, an index-only scan of them visits every heap row).
            "relations_followee, relations_mute, relations_block, relations_mutedword"
        )


@dataclass(frozen=True)
class Delivery:
    post_id: str
    lag_s: float
    queued_s: float
    recipients: int
    cpu: cpu.Cpu


def deliver_one(author: User, *, timeout: float, worker_pid: int) -> Delivery:
    """Publish through the service and wait for its FanOut row to finish."""
    before = cpu.sample(worker_pid)
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
        cpu=cpu.sample(worker_pid) - before,
    )


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
    if removed := remove_posts(world, followers):
        log(f"fan-out: {removed:,} posts of {AUTHOR} left by earlier runs deleted")
    mean_entries = fill_inboxes(world, options.inbox_entries, log)
    vacuum_analyze(log)
    live = fill_caches(chosen)
    log(f"fan-out: {live:,} of {len(followers):,} followers' Redis caches made live")

    configured = settings.FEED_BIG_ACCOUNT_FOLLOWERS
    threshold = max(configured, world.followers + 1)
    if threshold == configured:
        how = "FEED_BIG_ACCOUNT_FOLLOWERS as configured"
    else:
        how = "override_settings here, FEED_BIG_ACCOUNT_FOLLOWERS in the worker's environment"

    author = User.objects.get(pk=world.author_id)
    with (
        override_settings(FEED_BIG_ACCOUNT_FOLLOWERS=threshold),
        tasks_in_process(not options.worker),
    ):
        runner = celery_worker(threshold=threshold, log=log) if options.worker else in_process()
        with runner as (where, pid):
            for _ in range(options.fanout_warmup):
                log("fan-out: warm-up post")
                deliver_one(author, timeout=options.timeout, worker_pid=pid)
            # The raw limit and a post in turn: a slow spell of the machine falls
            # on both alike.
            raw, deliveries = [], []
            for n in range(options.fanouts):
                raw.append(_raw_fan_out(world.author_id))
                deliveries.append(deliver_one(author, timeout=options.timeout, worker_pid=pid))
                log(
                    f"fan-out: raw limit {raw[-1].sql_s + raw[-1].redis_s:.2f} s, "
                    f"post {n + 1} of {options.fanouts} {deliveries[-1].lag_s:.2f} s"
                )
            # A trimming post: one more, beside a trim sweep of every kept inbox
            # that shares the worker with it. A sweep runs for seconds once a
            # FEED_TRIM_EVERY_SECONDS, so that few posts meet one: the median is of
            # posts alone, the slowest post counts this one.
            start_sweep()
            trimming = deliver_one(author, timeout=options.timeout, worker_pid=pid)
            log(f"fan-out: a post beside a trim sweep in {trimming.lag_s:.2f} s")
            log("fan-out: a trim sweep alone")
            sweep = timed_sweep(timeout=options.timeout, worker_pid=pid)

    sql_s = statistics.median(r.sql_s for r in raw)
    redis_s = statistics.median(r.redis_s for r in raw)
    raw_rows = raw[-1].rows
    lag = statistics.median(d.lag_s for d in deliveries)
    queued = statistics.median(d.queued_s for d in deliveries)
    recipients = deliveries[-1].recipients
    raw_s = sql_s + redis_s
    raw_cpu = sorted((r.cpu for r in raw), key=lambda c: c.total)[len(raw) // 2]
    post_cpu = sorted((d.cpu for d in deliveries), key=lambda c: c.total)[len(deliveries) // 2]
    slowest = max(d.lag_s for d in [*deliveries, trimming])

    def cpu_text(c: cpu.Cpu) -> str:
        return (
            f"{c.total:.2f} CPU-s (worker {c.worker:.2f}, PostgreSQL {c.postgres:.2f}, "
            f"Redis {c.redis:.2f})"
        )

    in_table, in_caches = _delivered(trimming.post_id, chosen if live else [])
    remove_posts(world, followers)

    def rate(rows: int, seconds: float) -> str:
        return f"{rows / seconds:,.0f}" if seconds > 0 else "-"

    table = Table(
        title=f"1. Fan-out of one post to {recipients:,} active followers",
        header=("step", "seconds", "rows/s", "CPU seconds"),
        rows=[
            (
                f"fan-out lag {where} (median of {len(deliveries)})",
                f"{lag:.3f}",
                rate(recipients, lag),
                f"{post_cpu.total:.2f}",
            ),
            ("  queued: post committed -> worker started", f"{queued:.3f}", "", ""),
            ("  delivered: worker started -> last chunk", f"{lag - queued:.3f}", "", ""),
            (
                "  a post beside a trim sweep",
                f"{trimming.lag_s:.3f}",
                rate(trimming.recipients, trimming.lag_s),
                f"{trimming.cpu.total:.2f}",
            ),
            ("  slowest post (the trimming post included)", f"{slowest:.3f}", "", ""),
            (
                "raw limit: one INSERT ... SELECT with the join (committed)",
                f"{sql_s:.3f}",
                rate(raw_rows, sql_s),
                "",
            ),
            (
                "raw limit: one Lua call per chunk (LPUSH if the key exists)",
                f"{redis_s:.3f}",
                rate(raw_rows, redis_s),
                "",
            ),
            ("raw limit: both", f"{raw_s:.3f}", rate(raw_rows, raw_s), f"{raw_cpu.total:.2f}"),
        ],
        notes=[
            f"CPU per post (median): {cpu_text(post_cpu)}",
            "CPU of the raw limit (median, its two timed steps; 'worker' is this process): "
            f"{cpu_text(raw_cpu)}",
            "PostgreSQL and Redis CPU are server-wide (other databases' work included)",
            f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} after the posts",
            f"inboxes hold ~{mean_entries:.0f} entries; VACUUM ANALYZE before measuring",
            f"live Redis caches before the post: {live:,} of {len(followers):,} followers",
            f"lags: {', '.join(f'{d.lag_s:.3f} s' for d in deliveries)}"
            f" (after {options.fanout_warmup} warm-up post(s), not counted); the posts are "
            "deleted after, with their inbox rows",
            f"the last post reached {in_table:,} inboxes and {in_caches:,} of {len(chosen):,} "
            "live caches",
            f"big-account threshold {threshold:,} ({how})",
            f"FEED_FANOUT_CHUNK {settings.FEED_FANOUT_CHUNK:,}",
            f"the post beside a trim sweep (queued just before it): {cpu_text(trimming.cpu)}",
            f"a trim sweep alone: {sweep.inboxes:,} inboxes in {sweep.seconds:.2f} s, "
            f"{cpu_text(sweep.cpu)}; one per FEED_TRIM_EVERY_SECONDS "
            f"({settings.FEED_TRIM_EVERY_SECONDS} s) is "
            f"{100 * sweep.cpu.total / settings.FEED_TRIM_EVERY_SECONDS:.1f}% of a core, "
            f"and meets {100 * sweep.seconds / settings.FEED_TRIM_EVERY_SECONDS:.1f}% of posts",
        ],
    )
    verdict = Verdict(
        figure=f"Fan-out lag, 1 post -> {recipients:,} inboxes",
        measured=f"{lag:.2f} s",
        baseline=f"{raw_s:.2f} s raw",
        ratio=f"{lag / raw_s:.1f}x" if raw_s else "-",
        target="<= 1.3x raw, < 1.2 s, slowest <= 2x median",
        met=raw_s > 0 and lag <= 1.3 * raw_s and lag < 1.2 and slowest <= 2 * lag,
    )
    return table, verdict


def start_sweep() -> None:
    """Queue a trim sweep from the first kept inbox (a running one's mark is dropped)."""
    django_cache.delete(TRIM_SWEEP)
    outbox.send(TRIM_INBOXES)


@dataclass(frozen=True)
class Sweep:
    inboxes: int
    seconds: float
    cpu: cpu.Cpu


def timed_sweep(*, timeout: float, worker_pid: int) -> Sweep:
    """Wait for the queue to drain, then time one trim sweep of every kept inbox:
    from its queueing until its mark (set by every batch) is gone."""
    deadline = time.monotonic() + timeout
    while django_cache.get(TRIM_SWEEP) is not None:  # the sweep beside the trimming post
        _wait(deadline, "the trim sweep beside the trimming post")
    before, started = cpu.sample(worker_pid), time.monotonic()
    start_sweep()
    while django_cache.get(TRIM_SWEEP) is None:  # its first batch, or all of a quick sweep
        if time.monotonic() - started > 1.0:
            break
        time.sleep(0.005)
    while django_cache.get(TRIM_SWEEP) is not None:
        _wait(deadline, "a trim sweep")
    return Sweep(
        inboxes=InboxState.objects.count(),
        seconds=time.monotonic() - started,
        cpu=cpu.sample(worker_pid) - before,
    )


def _wait(deadline: float, what: str) -> None:
    if time.monotonic() > deadline:
        raise WorldError(f"{what} did not finish in time")
    time.sleep(0.02)


def _delivered(post_id: str, live_ids: list[int]) -> tuple[int, int]:
    """How many inboxes, and how many of the live caches, hold the post."""
    key = ids.post_id_to_timeline_key(post_id)
    in_table = count_rows(
        "SELECT count(*) FROM timelines_inboxentry WHERE timeline_key = %s", [key]
    )
    redis = cache.client()
    if redis is None or not live_ids:
        return in_table, 0
    generation = cache.generation()
    pipe = redis.pipeline(transaction=False)
    for owner in live_ids:
        pipe.lpos(cache.inbox_key(owner, generation), key)
    return in_table, sum(at is not None for at in pipe.execute())
