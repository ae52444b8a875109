"""One reader's inbox: the PostgreSQL table of timeline keys and its Redis _cache.

Seed 002's sync store. A read goes to the cache when it has the inbox, else to
the table (filling the cache on the way); a write goes to the table first and
to the cache after (``_cache``'s docstring says why that order is safe).

- **Complete from its floor**: every pushed post at or above both the floor
  (``InboxState.floor``) and the oldest entry not below it is there, but for
  deliveries still on their way. Reads below fall back to pull (``_page``).
  Whatever cuts the inbox (the trim, a rebuild) raises the floor to where it
  cut (``_trim``).
- **Kept** (an ``InboxState`` row): fan-out pushes to every kept inbox, and to
  no other. **Built** (``built_at`` set): reads trust it; otherwise it is
  rebuilt first.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from feed_project.pagination import Cursor
from posts import ids
from relations.selectors import followee_ids, is_following
from relations.visibility import is_muted
from timelines.home import _cache, _pull, _rebuild
from timelines.home._cache import CachedInbox
from timelines.home._models import InboxEntry, InboxState
from timelines.home._trim import cap, cut, trim
from timelines.models import PullAuthor


class Inbox:
    """One reader's inbox: reads from the cache when it has it, else the table."""

    def __init__(self, reader_id: int, generation: int | None = None) -> None:
        self.reader_id = reader_id
        self._generation = generation
        # Entries below it are ignored: ``InboxState.floor``, once the state is read
        # (``timelines.home._state.opened_from``).
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
        """Add (timeline key, author id) entries to this kept inbox, then its _cache."""
        if entries:
            InboxEntry.objects.bulk_create(
                [
                    InboxEntry(reader_id=self.reader_id, timeline_key=key, author_id=author_id)
                    for key, author_id in entries
                ],
                ignore_conflicts=True,
            )
            _cache.push([self.reader_id], [key for key, _ in entries], cap=self.cap)

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
            # be missing too): rebuild rather than leave the reader on _pull.
            self.rebuild()
            return
        rows = _pull.nearest_by_author([author_id], cursor=Cursor(after=floor), per_author=self.cap)
        self.push(rows)
        trim([self.reader_id])

    def remove_author(self, author_id: int) -> None:
        """After an unfollow or a mute: the author's entries leave the inbox and its _cache."""
        InboxEntry.objects.filter(reader_id=self.reader_id, author_id=author_id).delete()
        _cache.remove_author(self.reader_id, author_id)

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
            written = _rebuild.write(
                [a for a in [*followee_ids(reader_id), reader_id] if a not in pulled],
                reader_id=reader_id,
                per_author=settings.FEED_REBUILD_PER_AUTHOR,
                cap=self.cap,
            )
            # Below the oldest written key the pull was cut off (by an author or by
            # the cap), so entries from before the rebuild there may have gaps; and
            # pushes during it may have taken the inbox past the cap. The floor
            # rises to the cut.
            cut(reader_id, below=written.oldest if written.cut_off else None)
            InboxState.objects.filter(reader_id=reader_id).update(built_at=timezone.now())
        _cache.drop(reader_id)
        return written.pulled

    # --- reads ----------------------------------------------------------------

    @property
    def generation(self) -> int:
        """The cache generation it reads under (read when first asked, unless given)."""
        if self._generation is None:
            self._generation = _cache.generation()
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


def sync_author(reader_id: int, author_id: int) -> None:
    Inbox(reader_id).sync_author(author_id)


def rebuild(reader_id: int) -> int:
    return Inbox(reader_id).rebuild()


def built_reader_ids() -> QuerySet:
    """The readers whose inbox is built, as a subquery (``values("reader_id")``)."""
    return InboxState.objects.filter(built_at__isnull=False).values("reader_id")
