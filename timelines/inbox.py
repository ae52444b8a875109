"""A reader's inbox: the PostgreSQL table of timeline keys and its Redis cache, under one owner.

Seed 002's sync store. Everything that reads or writes an inbox comes through
here (Mastodon's FeedManager owns "a feed" the same way); ``timelines.cache``
is the Redis adapter beneath.

- **The cap** (``Inbox.cap``, FEED_INBOX_CAP): the table is trimmed to it, the
  cache trims itself to it, a rebuild writes no more than it.
- **Complete from its floor**: every pushed post at or above both the floor
  (``InboxState.floor``) and the oldest entry not below it is there, but for
  deliveries still on their way. Reads below fall back to pull
  (``timelines.feed``). Whatever cuts the inbox (the trim, a rebuild) raises
  the floor to where it cut, so that a delivery arriving late, below the cut,
  is ignored rather than taken for the bottom of a complete inbox, with a gap
  above it where the cut posts were.
- **Kept** (an ``InboxState`` row): fan-out pushes to every kept inbox, and to
  no other. **Built** (``built_at`` set): reads trust it; otherwise it is
  rebuilt first. An inbox whose reader has been away FEED_INACTIVE_DAYS is
  released by the trim sweep (``sweep_batch``): its row goes, so pushes stop,
  and the reader's next page rebuilds it. Activity is checked there, once per
  reader a sweep, not once per reader per post in the fan-out's statement.
- Every write goes to the table first and to the cache after (the module
  docstring of ``timelines.cache`` says why that order is safe).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from feed_project.pagination import Cursor
from posts import ids
from relations.selectors import followee_ids, is_following
from relations.visibility import is_muted
from timelines import cache, pull, rebuild
from timelines.cache import CachedInbox
from timelines.models import InboxEntry, InboxState, PullAuthor


def active_since(now: datetime | None = None) -> datetime:
    """Readers last seen before this are away: the sweep releases their inboxes."""
    return (now or timezone.now()) - timedelta(days=settings.FEED_INACTIVE_DAYS)


def away(last_active: datetime | None) -> bool:
    """Whether a reader last seen at ``last_active`` (None: never) is away."""
    return last_active is None or last_active < active_since()


def cap() -> int:
    """Entries kept per inbox and per cached inbox (Weibo keeps 450, Mastodon 800)."""
    return settings.FEED_INBOX_CAP


class Inbox:
    """One reader's inbox: reads from the cache when it has it, else the table."""

    def __init__(self, reader_id: int, generation: int | None = None) -> None:
        self.reader_id = reader_id
        self._generation = generation
        # Entries below it are ignored: ``InboxState.floor``, once the state is read
        # (``timelines.opening.opened_from``).
        self.floor = ids.LOWEST_KEY
        self._rows: list[str] | None = None  # the table's keys, newest first, once read
        self._cached: dict[tuple[str | None, int], list[str] | None] = {}  # cache reads

    @property
    def cap(self) -> int:
        return cap()

    # --- state ----------------------------------------------------------------

    def is_kept(self) -> bool:
        return InboxState.objects.filter(reader_id=self.reader_id).exists()

    # --- writes ---------------------------------------------------------------

    def push(self, entries: list[tuple[str, int]]) -> None:
        """Add (timeline key, author id) entries to this kept inbox, then its cache."""
        if entries:
            _insert(self.reader_id, entries)
            cache.push([self.reader_id], [key for key, _ in entries], cap=self.cap)

    def oldest_key(self, floor: str) -> str | None:
        """The oldest entry at or above ``floor``."""
        return (
            InboxEntry.objects.filter(reader_id=self.reader_id, timeline_key__gte=floor)
            .order_by("timeline_key")
            .values_list("timeline_key", flat=True)
            .first()
        )

    def sync_author(self, author_id: int) -> None:
        """After a follow, unfollow, mute or unmute: the author's posts are in the inbox
        if the reader follows them and has not muted them, as the graph stands now.

        The graph is read now, not taken from the event, so calls may run late
        (swept from the outbox), twice, or out of order; calls for one pair run
        one at a time, so an older call cannot undo a newer one's work.
        """
        with _one_at_a_time(self.reader_id, author_id):
            following = is_following(follower_id=self.reader_id, followee_id=author_id)
            if following and not is_muted(self.reader_id, author_id):
                self.add_author(author_id)
            else:
                self.remove_author(author_id)

    def add_author(self, author_id: int) -> None:
        """After a follow (or unmute): the author's posts newer than the oldest entry at
        or above the floor.

        Then trim, so the inbox is again complete from its floor (the author may
        have more posts in that span than the cap holds: the trim raises the
        floor above those left out).
        """
        state = InboxState.objects.filter(reader_id=self.reader_id).values_list("floor", flat=True)
        kept_floor = state.first()
        if kept_floor is None or PullAuthor.objects.filter(author_id=author_id).exists():
            return  # rebuilt on the next read, or merged in at read time
        if not is_following(follower_id=self.reader_id, followee_id=author_id):
            return  # unfollowed (or unmuted someone not followed) since
        floor = self.oldest_key(kept_floor)
        if floor is None:
            # Nothing to say where "complete" starts (other followees' posts may
            # be missing too): rebuild rather than leave the reader on pull.
            self.rebuild()
            return
        rows = pull.nearest_by_author([author_id], cursor=Cursor(after=floor), per_author=self.cap)
        self.push(rows)
        trim([self.reader_id])

    def remove_author(self, author_id: int) -> None:
        """After an unfollow or a mute: the author's entries leave the inbox and its cache."""
        InboxEntry.objects.filter(reader_id=self.reader_id, author_id=author_id).delete()
        cache.remove_author(self.reader_id, author_id)

    def rebuild(self) -> int:
        """Rebuild by a bounded pull; returns the number of entries pulled.

        1. The state row is committed first, so fan-outs running from now on
           push to this inbox; a post committed during the rebuild is either
           pulled or pushed. A built inbox stays built meanwhile: readers see
           the old inbox until the new one commits (one that missed pushes has
           no row: the sweep released it), so a second rebuild of the same
           inbox (an operator's, or a task run twice) never sends its readers
           to rebuild it again.
        2. The newest FEED_REBUILD_PER_AUTHOR posts of each followee (and the
           reader's own) are inserted. Where an author had more, the inbox is
           complete only above that author's oldest pulled key, so entries
           below the highest such key are deleted: the inbox is again complete
           above its oldest entry.
        3. In the same transaction: trim to the cap and mark built. Then drop
           the cache (the next read refills).
        """
        reader_id = self.reader_id
        InboxState.objects.bulk_create([InboxState(reader_id=reader_id)], ignore_conflicts=True)
        pulled = set(PullAuthor.objects.values_list("author_id", flat=True))
        with transaction.atomic():
            written = rebuild.write(
                [a for a in [*followee_ids(reader_id), reader_id] if a not in pulled],
                reader_id=reader_id,
                per_author=settings.FEED_REBUILD_PER_AUTHOR,
                cap=self.cap,
            )
            # Below the oldest written key the pull was cut off (by an author or by
            # the cap), so entries from before the rebuild there may have gaps; and
            # pushes during it may have taken the inbox past the cap. The floor
            # rises to the cut.
            _cut(reader_id, below=written.oldest if written.cut_off else None)
            InboxState.objects.filter(reader_id=reader_id).update(built_at=timezone.now())
        cache.drop(reader_id)
        return written.pulled

    # --- reads ----------------------------------------------------------------

    @property
    def generation(self) -> int:
        """The cache generation it reads under (read when first asked, unless given)."""
        if self._generation is None:
            self._generation = cache.generation()
        return self._generation

    @property
    def cached(self) -> CachedInbox:
        return CachedInbox(self.reader_id, self.generation)

    def _table(self) -> list[str]:
        """The whole inbox from the table, newest first; fills the cache on the way."""
        if self._rows is None:
            cached = self.cached
            token = cached.begin_fill()
            self._rows = list(
                InboxEntry.objects.filter(reader_id=self.reader_id)
                .order_by("-timeline_key")
                .values_list("timeline_key", flat=True)[: self.cap]
            )
            if token is not None:
                cached.finish_fill(token, self._rows)
        return self._rows

    def cached_older(self, before: str | None, limit: int) -> list[str] | None:
        """``older`` from the cache alone, None on a miss; read once per window (a page
        may read its first window before it knows the inbox is the one to read)."""
        window = (before, limit)
        if window not in self._cached:
            self._cached[window] = self.cached.older(before, limit)
        return self._cached[window]

    def older(self, before: str | None, limit: int) -> list[str]:
        """Up to ``limit`` keys below ``before`` (or the newest), newest first, none
        below the floor (fewer than ``limit``: the inbox ends there)."""
        keys = self.cached_older(before, limit)
        if keys is None:
            rows = self._table()
            keys = [key for key in rows if before is None or key < before][:limit]
        return [key for key in keys if key >= self.floor]

    def newer(self, after: str, limit: int) -> tuple[list[str], bool]:
        """Up to ``limit`` keys above ``after``, oldest first, and whether the inbox
        reaches down to ``after`` with an entry not below the floor (so nothing
        between is missing)."""
        result = self.cached.newer(after, limit)
        if result is not None:
            above, reached = result
        else:
            rows = self._table()
            above = [key for key in reversed(rows) if key > after][:limit]
            reached = next((key for key in rows if key <= after), None)
        kept = [key for key in above if key >= self.floor]
        return kept, reached is not None and reached >= self.floor

    def count_newer(self, after: str, most: int) -> int:
        """About how many entries lie above ``after``, at most ``most``: one script
        call to the Redis cache, or one bounded index scan of the table."""
        count = self.cached.count_newer(after, most)
        if count is not None:
            return count
        return InboxEntry.objects.filter(reader_id=self.reader_id, timeline_key__gt=after)[
            :most
        ].count()


