"""Figure 4: the first page of a reader who follows thousands of accounts and has no inbox."""

import random

from django.core.cache import cache as django_cache
from django.db import connection
from django.utils import timezone

from accounts.models import User
from bench.timelines import plain
from bench.timelines.rebuild import forget_inbox
from bench.timelines.report import (
    TIMING_HEADER,
    Table,
    Verdict,
    format_ms,
    measure_and_count,
    timing_row,
)
from bench.timelines.spec import FOLLOWER, Log, Options, World, WorldError
from bench.timelines.world import insert_follows, set_counters
from feed_project.pagination import Cursor
from posts.models import Post
from relations.selectors import followee_ids
from timelines.home import _page as feed
from timelines.home import _state as opening
from timelines.home._inbox import Inbox
from timelines.home._items import hydrate

WIDE = f"{FOLLOWER}wide"  # a bench_ name: dropped with the world


def _ensure_wide_reader(world: World, following: int, log: Log) -> int:
    """``bench_wide``, following ``following`` of the world's posting accounts (made once)."""
    row = User.objects.filter(username=WIDE).values_list("pk", "following_count").first()
    if row is not None:
        if row[1] != following:
            raise WorldError(f"{WIDE} follows {row[1]:,} accounts, not {following:,}")
        return row[0]
    posting = list(
        Post.objects.values_list("author_id", flat=True).distinct().order_by("author_id")
    )
    posting = [a for a in posting if a not in (world.author_id, world.reader_id)]
    if len(posting) < following:
        raise WorldError(f"the world has {len(posting):,} posting accounts, not {following:,}")
    log(f"wide reader: {WIDE} follows {following:,} accounts (once per world)")
    reader = User.objects.create(username=WIDE, last_active_at=timezone.now())
    rng = random.Random(11)
    insert_follows(rng, [(reader.pk, a) for a in rng.sample(posting, following)], timezone.now())
    set_counters()
    with connection.cursor() as db:
        db.execute("ANALYZE relations_followee, relations_follower")
    return reader.pk


def wide_figure(world: World, options: Options, log: Log) -> tuple[Table, list[Verdict]]:
    """Figure 4: home_feed's first page with no inbox (the page rebuilds it first),
    beside the plain query a Django developer would write for the same page."""
    reader_id = _ensure_wide_reader(world, options.wide_following, log)
    reader = User.objects.get(pk=reader_id)
    limit = feed.page_size(None)
    authors = [*followee_ids(reader_id), reader_id]

    def by_list() -> list:
        keys = plain.keys_by_list(authors, cursor=Cursor(), limit=limit + 1)
        return hydrate(keys, reader_id=reader_id, following=reader.following_count)

    def by_subquery() -> list:
        keys = plain.keys_by_subquery(reader_id, cursor=Cursor(), limit=limit + 1)
        return hydrate(keys, reader_id=reader_id, following=reader.following_count)

    def first_page() -> None:
        feed.home_feed(reader=reader, cursor=Cursor())

    def away_with_rebuild_queued() -> None:
        # A first visit queues the rebuild; the mark says one is on its way, so
        # the timed visits do not queue more (a worker would run them beside).
        forget_inbox(reader_id)
        django_cache.set(opening.REBUILD_QUEUED.format(reader_id), 1, timeout=None)

    log(f"wide reader: first page x {options.samples}")
    page, page_queries = measure_and_count(
        first_page, samples=options.samples, warmup=options.warmup, setup=away_with_rebuild_queued
    )
    runs = options.rebuild_runs
    log(f"wide reader: the queued rebuild x {runs}")
    rebuilt, rebuild_queries = measure_and_count(
        Inbox(reader_id).rebuild, samples=runs, warmup=1, setup=away_with_rebuild_queued
    )
    forget_inbox(reader_id)
    django_cache.delete(opening.REBUILD_QUEUED.format(reader_id))
    log(f"wide reader: plain queries x {options.samples}")
    listed, listed_queries = measure_and_count(
        by_list, samples=options.samples, warmup=options.warmup
    )
    nested, nested_queries = measure_and_count(
        by_subquery, samples=options.samples, warmup=options.warmup
    )
    base = min(listed, nested, key=lambda timing: timing.p50)
    table = Table(
        title=f"4. First page of {WIDE} (follows {options.wide_following:,} accounts, no inbox)",
        header=("read", *TIMING_HEADER),
        rows=[
            timing_row("home_feed, no inbox (rebuild queued, the page pulled)", page, page_queries),
            timing_row("the queued rebuild (Inbox.rebuild, in a worker)", rebuilt, rebuild_queries),
            timing_row(
                "plain query: author IN followees ORDER BY key LIMIT + hydrate",
                listed,
                listed_queries,
            ),
            timing_row("plain query, follows as a subquery + hydrate", nested, nested_queries),
        ],
        notes=[
            f"{options.samples} samples each after {options.warmup} warm-up calls ({runs} runs "
            "of the rebuild); before each call (untimed) the reader's inbox rows, state and "
            "cache are deleted, so every page is a first visit: the reader follows more than "
            "FEED_REBUILD_INLINE_FOLLOWING accounts, so the page is pulled (two passes, "
            "timelines.home._pull.merged) while a worker rebuilds the inbox",
            "the plain query is "
            "Post.objects.visible().filter(author_id__in=...).order_by('-timeline_key'), the "
            "followees as a list read before (untimed) or as a subquery; the baseline is the "
            "faster",
        ],
    )
    verdict = Verdict(
        figure=f"First page, {options.wide_following:,} followees, no inbox, p50",
        measured=format_ms(page.p50),
        baseline=f"{format_ms(base.p50)} plain",
        ratio=f"{base.p50 / page.p50:.1f}x faster",
        target="< 60 ms",
        met=page.p50 < 60,
    )
    return table, [verdict]
