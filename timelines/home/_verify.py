"""The self-check: an inbox held to the pull model, and repaired where it differs.

Run on a sample of kept inboxes by beat (``timelines.tasks.verify_inboxes``)
and by ``rebuild_timelines --verify``, so that a bug that loses posts is seen,
counted and healed where it happens rather than left in readers' feeds.
"""

import random
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from feed_project.pagination import Cursor
from posts import ids
from timelines import outbox
from timelines.home import _cache
from timelines.home._cache import CachedInbox
from timelines.home._inbox import Inbox
from timelines.home._models import InboxEntry, InboxState
from timelines.home._trim import cap
from timelines.home.pull_model import pull_reference_keys
from timelines.models import PullAuthor


@dataclass(frozen=True)
class Verified:
    """What checking one inbox against the pull model found (and repaired)."""

    reader_id: int
    missing: int  # posts the table vouched for and lacked: written
    cache_missing: int  # posts the cache vouched for and lacked: the cache dropped

    @property
    def differed(self) -> bool:
        return bool(self.missing or self.cache_missing)


def verify(reader_id: int) -> Verified | None:
    """Hold the reader's inbox, table and cache, to the pull model, and repair it: every
    post of the feed that the inbox vouches for (at or above its floor and its oldest
    entry there) must be in it. None when there is nothing to hold it to now: the
    inbox is not kept, or a change of the reader's follows is still on its way.

    Posts younger than twice FEED_SWEEP_AFTER_SECONDS are left out, since their
    delivery may still be on its way. A missing post is written to the table, and
    the cache, if it missed any, is dropped (the next page refills it from the
    table). Entries the reader should no longer have (an author unfollowed) are
    left alone: the read drops them, and the trim deletes them in time.
    """
    floor = InboxState.objects.filter(reader_id=reader_id).values_list("floor", flat=True).first()
    if floor is None or outbox.pending_for(reader_id):
        return None
    settled = timezone.now() - timedelta(seconds=2 * settings.FEED_SWEEP_AFTER_SECONDS)
    below = ids.encode_number(ids.time_of(settled), ids.TIME_WIDTH).ljust(ids.KEY_LENGTH, "0")
    pulled = set(PullAuthor.objects.values_list("author_id", flat=True))

    def lacking(stored: list[str]) -> list[str]:
        vouched = [key for key in stored if key >= floor]
        if not vouched:
            return []
        feed = pull_reference_keys(
            reader_id=reader_id, cursor=Cursor(before=below, after=min(vouched)), limit=10**9
        )
        kept = set(vouched)
        return [
            key for key in feed if key not in kept and ids.author_of_timeline_key(key) not in pulled
        ]

    table = list(
        InboxEntry.objects.filter(reader_id=reader_id).values_list("timeline_key", flat=True)
    )
    missing = lacking(table)
    Inbox(reader_id).push([(key, ids.author_of_timeline_key(key)) for key in missing])
    cached = CachedInbox(reader_id, _cache.generation()).older(None, cap() + 1)
    cache_missing = [] if cached is None else lacking(cached)
    if missing or cache_missing:
        _cache.drop(reader_id)
    return Verified(reader_id, missing=len(missing), cache_missing=len(cache_missing))


def sample_kept(size: int) -> list[int]:
    """About ``size`` kept inboxes, the next ones from a random reader id on: one range
    of the state rows' primary key, however many readers there are."""
    highest = InboxState.objects.order_by("-reader_id").values_list("reader_id", flat=True).first()
    if highest is None:
        return []
    start = random.randint(0, highest)
    readers = InboxState.objects.order_by("reader_id").values_list("reader_id", flat=True)
    found = list(readers.filter(reader_id__gte=start)[:size])
    if len(found) < size:  # wrapped around the top
        found += readers.filter(reader_id__lt=start)[: size - len(found)]
    return found