@contextmanager
def _one_at_a_time(reader_id: int, author_id: int) -> Iterator[None]:
    """A session advisory lock on the pair (PostgreSQL; SQLite runs one writer anyway).

    Held across commits: a rebuild inside commits its state row first.
    """
    if connection.vendor != "postgresql":
        yield
        return
    # The two-int4 form, one id each: user ids fit 32 bits (posts/ids.py's budget),
    # so no two pairs share a lock.
    key = [_int4(reader_id), _int4(author_id)]
    with connection.cursor() as db:
        db.execute("SELECT pg_advisory_lock(%s, %s)", key)
    try:
        yield
    finally:
        with connection.cursor() as db:
            db.execute("SELECT pg_advisory_unlock(%s, %s)", key)


def _int4(user_id: int) -> int:
    return user_id - (1 << 32) if user_id >= 1 << 31 else user_id


# --- many inboxes at once (fan-out, deletes) --------------------------------------


def _insert(reader_id: int, entries: list[tuple[str, int]]) -> None:
    InboxEntry.objects.bulk_create(
        [InboxEntry(reader_id=reader_id, timeline_key=key, author_id=a) for key, a in entries],
        ignore_conflicts=True,
    )


def pushed(reader_ids: list[int], key: str) -> None:
    """The table rows of ``key`` went into these inboxes (fan-out's one statement):
    now their live caches."""
    cache.push(reader_ids, [key], cap=cap())


def remove_key(reader_ids: list[int], key: str) -> None:
    """A deleted post's key leaves these inboxes and their caches."""
    InboxEntry.objects.filter(reader_id__in=reader_ids, timeline_key=key).delete()
    cache.remove(reader_ids, [key])


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


def _cut(reader_id: int, *, below: str | None) -> None:
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
    (``timelines.feed``), so a rebuild finishing between the two must not find
    a cache that missed pushes.
    """
    InboxState.objects.filter(reader_id__in=reader_ids).delete()
    cache.drop(*reader_ids)


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
