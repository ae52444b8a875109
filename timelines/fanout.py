"""Fan-out: push a post into its author's followers' inboxes, or take it back out.

Delivery is planned, then done chunk by chunk: ``plan_fan_out`` decides push
or pull (big accounts are pulled at read time) and cuts the followers into
chunks of FEED_FANOUT_CHUNK by follower id; ``deliver_chunk`` has the home
feed (``timelines.home``) write one chunk with one statement. A deleted post
is taken out the same way (``plan_removal``, ``remove_chunk``). Each step is
idempotent, so tasks may run twice.

Nothing is lost with a message: the ``FanOut`` row is written with the post,
and each planned chunk is a row of the outbox (``timelines.outbox``) written
with the plan and deleted when the chunk is delivered. A fan-out finishes
when no chunk of it is left in the outbox, so a chunk delivered twice counts
once. The sweeper queues again what was left behind: chunk rows, and posts
whose plan never ran (``undelivered_posts``).
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from posts import ids
from posts.models import Post, Visibility
from relations.models import Follower
from timelines import home, outbox
from timelines.models import FanOut, PullAuthor

# The tasks of delivery, by name (timelines.tasks registers them): the outbox
# records calls of them.
FAN_OUT_POST = "timelines.fan_out_post"
FAN_OUT_CHUNK = "timelines.fan_out_chunk"
REMOVE_POST = "timelines.remove_post"
REMOVE_CHUNK = "timelines.remove_post_chunk"


def is_big(author: User) -> bool:
    return author.followers_count >= settings.FEED_BIG_ACCOUNT_FOLLOWERS


@dataclass(frozen=True)
class Chunk:
    """Followers of one author with ids in (after, upto]."""

    after: int
    upto: int


def follower_chunks(author_id: int) -> list[Chunk]:
    """Keyset walk over Follower(user=author) by follower id, FEED_FANOUT_CHUNK a chunk.

    Each step asks for the chunk's last follower id only (OFFSET size - 1 in the
    index): the plan runs before any chunk does, and bringing every follower id
    into Python cost it 100,000 rows for a post to 100,000 followers.
    """
    size = settings.FEED_FANOUT_CHUNK
    chunks, after = [], 0
    followers = (
        Follower.objects.filter(user_id=author_id)
        .order_by("follower_id")
        .values_list("follower_id", flat=True)
    )
    while True:
        rest = followers.filter(follower_id__gt=after)
        upto = rest[size - 1 : size].first()
        if upto is None:  # fewer than a chunk left: up to the last
            upto = rest.last()
        if upto is None:
            return chunks
        chunks.append(Chunk(after=after, upto=upto))
        after = upto


def readers_chunks(*, author_id: int, visibility: str, recipients: str) -> list[Chunk]:
    """The chunks a post goes to: every follower (public, unlisted, followers-only: the
    same walk), or for a direct post one chunk per person it addresses, which
    ``deliver_chunk`` narrows to those who follow the author (as Mastodon delivers
    a direct post to its mentioned followers): a row each, no walk of the rest."""
    if visibility != Visibility.DIRECT:
        return follower_chunks(author_id)
    return [Chunk(after=reader - 1, upto=reader) for reader in sorted(_ids_in(recipients))]


def _ids_in(recipients: str) -> set[int]:
    return {int(part) for part in recipients.split()}


# --- delivering a post ------------------------------------------------------------


def record_fan_out(post_id: str) -> None:
    """The outbox row, written in the post's own transaction; the plan is queued on commit."""
    FanOut.objects.create(post_id=post_id, created_at=timezone.now())
    transaction.on_commit(partial(outbox.send, FAN_OUT_POST, post_id))


def record_removal(post_id: str) -> None:
    """A deleted post leaves its followers' inboxes: recorded in the delete's transaction."""
    outbox.record(REMOVE_POST, post_id)


def plan_fan_out(*, post_id: str) -> list[Chunk]:
    """Start delivering a post: decide push or pull, and cut the followers into chunks.

    The chunks are recorded in the outbox with the plan, and queued once it
    commits. Safe to run twice: the chunks are the same, and each chunk's
    write is idempotent.
    """
    post = Post.objects.select_related("author").with_id(post_id).first()
    if post is None:
        return []
    now = timezone.now()
    fan_out, _ = FanOut.objects.get_or_create(post_id=post_id, defaults={"created_at": now})
    if fan_out.finished_at is not None:
        return []  # a message delivered again: its chunks were planned and delivered
    if post.is_deleted:
        _finish(post_id, now)
        return []
    if is_big(post.author):
        PullAuthor.objects.get_or_create(author_id=post.author_id, defaults={"since": now})
        FanOut.objects.filter(pk=post_id).update(mode=FanOut.Mode.PULL, started_at=now)
        _finish(post_id, now)
        return []
    home.deliver_own(timeline_key=post.timeline_key, author_id=post.author_id)
    chunks = readers_chunks(
        author_id=post.author_id, visibility=post.visibility, recipients=post.recipients
    )
    with transaction.atomic():
        FanOut.objects.filter(pk=post_id).update(
            mode=FanOut.Mode.PUSH,
            started_at=now,
            chunks_total=len(chunks),
            chunks_done=0,
            recipients=0,
        )
        for chunk in chunks:
            outbox.record(FAN_OUT_CHUNK, post_id, chunk.after, chunk.upto)
    if not chunks:
        _finish(post_id, now)
    return chunks


