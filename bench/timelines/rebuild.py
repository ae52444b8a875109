"""Figure 3: Inbox.rebuild of an inactive reader, beside one set-based INSERT ... SELECT."""

from django.conf import settings
from django.db import connection

from accounts.models import User
from bench.timelines.report import (
    TIMING_HEADER,
    Table,
    Verdict,
    count_queries,
    format_ms,
    measure_together,
    timing_row,
)
from bench.timelines.spec import Log, Options, World
from feed_project.sharding import on_citus
from posts import ids
from relations.models import Followee
from timelines import home
from timelines.home import _cache as cache
from timelines.home._inbox import Inbox
from timelines.home._models import InboxEntry, InboxState
from timelines.models import PullAuthor


def forget_inbox(reader_id: int) -> None:
    """Back to a reader who was away: no inbox rows, no state row, no cache."""
    InboxEntry.objects.filter(reader_id=reader_id).delete()
    InboxState.objects.filter(reader_id=reader_id).delete()
    cache.drop(reader_id)


# On plain PostgreSQL, one LATERAL index scan per author over an array of
# authors: the fastest plain form (a UNION ALL of one leg per author took 2-3x
# as long, parsing and planning 1,000 legs). On Citus, which cannot push a LIMIT
# down a LATERAL over an array, one leg per author, each filtered by the author
# (the shard key), so that each runs on its author's shard.
_LATERAL = """SELECT p.timeline_key, p.author_id FROM unnest(%s::bigint[]) AS b(author)
  CROSS JOIN LATERAL (SELECT timeline_key, author_id FROM posts_post p
    WHERE p.author_id = b.author AND p.deleted_at IS NULL AND p.hidden_at IS NULL
    ORDER BY p.id DESC LIMIT %s) p"""
_LEG = """(SELECT timeline_key, author_id FROM posts_post p
  WHERE p.author_id = %s AND p.id >= %s AND p.id < %s
    AND p.deleted_at IS NULL AND p.hidden_at IS NULL
  ORDER BY p.id DESC LIMIT %s)"""

_RAW_REBUILD = """
WITH pulled AS (
    SELECT p.timeline_key, p.author_id,
           count(*) OVER w AS taken, min(p.timeline_key) OVER w AS lowest
    FROM ({pulled}) p
    WINDOW w AS (PARTITION BY p.author_id)
), floor AS (
    SELECT max(lowest) AS key FROM pulled WHERE taken >= %s
)
INSERT INTO timelines_inboxentry (reader_id, timeline_key, author_id)
SELECT %s, pulled.timeline_key, pulled.author_id FROM pulled, floor
WHERE floor.key IS NULL OR pulled.timeline_key >= floor.key
ORDER BY pulled.timeline_key DESC LIMIT %s
ON CONFLICT DO NOTHING
"""


def raw_rebuild(reader_id: int) -> None:
    """The rows Inbox.rebuild keeps, written by one INSERT ... SELECT.

    The same pull (each followee's newest FEED_REBUILD_PER_AUTHOR posts), the
    same floor (entries below an author who had more are dropped), the same
    cap; the database picks the newest FEED_INBOX_CAP instead of Python
    inserting every pulled row and trimming after.
    """
    pulled = set(PullAuthor.objects.values_list("author_id", flat=True))
    authors = [
        a
        for a in Followee.objects.filter(user_id=reader_id).values_list("followee_id", flat=True)
        if a not in pulled
    ]
    if reader_id not in pulled:
        authors.append(reader_id)
    if not authors:
        return
    per_author = settings.FEED_REBUILD_PER_AUTHOR
    if on_citus(connection):
        params: list[object] = []
        for author in authors:
            low, high = ids.post_id_bounds(author)
            params += [author, low, high, per_author]
        pulled = "\nUNION ALL\n".join([_LEG] * len(authors))
    else:
        pulled, params = _LATERAL, [authors, per_author]
    with connection.cursor() as db:
        db.execute(_RAW_REBUILD.format(pulled=pulled), [*params, per_author, reader_id, home.cap()])


