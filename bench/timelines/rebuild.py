"""Figure 3: services.rebuild of an inactive reader, beside one set-based INSERT ... SELECT."""

from django.conf import settings
from django.db import connection

from accounts.models import User
from bench.timelines.report import Table, Verdict, format_ms, measure_and_count
from bench.timelines.spec import Log, Options, World
from posts import ids
from relations.models import Followee
from timelines import cache, services
from timelines.models import InboxEntry, PullAuthor, TimelineState


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

    def forget_next() -> None:
        _forget_inbox(owners.next())

    log(f"rebuild: services.rebuild x {options.rebuild_runs}")
    rebuild, rebuild_queries = measure_and_count(
        lambda: services.rebuild(owner_id=owners.current),
        samples=options.rebuild_runs,
        warmup=options.rebuild_warmup,
        setup=forget_next,
    )
    log(f"rebuild: raw limit x {options.rebuild_runs}")
    raw, raw_queries = measure_and_count(
        lambda: raw_rebuild(owners.current),
        samples=options.rebuild_runs,
        warmup=options.rebuild_warmup,
        setup=forget_next,
    )
    for owner in world.idle_ids:  # leave every idle reader as a rebuild leaves it
        _forget_inbox(owner)
        services.rebuild(owner_id=owner)

    reader_following = User.objects.values_list("following_count", flat=True).get(pk=first)
    table = Table(
        title=f"3. Rebuild of an inactive reader following {reader_following:,} accounts",
        header=("step", "p50", "p99", "queries/call"),
        rows=[
            (
                "services.rebuild",
                format_ms(rebuild.p50),
                format_ms(rebuild.p99),
                str(rebuild_queries),
            ),
            (
                "raw limit: one INSERT ... SELECT of the same rows",
                format_ms(raw.p50),
                format_ms(raw.p99),
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
            measured=format_ms(value),
            baseline=f"{format_ms(base)} raw",
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


class _Cycle:
    def __init__(self, items: list[int]) -> None:
        self.items, self.index = items, -1

    @property
    def current(self) -> int:
        return self.items[self.index % len(self.items)]

    def next(self) -> int:
        self.index += 1
        return self.current
