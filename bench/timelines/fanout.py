"""Figure 1: fan-out of one post to every follower of bench_author, beside the raw limit."""

import statistics
import time
import zlib
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.test.utils import override_settings
from django.utils import timezone

from accounts.models import User
from bench.timelines.report import Table, Verdict
from bench.timelines.spec import Log, Options, World, WorldError
from bench.timelines.worker import celery_worker, in_process, tasks_in_process
from bench.timelines.world import count_rows
from posts import ids
from posts.services import create_post
from relations.models import Follower
from timelines import cache, inbox
from timelines.models import FanOut


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
        members = dict.fromkeys([sentinel, *keys[: inbox.cap()]], 0)
        pipe.delete(key)
        pipe.zadd(key, members)
        pipe.expire(key, ttl)
    pipe.execute()
    probe = cache.CachedInbox(reader_ids[0], generation)
    return len(reader_ids) if probe.older(None, 1) is not None else 0


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
            "INSERT INTO timelines_inboxentry (reader_id, timeline_key, author_id) "
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
    keys = [cache.inbox_key(owner, generation) for owner in followers]
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
        # The rule of fanout.deliver_chunk: one post in FEED_TRIM_EVERY also trims.
        trimmed=zlib.crc32(post.pk.encode()) % settings.FEED_TRIM_EVERY == 0,
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
        tasks_in_process(not options.worker),
    ):
        runner = celery_worker(threshold=threshold, log=log) if options.worker else in_process()
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
        pipe.zscore(cache.inbox_key(owner, generation), key)
    return in_table, sum(score is not None for score in pipe.execute())
