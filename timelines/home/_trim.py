"""The cap, and the sweep that keeps inboxes to it.

- **The cap** (``cap``, FEED_INBOX_CAP): the table is trimmed to it, the cache
  trims itself to it at every push, a rebuild writes no more than it.
- **The floor**: whatever cuts an inbox (the trim here, a rebuild cut off by its
  pull) raises ``InboxState.floor`` to where it cut, in the transaction that
  deletes the entries below, so that a delivery arriving late, below the cut,
  is ignored rather than taken for the bottom of a complete inbox.
- **Away readers** (not seen for FEED_INACTIVE_DAYS) are released by the same
  sweep: their state row goes, so pushes stop, and their next page rebuilds
  the inbox. Activity is checked here, once per reader a sweep, not once per
  reader per post in the fan-out's statement.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from timelines.home import _cache
from timelines.home._models import InboxEntry, InboxState


def cap() -> int:
    """Entries kept per inbox and per cached inbox (Weibo keeps 450, Mastodon 800)."""
    return settings.FEED_INBOX_CAP


def active_since(now: datetime | None = None) -> datetime:
    """Readers last seen before this are away: the sweep releases their inboxes."""
    return (now or timezone.now()) - timedelta(days=settings.FEED_INACTIVE_DAYS)


def away(last_active: datetime | None) -> bool:
    """Whether a reader last seen at ``last_active`` (None: never) is away."""
    return last_active is None or last_active < active_since()


# Each over-cap inbox's cap-th newest key: all below it go, and it becomes the
# floor. The window is partitioned by reader, the shard key, so Citus runs it
# inside each shard (a LATERAL ... OFFSET it cannot push down). It counts up in
# the primary key's order, so the index-only scan feeds it unsorted: the cap-th
# newest is number total - cap + 1. Ranked DESC, PostgreSQL sorted every inbox first.
_FLOORS_SQL = """
SELECT reader_id, timeline_key FROM (
    SELECT reader_id, timeline_key, row_number() OVER w AS n, count(*) OVER w AS total
    FROM {inbox} WHERE reader_id = ANY(%(readers)s)
    WINDOW w AS (PARTITION BY reader_id ORDER BY timeline_key
                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
) ranked
WHERE n = total - %(cap)s + 1 AND total > %(cap)s
"""
# One statement per over-cap inbox, an index range of one reader (one shard):
# joined to the floors in one DELETE, PostgreSQL hash-joined a sequential scan
# of the whole table once its estimate of the readers' rows grew.
_DELETE_BELOW_SQL = "DELETE FROM {inbox} WHERE reader_id = %s AND timeline_key < %s"
# The floor only rises: a rebuild or a trim that cut higher first stands.
_RAISE_FLOOR_SQL = "UPDATE {state} SET floor = %s WHERE reader_id = %s AND floor < %s"


def _raise_floors(floors: list[tuple[int, str]]) -> None:
    """Raise these (reader, key) floors and delete the entries below them, in one
    transaction, so that no read finds the entries gone and the floor not raised."""
    if not floors:
        return
    inbox, state = InboxEntry._meta.db_table, InboxState._meta.db_table
    with transaction.atomic(), connection.cursor() as db:
        db.executemany(_RAISE_FLOOR_SQL.format(state=state), [(key, r, key) for r, key in floors])
        db.executemany(_DELETE_BELOW_SQL.format(inbox=inbox), floors)


def _cap_floor(reader_id: int) -> str | None:
    """The reader's cap-th newest entry, if the inbox holds that many."""
    entries = InboxEntry.objects.filter(reader_id=reader_id).order_by("-timeline_key")
    return entries.values_list("timeline_key", flat=True)[cap() - 1 : cap()].first()


def cut(reader_id: int, *, below: str | None) -> None:
    """Delete the reader's entries below ``below`` (None: no such bound) and past the
    cap, and raise the floor to the higher of the two."""
    bounds = [key for key in (below, _cap_floor(reader_id)) if key is not None]
    if bounds:
        _raise_floors([(reader_id, max(bounds))])


def trim(reader_ids: list[int]) -> None:
    """Keep the newest ``cap()`` entries of each inbox; the floor rises to the last kept."""
    if not reader_ids:
        return
    if connection.vendor == "postgresql":
        with connection.cursor() as db:
            db.execute(
                _FLOORS_SQL.format(inbox=InboxEntry._meta.db_table),
                {"readers": list(reader_ids), "cap": cap()},
            )
            floors = db.fetchall()
    else:
        floors = [(r, key) for r in reader_ids if (key := _cap_floor(r)) is not None]
    _raise_floors(floors)


def release(reader_ids: list[int]) -> None:
    """These readers are away: their inboxes are no longer kept (no push reaches them),
    and their caches go. The table's entries stay for the rebuild on their return
    to replace (``Inbox.rebuild``: complete from its floor again).

    The cache goes after the row: a page reads the cache before the state
    (``timelines.home._page``), so a rebuild finishing between the two must not find
    a cache that missed pushes.
    """
    InboxState.objects.filter(reader_id__in=reader_ids).delete()
    _cache.drop(*reader_ids)


def sweep_batch(after: int, size: int) -> int | None:
    """A step of the trim sweep (``timelines.tasks.trim_inboxes``): of the ``size``
    kept inboxes next above reader ``after``, release those whose readers are away
    and trim the rest to the cap. Returns the last reader of the batch, or None
    when no kept inbox is left above it.

    A reader who comes back as their inbox is released gets it rebuilt by
    their next page, as any reader with no kept inbox does.
    """
    batch = list(
        InboxState.objects.filter(reader_id__gt=after)
        .order_by("reader_id")
        .values_list("reader_id", flat=True)[:size]
    )
    if not batch:
        return None
    # Only the away come back, from the batch's range of kept inboxes joined to
    # their users on the reader id (the shard key of both): every reader's last
    # visit into Python, or the batch's ids as parameters, cost the worker
    # 1.6-2.0 CPU-s a sweep of 100,000 inboxes, against 0.5 for this.
    gone = set(
        InboxState.objects.filter(reader_id__gt=after, reader_id__lte=batch[-1])
        .filter(
            Q(reader__last_active_at__lt=active_since()) | Q(reader__last_active_at__isnull=True)
        )
        .values_list("reader_id", flat=True)
    )
    if gone:
        release(sorted(gone))
    trim([reader for reader in batch if reader not in gone])
    return batch[-1] if len(batch) == size else None
