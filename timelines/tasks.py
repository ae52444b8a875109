"""Celery tasks: ids in, a service call, nothing else. All idempotent.

Fan-out is two-level: one task per post plans the chunks of FEED_FANOUT_CHUNK
followers, and one task per chunk writes them, so workers share a big
fan-out. The default, 5,000, is one INSERT ... SELECT of ~40 ms and one Redis
pipeline of ~0.1 s: a retry redoes a fraction of a second, and a 100,000
follower fan-out is 20 tasks, whose broker round trips and bookkeeping are
small beside the writes (at 1,000 a chunk, 100 tasks took ~40% longer end
to end: docs/BENCHMARKS.md). Removing a deleted post is planned the same way.
"""

import logging
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.db import DatabaseError
from kombu.exceptions import OperationalError as BrokerError

from feed_project.celery import FailFastTask
from timelines import fanout
from timelines.fanout import Chunk
from timelines.inbox import Inbox

logger = logging.getLogger(__name__)


class FeedTask(FailFastTask):
    """Acks late, retried on database errors, every failure logged with its arguments;
    publishing fails fast while the broker is known to fail (FailFastTask)."""

    acks_late = True
    autoretry_for = (DatabaseError,)
    retry_backoff = True
    retry_backoff_max = 60
    max_retries = 8

    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        logger.error("%s%s failed: %r", self.name, tuple(args), exc, exc_info=exc)


def enqueue(task: Any, *args: Any) -> None:
    """Queue a task; if the broker cannot take it, run it here instead.

    The change that asked for it is committed either way: delivery must not
    depend on the broker being up (the sweeper catches what even this misses).
    """
    try:
        task.delay(*args)
    except (BrokerError, ConnectionError, OSError) as exc:
        logger.warning("broker refused %s%s (%s): running it in process", task.name, args, exc)
        task.apply(args=args, throw=True)


@shared_task(name="timelines.fan_out_post", base=FeedTask)
def fan_out_post(post_id: str) -> None:
    for chunk in fanout.plan_fan_out(post_id=post_id):
        enqueue(fan_out_chunk, post_id, chunk.after, chunk.upto)


@shared_task(name="timelines.fan_out_chunk", base=FeedTask)
def fan_out_chunk(post_id: str, after: int, upto: int) -> None:
    fanout.deliver_chunk(post_id=post_id, chunk=Chunk(after, upto))


@shared_task(name="timelines.remove_post", base=FeedTask)
def remove_post(post_id: str) -> None:
    for chunk in fanout.plan_removal(post_id=post_id):
        enqueue(remove_post_chunk, post_id, chunk.after, chunk.upto)


@shared_task(name="timelines.remove_post_chunk", base=FeedTask)
def remove_post_chunk(post_id: str, after: int, upto: int) -> None:
    fanout.remove_chunk(post_id=post_id, chunk=Chunk(after, upto))


@shared_task(name="timelines.backfill", base=FeedTask)
def backfill(reader_id: int, author_id: int) -> None:
    Inbox(reader_id).add_author(author_id)


@shared_task(name="timelines.remove_author", base=FeedTask)
def remove_author(reader_id: int, author_id: int) -> None:
    Inbox(reader_id).remove_author(author_id)


@shared_task(name="timelines.rebuild", base=FeedTask)
def rebuild(reader_id: int) -> None:
    Inbox(reader_id).rebuild()


@shared_task(name="timelines.sweep_undelivered", base=FeedTask)
def sweep_undelivered() -> int:
    """Re-queue posts whose fan-out never finished (a lost task, a dead worker)."""
    post_ids = fanout.undelivered_posts(older_than=timedelta(minutes=2))
    for post_id in post_ids:
        enqueue(fan_out_post, post_id)
    return len(post_ids)