def deliver_chunk(*, post_id: str, chunk: Chunk) -> int:
    """Push one post into the inboxes of one chunk of its author's followers (those
    whose inbox is kept: ``home.deliver_to_followers``); returns how many.

    The chunk's outbox row goes once its rows are in; the first completion of
    each distinct chunk is counted, and the fan-out finishes when none is left.
    A chunk no longer in the outbox was delivered, and a message delivered
    again (a dead worker's, after the broker's visibility timeout) writes
    nothing: its post may lie below the floors of inboxes trimmed since.
    """
    claim = outbox.Claim(FAN_OUT_CHUNK, (post_id, chunk.after, chunk.upto))
    if claim.version is None:
        return 0
    post = Post.objects.with_id(post_id).values("timeline_key", "author_id", "deleted_at").first()
    if post is None or post["deleted_at"] is not None:
        _chunk_done(post_id, claim, 0)
        return 0
    readers = home.deliver_to_followers(
        timeline_key=post["timeline_key"],
        author_id=post["author_id"],
        after=chunk.after,
        upto=chunk.upto,
    )
    _chunk_done(post_id, claim, len(readers))
    return len(readers)


def _chunk_done(post_id: str, claim: outbox.Claim, recipients: int) -> None:
    with transaction.atomic():
        if claim.finish():
            # Every chunk of a post updates this row: one short statement.
            FanOut.objects.filter(pk=post_id).update(
                chunks_done=F("chunks_done") + 1, recipients=F("recipients") + recipients
            )
    # Only after the commit: of two last chunks finishing at once, the one that
    # looks second sees the other's row gone too (read committed).
    if not _chunks_pending(post_id):
        _finish(post_id, timezone.now())


def _chunks_pending(post_id: str) -> bool:
    return outbox.pending_with_prefix(FAN_OUT_CHUNK, ids.parse_post_id(post_id).author, post_id)


def _finish(post_id: str, now: datetime) -> None:
    FanOut.objects.filter(pk=post_id, finished_at__isnull=True).update(finished_at=now)


def undelivered_posts(*, older_than: timedelta) -> list[str]:
    """Posts whose fan-out did not finish and is due to be planned again (``outbox.due``)
    with no chunk in the outbox: the plan's task was lost or failed (lost chunks are
    swept as outbox rows). Marked as sent again."""
    now = timezone.now()
    unfinished = (
        FanOut.objects.filter(finished_at__isnull=True, created_at__lt=now - older_than)
        .order_by("created_at")
        .values_list("post_id", "created_at", "swept_at", "sweeps")[: outbox.SWEEP_BATCH]
    )
    due = [
        post_id
        for post_id, created_at, swept_at, sweeps in unfinished
        if outbox.due(sent_at=swept_at or created_at, sweeps=sweeps, older_than=older_than, now=now)
        and not _chunks_pending(post_id)
    ]
    FanOut.objects.filter(pk__in=due).update(swept_at=now, sweeps=F("sweeps") + 1)
    return due


# --- taking a deleted post back out ---------------------------------------------


def plan_removal(*, post_id: str) -> list[Chunk]:
    """After a delete: clean the author's own inbox now, and record the followers' chunks
    in the outbox (queued once recorded).

    Readers never see the post meanwhile (the read joins to live posts); this
    only keeps the inboxes tidy.
    """
    post = (
        Post.objects.with_id(post_id)
        .values("timeline_key", "author_id", "visibility", "recipients")
        .first()
    )
    if post is None:
        return []
    home.withdraw([post["author_id"]], post["timeline_key"])
    chunks = readers_chunks(
        author_id=post["author_id"], visibility=post["visibility"], recipients=post["recipients"]
    )
    with transaction.atomic():
        for chunk in chunks:
            outbox.record(REMOVE_CHUNK, post_id, chunk.after, chunk.upto)
    return chunks


def remove_chunk(*, post_id: str, chunk: Chunk) -> None:
    """Clean a deleted post's key out of one chunk of inboxes."""
    post = Post.objects.with_id(post_id).values("timeline_key", "author_id").first()
    if post is None:
        return
    home.withdraw_from_followers(
        timeline_key=post["timeline_key"],
        author_id=post["author_id"],
        after=chunk.after,
        upto=chunk.upto,
    )