def _inbox_keys(reader_id: int) -> list[str]:
    return list(
        InboxEntry.objects.filter(reader_id=reader_id)
        .order_by("-timeline_key")
        .values_list("timeline_key", flat=True)
    )


def rebuild_figure(world: World, options: Options, log: Log) -> tuple[Table, list[Verdict]]:
    """Figure 3: Inbox.rebuild of an inactive reader, beside the set-based raw limit."""
    readers = _Cycle(world.idle_ids)
    first = world.idle_ids[0]
    forget_inbox(first)
    pulled = Inbox(first).rebuild()
    kept = _inbox_keys(first)
    forget_inbox(first)
    raw_rebuild(first)
    same = _inbox_keys(first) == kept

    def forget_next() -> None:
        forget_inbox(readers.next())

    def forget_current() -> None:
        forget_inbox(readers.current)

    def rebuild_current() -> None:
        Inbox(readers.current).rebuild()

    def raw_current() -> None:
        raw_rebuild(readers.current)

    # In turn, one of each a round, on the same reader.
    log(f"rebuild: Inbox.rebuild and the raw limit in turn, {options.rebuild_runs} each")
    rebuild, raw = measure_together(
        [(rebuild_current, forget_next), (raw_current, forget_current)],
        samples=options.rebuild_runs,
        warmup=options.rebuild_warmup,
        rounds=options.rebuild_runs,
    )
    rebuild_queries = count_queries(rebuild_current, forget_next)
    raw_queries = count_queries(raw_current, forget_current)
    for reader in world.idle_ids:  # leave every idle reader as a rebuild leaves it
        forget_inbox(reader)
        Inbox(reader).rebuild()

    reader_following = User.objects.values_list("following_count", flat=True).get(pk=first)
    table = Table(
        title=f"3. Rebuild of an inactive reader following {reader_following:,} accounts",
        header=("step", *TIMING_HEADER),
        rows=[
            timing_row("Inbox.rebuild", rebuild, rebuild_queries),
            timing_row("raw limit: one INSERT ... SELECT of the same rows", raw, raw_queries),
        ],
        notes=[
            f"{options.rebuild_runs} runs each after {options.rebuild_warmup} warm-up runs, "
            f"in turn on the same reader, cycling over {len(world.idle_ids)} idle readers; "
            "before each run (untimed) the reader's inbox rows, state row and cache are deleted",
            f"Inbox.rebuild pulled {pulled:,} rows and kept {len(kept):,} "
            f"(FEED_REBUILD_PER_AUTHOR {settings.FEED_REBUILD_PER_AUTHOR}, "
            f"FEED_INBOX_CAP {home.cap()})",
            "the raw limit wrote the same inbox as Inbox.rebuild: " + ("yes" if same else "NO"),
        ],
    )
    verdicts = [
        Verdict(
            figure="Rebuild, p50",
            measured=format_ms(rebuild.p50),
            baseline=f"{format_ms(raw.p50)} raw",
            ratio=f"{rebuild.p50 / raw.p50:.1f}x",
            target="<= 1.3x raw",
            met=rebuild.p50 <= 1.3 * raw.p50,
        ),
        Verdict(
            figure="Rebuild, p99",
            measured=format_ms(rebuild.p99),
            baseline=f"{format_ms(raw.p99)} raw",
            ratio=f"{rebuild.p99 / raw.p99:.1f}x",
            target="< 150 ms",
            met=rebuild.p99 < 150,
        ),
    ]
    return table, verdicts


class _Cycle:
    def __init__(self, items: list[int]) -> None:
        self.items, self.index = items, -1

    @property
    def current(self) -> int:
        return self.items[self.index % len(self.items)]

    def next(self) -> int:
        self.index += 1
        return self.current
