"""Writing inboxes: fan-out, backfill, removals, rebuilds, trimming.

Every write goes to the PostgreSQL inbox first; the Redis cache is told after
the table commits (timelines.cache explains why that order is safe).
"""

import logging
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from accounts.models import User
from feed_project.pagination import Cursor
from posts.models import Post
from relations.models import Followee, Follower
from timelines import cache, pull
from timelines.models import FanOut, InboxEntry, PullAuthor, TimelineState

logger = logging.getLogger(__name__)


def active_since(now: datetime | None = None) -> datetime:
    """Readers last seen before this are offline: nothing is pushed to them."""
    return (now or timezone.now()) - timedelta(days=settings.FEED_INACTIVE_DAYS)


def is_big(author: User) -> bool:
    return author.followers_count >= settings.FEED_BIG_ACCOUNT_FOLLOWERS


# --- fan-out ------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """Followers of one author with ids in (after, upto]."""

    after: int
    upto: int


def record_fan_out(post_id: str) -> None:
    """The outbox row, written in the post's own transaction."""
    FanOut.objects.create(post_id=post_id, created_at=timezone.now())


def plan_fan_out(*, post_id: str) -> list[Chunk]:
    """Start delivering a post: decide push or pull, and cut the followers into chunks.

    Safe to run twice: the chunks are the same, and each chunk's write is
    idempotent.
    """
    post = Post.objects.select_related("author").filter(pk=post_id).first()
    if post is None:
        return []
    now = timezone.now()
    FanOut.objects.get_or_create(post_id=post_id, defaults={"created_at": now})
    if post.is_deleted:
        _finish(post_id, now)
        return []
    if is_big(post.author):
        PullAuthor.objects.get_or_create(author_id=post.author_id, defaults={"since": now})
        FanOut.objects.filter(pk=post_id).update(mode=FanOut.Mode.PULL, started_at=now)
        _finish(post_id, now)
        return []
    # The author sees their own post at once, whatever their activity.
    if has_inbox(post.author_id):
        push_keys(owner_id=post.author_id, entries=[(post.timeline_key, post.author_id)])
    chunks = follower_chunks(post.author_id, settings.FEED_FANOUT_CHUNK)
    FanOut.objects.filter(pk=post_id).update(
        mode=FanOut.Mode.PUSH,
        started_at=now,
        chunks_total=len(chunks),
        chunks_done=0,
        recipients=0,
    )
    if not chunks:
        _finish(post_id, now)
    return chunks


def follower_chunks(author_id: int, size: int) -> list[Chunk]:
    """Keyset walk over Follower(user=author) by follower id: no OFFSET."""
    chunks, after = [], 0
    followers = Follower.objects.filter(user_id=author_id).order_by("follower_id")
    while True:
        batch = list(
            followers.filter(follower_id__gt=after).values_list("follower_id", flat=True)[:size]
        )
        if not batch:
            return chunks
        chunks.append(Chunk(after=after, upto=batch[-1]))
        after = batch[-1]


_PUSH_CHUNK_SQL = """
INSERT INTO {inbox} (owner_id, timeline_key, author_id)
SELECT f.follower_id, %(key)s, %(author)s
FROM {follower} f
JOIN {user} u ON u.id = f.follower_id
JOIN {state} s ON s.owner_id = f.follower_id
WHERE f.user_id = %(author)s AND f.follower_id > %(after)s AND f.follower_id <= %(upto)s
  AND u.last_active_at >= %(active_since)s
  -- The same range on the joined keys lets the planner range-scan them too,
  -- instead of hashing every state row for each chunk.
  AND u.id > %(after)s AND u.id <= %(upto)s
  AND s.owner_id > %(after)s AND s.owner_id <= %(upto)s
ON CONFLICT (owner_id, timeline_key) DO UPDATE SET author_id = excluded.author_id
RETURNING owner_id
"""


