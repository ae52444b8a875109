"""Figure 2: home feed pages, cache warm and dropped, beside the pull model."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from accounts.models import User
from bench.timelines import plain
from bench.timelines.report import (
    TIMING_HEADER,
    Table,
    Verdict,
    count_queries,
    format_ms,
    measure,
    measure_and_count,
    measure_together,
    timing_row,
)
from bench.timelines.spec import READER, Log, Options, World, WorldError
from feed_project.pagination import Cursor
from posts.models import Post
from relations.selectors import followee_ids
from timelines.home import FeedItem
from timelines.home import _cache as cache
from timelines.home import _held_posts as held
from timelines.home import _page as feed
from timelines.home import _pull as pull
from timelines.home import _state as opening
from timelines.home import _time_limit as timeouts
from timelines.home._inbox import Inbox
from timelines.home._items import hydrate
from timelines.home._models import InboxEntry
from timelines.models import PullAuthor

DEEP_PAGE = 5
# The reads of a page are taken in turn, a share of each one's samples a round.
READ_ROUNDS = 10


def home_figures(world: World, options: Options, log: Log) -> tuple[Table, list[Verdict]]:
    """Figure 2: page 1 and a deep page, cached and not, beside the pull model."""
    reader = User.objects.get(pk=world.reader_id)
    # Worlds filled before fill_inboxes spared the reader hold other accounts'
    # posts in its inbox, which every page read past (a rebuild keeps rows it
    # did not write): emptied and rebuilt, it holds what the engine puts there.
    InboxEntry.objects.filter(reader_id=reader.pk).delete()
    Inbox(reader.pk).rebuild()
    limit = feed.page_size(None)
    cursor = Cursor()
    for _ in range(DEEP_PAGE - 1):
        older = feed.home_feed(reader=reader, cursor=cursor).older
        if older is None:
            raise WorldError(f"{READER}'s feed has fewer than {DEEP_PAGE} pages")
        cursor = Cursor(before=older)
    table = Table(
        title=f"2. Home feed of {READER} (follows {reader.following_count:,} accounts), "
        f"{limit} posts a page",
        header=("read", *TIMING_HEADER),
        notes=[
            f"{options.samples} samples each after "
            f"{options.warmup} warm-up calls, after a rebuild of {READER}'s inbox; a page's "
            f"reads but the last two taken in turn, in {READ_ROUNDS} rounds of a share of each "
            "one's samples; "
            f"'cache dropped' runs timelines.home._cache.drop({READER}) before each sample "
            "(untimed); 'no post held' runs timelines.home._held_posts.clear() (a process's "
            "first page: its posts read); every other read holds its posts "
            f"(FEED_HELD_POSTS {settings.FEED_HELD_POSTS:,})",
            "'its cache read alone' and 'its statements alone': the cached page's calls "
            "as it made them, its Redis script call and its statements (on plain "
            "PostgreSQL one: the state statement as the entries statement's prelude), "
            "through the same clients",
            "'one followee pulled': one of the accounts bench_reader follows is a big "
            "account (a PullAuthor row) while it runs, its posts merged in at read time, "
            "as most readers of a microblog follow one",
            f"the pull models ask for {limit + 1} keys, as home_feed does (one more than a page); "
            "the plain query is Post.objects.visible().filter(author_id__in=followees + reader)"
            ".order_by('-timeline_key')[:limit], the followees read first or (the second "
            "form) as a subquery: the target's baseline is the faster of the two",
        ],
    )
    verdicts = []
    drop = _Call(cache.drop, reader.pk)
    for number, page_cursor in ((1, Cursor()), (DEEP_PAGE, cursor)):
        read = _Call(feed.home_feed, reader=reader, cursor=page_cursor)
        # The page's calls alone go right after it, so that the page follows the
        # plain query in each round as before they were measured.
        cases = [
            ("home_feed, cache warm", read, None),
            *_its_calls(read, reader.pk, page_cursor),
            ("home_feed, cache dropped", read, drop),
            ("home_feed, cache warm, no post held", read, held.clear),
            (
                "pull_keys + hydrate",
                _Pull(pull.reader_keys, reader, page_cursor, limit),
                None,
            ),
            ("plain query + hydrate", _Pull(_plain_keys, reader, page_cursor, limit), None),
            (
                "plain query, follows as a subquery + hydrate",
                _Pull(_plain_subquery_keys, reader, page_cursor, limit),
                None,
            ),
        ]
        log(f"home page {number}: {len(cases)} reads in turn, {READ_ROUNDS} rounds")
        measured = measure_together(
            [(fn, setup) for _, fn, setup in cases],
            samples=options.samples,
            warmup=options.warmup,
            rounds=READ_ROUNDS,
        )
        timings, counts = {}, {}
        for (label, fn, setup), timing in zip(cases, measured, strict=True):
            timings[label], counts[label] = timing, count_queries(fn, setup)
            table.rows.append(timing_row(f"page {number}: {label}", timing, counts[label]))
        label, samples = "home_feed, cache warm, one followee pulled", options.samples
        log(f"home page {number}: {label}")
        with one_followee_pulled(reader.pk):
            timing, queries = measure_and_count(read, samples=samples, warmup=options.warmup)
        table.rows.append(timing_row(f"page {number}: {label}", timing, queries))
        cached, statements = timings["home_feed, cache warm"], counts["home_feed, cache warm"]
        floor = measure(_round_trips(statements), samples=options.samples, warmup=options.warmup)
        table.rows.append(timing_row(f"page {number}: its round trips alone", floor, statements))
        # The target's baseline is the best plain pull query, not a per-author one:
        # what a Django developer writes without the engine. The engine's own
        # per-author pull is printed beside it.
        plain = min(
            timings[label].p50
            for label in (
                "plain query + hydrate",
                "plain query, follows as a subquery + hydrate",
            )
        )
        per_author = timings["pull_keys + hydrate"].p50
        forms = [
            keys(reader_id=reader.pk, cursor=page_cursor, limit=limit + 1)
            for keys in (_plain_keys, _plain_subquery_keys)
        ]
        parts = timings["its cache read alone"].p50 + timings["its statements alone"].p50
        table.notes.append(
            f"page {number}: 10x the best plain query asks for a page in "
            f"{format_ms(plain / 10)}; its round trips alone take {format_ms(floor.p50)}; "
            f"its cache read and its statements alone {format_ms(parts)}, the rest of it "
            f"(the engine's work in the process) about {format_ms(cached.p50 - parts)}; "
            f"the cached page is {per_author / cached.p50:.1f}x faster than the engine's "
            f"per-author pull; the two plain forms return the same keys: "
            f"{'yes' if forms[0] == forms[1] else 'NO'}"
        )
        verdicts.append(
            Verdict(
                figure=f"Home page {number}, cached, p50",
                measured=format_ms(cached.p50),
                baseline=f"{format_ms(plain)} best plain query",
                ratio=f"{plain / cached.p50:.1f}x faster",
                target=">= 10x faster",
                met=plain >= 10 * cached.p50,
            )
        )
        verdicts.append(
            Verdict(
                figure=f"Home page {number}, cached, p99",
                measured=format_ms(cached.p99),
                baseline="",
                ratio="",
                target="< 5 ms",
                met=cached.p99 < 5,
            )
        )
    # The sampled calls leave the reader's cache live, as a visit would.
    return table, verdicts


@contextmanager
def one_followee_pulled(reader_id: int) -> Iterator[None]:
    """One of the reader's followees pulled at read time, as a big account is: the one
    who posted last, so that the pull finds posts for the page (the first by id,
    bench_author, has none once the fan-out posts are gone)."""
    author_id = (
        Post.objects.visible()
        .filter(author_id__in=followee_ids(reader_id))
        .order_by("-timeline_key")
        .values_list("author_id", flat=True)
        .first()
    )
    _, created = PullAuthor.objects.get_or_create(
        author_id=author_id, defaults={"since": timezone.now()}
    )
    with connection.cursor() as db:  # as autovacuum would after the row (off here)
        db.execute(f"ANALYZE {PullAuthor._meta.db_table}")
    try:
        yield
    finally:
        if created:
            PullAuthor.objects.filter(author_id=author_id).delete()
            with connection.cursor() as db:
                db.execute(f"ANALYZE {PullAuthor._meta.db_table}")


def _its_calls(
    read: Callable[[], Any], reader_id: int, cursor: Cursor
) -> list[tuple[str, Callable[[], Any], None]]:
    """A cached page's calls alone, as ``read`` last made them: its cache read (a new
    Inbox each time: one reads a window once) and its statements, with the page's
    text and parameters (one on plain PostgreSQL; on Citus the routed reads of
    ``timelines.home._items``). The page less these is the engine's own work."""
    made: list[tuple[str, Any]] = []

    def record(execute, sql, params, many, context):  # Django's execute_wrapper
        made.append((sql, params))
        return execute(sql, params, many, context)

    read()  # the cache filled, the held posts read, the state seen
    with connection.execute_wrapper(record):
        read()
    if not made:
        raise WorldError("a cached page made no statement")
    size = feed.first_window_size(feed.page_size(None))
    generation = opening.seen_generation()

    def cache_read() -> list[str] | None:
        return Inbox(reader_id, generation=generation).cached_older(cursor.before, size)

    if cache_read() is None:
        raise WorldError("a cached page's cache read missed")

    def statements() -> list[list[tuple]]:
        return [timeouts.rows(sql, params, timeout_ms=None) for sql, params in made]

    return [("its cache read alone", cache_read, None), ("its statements alone", statements, None)]


