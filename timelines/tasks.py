"""Celery tasks: ids in, a service call, nothing else. All idempotent.

Fan-out is two-level: one task per post cuts the followers into chunks of
FEED_FANOUT_CHUNK and queues one task per chunk, so workers share a big
fan-out. The default, 5,000, is one INSERT ... SELECT of ~40 ms and one Redis
pipeline of ~0.1 s: a retry redoes a fraction of a second, and a 100,000
follower fan-out is 20 tasks, whose broker round trips and bookkeeping are
small beside the writes (at 1,000 a chunk, 100 tasks took ~40% longer end
to end: docs/BENCHMARKS.md).
"""

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError
from kombu.exceptions import OperationalError as BrokerError

from timelines import notifications, services
from timelines.models import Notification
from timelines.services import Chunk

logger = logging.getLogger(__name__)

RETRY = {
    "acks_late": True,
    "autoretry_for": (DatabaseError,),
    "retry_backoff": True,
    "retry_backoff_max": 60,
    "max_retries": 8,
}


def enqueue(task: Any, *args: Any) -> None:
    """Queue a task; if the broker cannot take it, run it here instead.

    The post is committed either way: its delivery must not depend on the
    broker being up (the sweeper catches what even this misses).
    """
    try:
        task.delay(*args)
    except (BrokerError, ConnectionError, OSError) as exc:
        logger.warning("broker refused %s%s (%s): running it in process", task.name, args, exc)
        task.apply(args=args, throw=True)


def _logged(what: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:
        logger.exception("%s failed", what)
        raise


@shared_task(name="timelines.fan_out_post", **RETRY)
def fan_out_post(post_id: str) -> None:
    for chunk in _logged(
        f"fan-out plan of post {post_id}", lambda: services.plan_fan_out(post_id=post_id)
    ):
        enqueue(fan_out_chunk, post_id, chunk.after, chunk.upto)


@shared_task(name="timelines.fan_out_chunk", **RETRY)
def fan_out_chunk(post_id: str, after: int, upto: int) -> None:
    _logged(
        f"fan-out of post {post_id} to followers ({after}, {upto}]",
        lambda: services.deliver_chunk(post_id=post_id, chunk=Chunk(after, upto)),
    )


@shared_task(name="timelines.remove_post", **RETRY)
def remove_post(post_id: str, author_id: int) -> None:
    services.remove_post(post_id=post_id, chunk=None)
    for chunk in services.follower_chunks(author_id, settings.FEED_FANOUT_CHUNK):
        enqueue(remove_post_chunk, post_id, chunk.after, chunk.upto)


@shared_task(name="timelines.remove_post_chunk", **RETRY)
def remove_post_chunk(post_id: str, after: int, upto: int) -> None:
    services.remove_post(post_id=post_id, chunk=Chunk(after, upto))


@shared_task(name="timelines.backfill", **RETRY)
def backfill(owner_id: int, author_id: int) -> None:
    services.backfill(owner_id=owner_id, author_id=author_id)


@shared_task(name="timelines.remove_author", **RETRY)
def remove_author(owner_id: int, author_id: int) -> None:
    services.remove_author(owner_id=owner_id, author_id=author_id)


@shared_task(name="timelines.rebuild", **RETRY)
def rebuild(owner_id: int) -> None:
    services.rebuild(owner_id=owner_id)


@shared_task(name="timelines.sweep_undelivered")
def sweep_undelivered() -> int:
    """Re-queue posts whose fan-out never finished (a lost task, a dead worker)."""
    post_ids = services.undelivered_posts(older_than=timedelta(minutes=2))
    for post_id in post_ids:
        enqueue(fan_out_post, post_id)
    return len(post_ids)


# Notifications: each insert ignores duplicates, so a retry notifies no one twice.


@shared_task(name="timelines.notify_followed", **RETRY)
def notify_followed(follower_id: int, followee_id: int) -> None:
    notifications.notify(
        recipient_id=followee_id, kind=Notification.Kind.FOLLOW, actor_id=follower_id
    )


@shared_task(name="timelines.notify_liked", **RETRY)
def notify_liked(post_id: str, author_id: int, user_id: int) -> None:
    notifications.notify(
        recipient_id=author_id, kind=Notification.Kind.LIKE, actor_id=user_id, post_id=post_id
    )


@shared_task(name="timelines.notify_about_post", **RETRY)
def notify_about_post(post_id: str) -> None:
    notifications.notify_about_post(post_id=post_id)
