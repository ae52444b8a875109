"""Celery tasks: ids in, a service call, nothing else. All idempotent.

Fan-out is two-level: one task per post plans the chunks of FEED_FANOUT_CHUNK
followers, and one task per chunk writes them, so workers share a big
fan-out. The default, 10,000, is one INSERT ... SELECT and one Redis pipeline
of two script calls: a retry redoes little, and a 100,000-follower fan-out is
10 tasks. Smaller chunks add to the tasks' bookkeeping, larger ones share
unevenly between workers (docs/BENCHMARKS.md, "PostgreSQL's settings and the
chunk size", has the figures). More workers want smaller chunks: a fan-out
spreads over at most followers / chunk of them. Removing a deleted post is
planned the same way.

Every task but the plan of a fan-out (whose outbox is the ``FanOut`` row) and
the sweeper is recorded in the outbox with the change that needs it
(``timelines.outbox.record``) and is an ``OutboxTask``: its row goes when it
has run.
"""

import logging
from datetime import timedelta
from typing import Any

from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings
from django.core.cache import cache as django_cache
from django.db import DatabaseError
from django.utils import timezone

from feed_project.celery import FailFastTask
from timelines import fanout, home, outbox
from timelines.fanout import Chunk
from timelines.outbox import enqueue

logger = logging.getLogger(__name__)

__all__ = ["FeedTask", "OutboxTask", "enqueue"]


class FeedTask(FailFastTask):
    """Acks late, retried on database errors, every failure logged with its arguments;
    publishing fails fast while the broker is known to fail (FailFastTask).

    ``owner_arg``: when the task is recorded in the outbox, the argument that
    names the row's owner, a user id or a post id (whose author owns it).
    """

    acks_late = True
    autoretry_for = (DatabaseError,)
    retry_backoff = True
    retry_backoff_max = 60
    # Celery's autoretry reads it with this default; OutboxTask's own retry reads it too.
    retry_jitter = True
    max_retries = 8
    owner_arg = 0

    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        logger.error("%s%s failed: %r", self.name, tuple(args), exc, exc_info=exc)