def _round_trips(statements: int) -> Callable[[], None]:
    """A cached page with no work in it: its statements as ``SELECT 1`` and its one
    Redis call as a GET, through the same clients (the floor of its p50)."""
    redis = cache.client()

    def call() -> None:
        with connection.cursor() as db:
            for _ in range(statements):
                db.execute("SELECT 1")
                db.fetchone()
        if redis is not None:
            redis.get("bench:round-trip")

    return call


def _plain_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """The plain query with the followees as a list, read first (bench.timelines.plain)."""
    return plain.keys_by_list([*followee_ids(reader_id), reader_id], cursor=cursor, limit=limit)


def _plain_subquery_keys(*, reader_id: int, cursor: Cursor, limit: int) -> list[str]:
    """The plain query with the followees as a subquery (bench.timelines.plain)."""
    return plain.keys_by_subquery(reader_id, cursor=cursor, limit=limit)


class _Call:
    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def __call__(self) -> Any:
        return self.fn(*self.args, **self.kwargs)


class _Pull:
    """A pull-model page: the keys, then the posts, as a page would need them."""

    def __init__(self, keys: Callable[..., list[str]], reader: User, cursor: Cursor, limit: int):
        self.keys, self.cursor, self.limit = keys, cursor, limit
        self.reader_id, self.following = reader.pk, reader.following_count

    def __call__(self) -> list[FeedItem]:
        keys = self.keys(reader_id=self.reader_id, cursor=self.cursor, limit=self.limit + 1)
        return hydrate(keys, reader_id=self.reader_id, following=self.following)