def deliver_chunk(*, post_id: str, chunk: Chunk) -> int:
    """Push one post into the inboxes of one chunk of its author's followers.

    One INSERT ... SELECT for the whole chunk. ON CONFLICT DO UPDATE (not DO
    NOTHING) so that a retry still returns every recipient and the cache
    push below reaches them all. Returns the number of recipients.
    """
    post = Post.objects.filter(pk=post_id).values("timeline_key", "author_id", "deleted_at").first()
    if post is None or post["deleted_at"] is not None:
        _chunk_done(post_id, 0)
        return 0
    sql = _PUSH_CHUNK_SQL.format(
        inbox=InboxEntry._meta.db_table,
        follower=Follower._meta.db_table,
        user=User._meta.db_table,
        state=TimelineState._meta.db_table,
    )
    params = {
        "key": post["timeline_key"],
        "author": post["author_id"],
        "after": chunk.after,
        "upto": chunk.upto,
        "active_since": active_since(),
    }
    with transaction.atomic(), connection.cursor() as db:
        db.execute(sql, params)
        owners = [row[0] for row in db.fetchall()]
    cache.push(owners, [post["timeline_key"]])
    if zlib.crc32(post_id.encode()) % settings.FEED_TRIM_EVERY == 0:
        trim(owners)
    _chunk_done(post_id, len(owners))
    return len(owners)


def _chunk_done(post_id: str, recipients: int) -> None:
    # One statement: every chunk of a post updates this row, so keep it short.
    # SET expressions see the row before the update, hence "+ 1 >=".
    FanOut.objects.filter(pk=post_id).update(
        chunks_done=F("chunks_done") + 1,
        recipients=F("recipients") + recipients,
        finished_at=Case(
            When(
                finished_at__isnull=True,
                chunks_done__gte=F("chunks_total") - 1,
                then=Value(timezone.now()),
            ),
            default=F("finished_at"),
        ),
    )


def _finish(post_id: str, now: datetime) -> None:
    FanOut.objects.filter(pk=post_id, finished_at__isnull=True).update(finished_at=now)


def undelivered_posts(*, older_than: timedelta) -> list[str]:
    """Posts whose fan-out did not finish in time: their task was lost or failed."""
    cutoff = timezone.now() - older_than
    return list(
        FanOut.objects.filter(finished_at__isnull=True, created_at__lt=cutoff)
        .order_by("created_at")
        .values_list("post_id", flat=True)[:1000]
    )


# --- one reader's inbox -------------------------------------------------------


def has_inbox(owner_id: int) -> bool:
    return TimelineState.objects.filter(owner_id=owner_id).exists()


def _insert(owner_id: int, entries: list[tuple[str, int]]) -> None:
    InboxEntry.objects.bulk_create(
        [InboxEntry(owner_id=owner_id, timeline_key=key, author_id=a) for key, a in entries],
        ignore_conflicts=True,
    )


def push_keys(*, owner_id: int, entries: list[tuple[str, int]]) -> None:
    """Add (timeline key, author id) entries to a kept inbox, then its cache.

    The caller has checked that the inbox is kept (``has_inbox``).
    """
    if entries:
        _insert(owner_id, entries)
        cache.push([owner_id], [key for key, _ in entries])


def oldest_key(owner_id: int) -> str | None:
    return (
        InboxEntry.objects.filter(owner_id=owner_id)
        .order_by("timeline_key")
        .values_list("timeline_key", flat=True)
        .first()
    )


def backfill(*, owner_id: int, author_id: int) -> None:
    """After a follow: the followee's posts newer than the inbox's oldest entry.

    Then trim, so the inbox is again complete above its oldest entry (the
    followee may have more posts in that span than the cap holds).
    """
    if not has_inbox(owner_id) or PullAuthor.objects.filter(author_id=author_id).exists():
        return  # rebuilt on the next read, or merged in at read time
    if not Followee.objects.filter(user_id=owner_id, followee_id=author_id).exists():
        return  # unfollowed (or unmuted someone not followed) since
    floor = oldest_key(owner_id)
    if floor is None:
        # Nothing to say where "complete" starts (other followees' posts may
        # be missing too): rebuild rather than leave the reader on pull.
        rebuild(owner_id=owner_id)
        return
    rows = pull.newest_by_author(
        [author_id], cursor=Cursor(after=floor), per_author=settings.FEED_INBOX_CAP
    )
    push_keys(owner_id=owner_id, entries=rows)
    trim([owner_id])


def remove_author(*, owner_id: int, author_id: int) -> None:
    """After an unfollow: that author's entries leave the inbox and its cache."""
    InboxEntry.objects.filter(owner_id=owner_id, author_id=author_id).delete()
    cache.remove_author(owner_id, author_id)