class OutboxTask(FeedTask):
    """A task recorded in the outbox: its row goes once it has run without error."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The claim's own queries are outside ``run``, which autoretry wraps: their
        # database errors are retried the same way, not left to the sweep.
        try:
            claim = outbox.Claim(self, args)
            result = super().__call__(*args, **kwargs)
            claim.finish()
        except DatabaseError as exc:
            if self.request.called_directly or self.request.is_eager:
                raise
            # As autoretry backs off for the work's own errors, not Celery's default
            # three minutes: a database restart must not hold a follow's backfill that long.
            countdown = get_exponential_backoff_interval(
                factor=1, retries=self.request.retries, maximum=self.retry_backoff_max,
                full_jitter=self.retry_jitter,
            )  # fmt: skip
            raise self.retry(exc=exc, countdown=countdown) from exc
        return result


# --- delivering a post, and taking it back out ----------------------------------


@shared_task(name=fanout.FAN_OUT_POST, base=FeedTask)
def fan_out_post(post_id: str) -> None:
    fanout.plan_fan_out(post_id=post_id)


@shared_task(name=fanout.FAN_OUT_CHUNK, base=FeedTask)
def fan_out_chunk(post_id: str, after: int, upto: int) -> None:
    """Its outbox row is taken by ``deliver_chunk``, which counts distinct chunks."""
    fanout.deliver_chunk(post_id=post_id, chunk=Chunk(after, upto))


@shared_task(name=fanout.REMOVE_POST, base=OutboxTask)
def remove_post(post_id: str) -> None:
    fanout.plan_removal(post_id=post_id)


@shared_task(name=fanout.REMOVE_CHUNK, base=OutboxTask)
def remove_post_chunk(post_id: str, after: int, upto: int) -> None:
    fanout.remove_chunk(post_id=post_id, chunk=Chunk(after, upto))


# --- one reader's inbox ---------------------------------------------------------


@shared_task(name="timelines.sync_author", base=OutboxTask)
def sync_author(reader_id: int, author_id: int) -> None:
    home.sync_author(reader_id, author_id)


@shared_task(name="timelines.rebuild", base=OutboxTask)
def rebuild(reader_id: int) -> None:
    home.rebuild(reader_id)


# The names older code gave sync_author's work, before the outbox (migration
# timelines.0005_pending_task): a message queued then still runs. Delete both once each
# site's queue has emptied with no process from before that migration left running:
# nothing queues them since, and a worker drops a message whose task it does not know.
@shared_task(name="timelines.backfill", base=FeedTask)
def backfill(reader_id: int, author_id: int) -> None:
    home.sync_author(reader_id, author_id)


@shared_task(name="timelines.remove_author", base=FeedTask)
def remove_author(reader_id: int, author_id: int) -> None:
    home.sync_author(reader_id, author_id)


# --- the cap ----------------------------------------------------------------------

TRIM_SWEEP = "trim-sweep"  # a cache key: a sweep made progress within the interval


@shared_task(name="timelines.trim_inboxes", base=FeedTask)
def trim_inboxes(after: int = 0) -> None:
    """Trim every kept inbox to the cap, FEED_TRIM_BATCH readers a task, and release
    those of readers away longer than FEED_INACTIVE_DAYS (``home.sweep_batch``).

    Beat starts a sweep every FEED_TRIM_EVERY_SECONDS; each batch queues the next
    behind what the queue already holds, so one batch at a time is in flight and
    fan-outs never wait behind a wall of trims. The cost follows the readers, not
    the posts: every kept inbox once an interval, however many of its followees
    post. Not in the outbox: a lost batch leaves the rest to the next sweep (an
    away reader is pushed to one interval longer).
    """
    interval = settings.FEED_TRIM_EVERY_SECONDS
    if after == 0 and not django_cache.add(TRIM_SWEEP, 0, timeout=interval):
        return  # the last sweep made progress within the interval: still running
    last = home.sweep_batch(after, size=settings.FEED_TRIM_BATCH)
    if last is None:
        django_cache.delete(TRIM_SWEEP)
        return
    django_cache.set(TRIM_SWEEP, last, timeout=interval)
    outbox.send("timelines.trim_inboxes", last)


# Queued by fan-out chunks before the sweep above trimmed instead: nothing left to do.
# Delete it once each site's queue has emptied with no process from before the sweep left
# running: nothing queues it since, and a worker drops a message whose task it does not know.
@shared_task(name="timelines.trim_chunk", base=FeedTask)
def trim_chunk(author_id: int, after: int, upto: int) -> None:
    pass


# --- the self-check ---------------------------------------------------------------

VERIFIED = "inbox-verify"  # a cache key: what the last self-check found (manage.py fanout_stats)


@shared_task(name="timelines.verify_inboxes", base=FeedTask)
def verify_inboxes(size: int | None = None) -> int:
    """Hold a sample of kept inboxes to the pull model and repair what differs
    (``home.verify``): a bug that loses posts is seen, counted and healed in
    production rather than left in readers' feeds. Returns how many differed."""
    results = [
        result
        for reader_id in home.sample_kept(size or settings.FEED_VERIFY_SAMPLE)
        if (result := home.verify(reader_id)) is not None
    ]
    differed = [result for result in results if result.differed]
    summary = {
        "at": timezone.now().isoformat(timespec="seconds"),
        "checked": len(results),
        "differed": len(differed),
        "missing": sum(result.missing for result in differed),
        "cache_missing": sum(result.cache_missing for result in differed),
    }
    django_cache.set(VERIFIED, summary, timeout=None)
    if differed:
        logger.error(
            "inbox self-check: %d of %d inboxes differed from the pull model and were "
            "repaired (%d posts missing from the table, %d from caches): readers %s",
            len(differed),
            len(results),
            summary["missing"],
            summary["cache_missing"],
            [result.reader_id for result in differed],
        )
    return len(differed)


# --- the sweeper ----------------------------------------------------------------


@shared_task(name="timelines.sweep_undelivered", base=FeedTask)
def sweep_undelivered() -> int:
    """Queue again what was left behind for FEED_SWEEP_AFTER_SECONDS: posts whose
    fan-out plan never ran, and outbox rows (a lost message, a dead worker)."""
    older_than = timedelta(seconds=settings.FEED_SWEEP_AFTER_SECONDS)
    post_ids = fanout.undelivered_posts(older_than=older_than)
    calls = outbox.left_behind(older_than=older_than)
    for task, args in [*((fanout.FAN_OUT_POST, [post_id]) for post_id in post_ids), *calls]:
        try:
            outbox.send(task, *args)
        except Exception:  # one bad row (a task run in process failing) must not stop the sweep
            logger.exception("sweeping %s%s failed", task, tuple(args))
    if post_ids or calls:
        logger.warning("swept %d posts and %d outbox rows", len(post_ids), len(calls))
    return len(post_ids) + len(calls)
