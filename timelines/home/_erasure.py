"""The home feed's part of erasing an account: the user's inbox (rows, state) and cache,
and the user's posts in other readers' inboxes.

Rows carry their author, so one statement across shards finds those readers;
their caches lose the author's keys once the erasure commits (the posts are
gone already: reads join live posts, so a cache a Redis outage kept stale
still shows nothing).
"""

from django.db import transaction

from timelines.home import _cache
from timelines.home._models import InboxEntry, InboxState


def erase(user_id: int) -> None:
    """In the erasure's transaction; the caches follow once it commits."""
    readers = set(
        InboxEntry.objects.filter(author_id=user_id)
        .exclude(reader_id=user_id)
        .values_list("reader_id", flat=True)
        .distinct()
    )
    InboxEntry.objects.filter(author_id=user_id).delete()
    InboxEntry.objects.filter(reader_id=user_id).delete()
    InboxState.objects.filter(reader_id=user_id).delete()

    def forget_cached() -> None:
        _cache.drop(user_id)
        for reader_id in readers:
            _cache.remove_author(reader_id, user_id)

    transaction.on_commit(forget_cached, robust=True)