def remove_post(*, post_id: str, chunk: Chunk | None) -> None:
    """After a delete: clean the post's key out of one chunk of inboxes.

    Readers never see it meanwhile (the read joins to live posts); this only
    keeps the inboxes tidy. Filtered by owner, the shard key, like every query.
    """
    post = Post.objects.filter(pk=post_id).values("timeline_key", "author_id").first()
    if post is None:
        return
    if chunk is None:
        owners = [post["author_id"]]
    else:
        owners = list(
            Follower.objects.filter(
                user_id=post["author_id"], follower_id__gt=chunk.after, follower_id__lte=chunk.upto
            ).values_list("follower_id", flat=True)
        )
    InboxEntry.objects.filter(owner_id__in=owners, timeline_key=post["timeline_key"]).delete()
    cache.remove(owners, [post["timeline_key"]])


_TRIM_SQL = """
DELETE FROM {inbox} i USING (
    SELECT o.id AS owner_id, t.timeline_key AS floor
    FROM unnest(%(owners)s::bigint[]) AS o(id)
    CROSS JOIN LATERAL (
        SELECT timeline_key FROM {inbox}
        WHERE owner_id = o.id ORDER BY timeline_key DESC OFFSET %(cap)s LIMIT 1
    ) t
) d
WHERE i.owner_id = d.owner_id AND i.timeline_key <= d.floor
"""


def trim(owner_ids: list[int]) -> None:
    """Keep the newest FEED_INBOX_CAP entries of each inbox."""
    if not owner_ids:
        return
    cap = settings.FEED_INBOX_CAP
    if connection.vendor == "postgresql":
        with connection.cursor() as db:
            db.execute(
                _TRIM_SQL.format(inbox=InboxEntry._meta.db_table),
                {"owners": list(owner_ids), "cap": cap},
            )
        return
    for owner_id in owner_ids:
        entries = InboxEntry.objects.filter(owner_id=owner_id)
        floor = entries.order_by("-timeline_key").values_list("timeline_key", flat=True)[
            cap : cap + 1
        ]
        if floor:
            entries.filter(timeline_key__lte=floor[0]).delete()


def mark_stale(*, owner_id: int) -> None:
    """The reader may have missed pushes: rebuild before the next read."""
    TimelineState.objects.filter(owner_id=owner_id).update(built_at=None)


def rebuild(*, owner_id: int) -> int:
    """Rebuild one inbox by a bounded pull; returns the number of entries pulled.

    1. The state row is committed first, so fan-outs running from now on
       push to this inbox; a post committed during the rebuild is either
       pulled or pushed.
    2. The newest FEED_REBUILD_PER_AUTHOR posts of each followee (and the
       reader's own) are inserted. Where an author had more, the inbox is
       complete only above that author's oldest pulled key, so entries below
       the highest such key are deleted: the inbox is again complete above
       its oldest entry.
    3. Trim to the cap, mark built, and drop the cache (the next read refills).
    """
    TimelineState.objects.update_or_create(owner_id=owner_id, defaults={"built_at": None})
    pulled_authors = set(PullAuthor.objects.values_list("author_id", flat=True))
    authors = [
        a
        for a in Followee.objects.filter(user_id=owner_id).values_list("followee_id", flat=True)
        if a not in pulled_authors
    ]
    if owner_id not in pulled_authors:
        authors.append(owner_id)
    per_author = settings.FEED_REBUILD_PER_AUTHOR
    rows = pull.newest_by_author(authors, cursor=Cursor(), per_author=per_author)
    count: dict[int, int] = {}
    oldest: dict[int, str] = {}
    for key, author_id in rows:
        count[author_id] = count.get(author_id, 0) + 1
        oldest[author_id] = min(key, oldest.get(author_id, key))
    # Authors who returned per_author posts may have older ones: below the
    # highest of their oldest pulled keys, the pull is not complete.
    floor = max((oldest[a] for a, n in count.items() if n >= per_author), default="")
    # Only what the capped inbox keeps is written: the newest FEED_INBOX_CAP
    # keys at or above the floor; the rest would be trimmed at once.
    kept = sorted((row for row in rows if row[0] >= floor), reverse=True)
    kept = kept[: settings.FEED_INBOX_CAP]
    with transaction.atomic():
        _insert(owner_id, kept)
        if kept and (floor or len(kept) == settings.FEED_INBOX_CAP):
            # Below the oldest kept key the pull was cut off (by an author or by
            # the cap): entries from before the rebuild there may have gaps.
            InboxEntry.objects.filter(owner_id=owner_id, timeline_key__lt=kept[-1][0]).delete()
    trim([owner_id])
    TimelineState.objects.filter(owner_id=owner_id).update(built_at=timezone.now())
    cache.drop(owner_id)
    return len(rows)
