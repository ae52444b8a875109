"""Listeners: posts, relations and accounts announce, timelines reacts.

Each handler queues a task or flips one flag; the work is in
``timelines.fanout`` and ``timelines.inbox``, run by ``timelines.tasks``.
"""

from typing import Any

from django.db.models.signals import post_save

from accounts.signals import last_active_refreshed
from posts.models import Post
from posts.signals import post_created, post_deleted
from relations.signals import followed, muted, unfollowed, unmuted
from timelines import fanout, tasks
from timelines.inbox import Inbox
from timelines.notifications import signals as notification_signals
from timelines.tasks import enqueue


def record_fan_out(sender: Any, instance: Post, created: bool, **kwargs: Any) -> None:
    """The outbox row, in the post's own transaction: no post goes undelivered."""
    if created:
        fanout.record_fan_out(instance.pk)


def fan_out(sender: Any, post_id: str, **kwargs: Any) -> None:
    enqueue(tasks.fan_out_post, post_id)


def clean_deleted(sender: Any, post_id: str, **kwargs: Any) -> None:
    enqueue(tasks.remove_post, post_id)


def backfill(sender: Any, follower_id: int, followee_id: int, **kwargs: Any) -> None:
    enqueue(tasks.backfill, follower_id, followee_id)


def remove_author(sender: Any, follower_id: int, followee_id: int, **kwargs: Any) -> None:
    enqueue(tasks.remove_author, follower_id, followee_id)


def drop_muted(sender: Any, user_id: int, target_id: int, **kwargs: Any) -> None:
    enqueue(tasks.remove_author, user_id, target_id)


def restore_unmuted(sender: Any, user_id: int, target_id: int, **kwargs: Any) -> None:
    enqueue(tasks.backfill, user_id, target_id)


def reader_returned(sender: Any, user_id: int, previous: Any, **kwargs: Any) -> None:
    """Back after missing pushes (or here for the first time): rebuild on first read."""
    if previous is None or previous < fanout.active_since():
        Inbox(user_id).mark_stale()


def connect() -> None:
    """Connected from TimelinesConfig.ready(), each with a dispatch_uid."""
    post_save.connect(record_fan_out, sender=Post, dispatch_uid="timelines.record_fan_out")
    post_created.connect(fan_out, dispatch_uid="timelines.fan_out")
    post_deleted.connect(clean_deleted, dispatch_uid="timelines.clean_deleted")
    followed.connect(backfill, dispatch_uid="timelines.backfill")
    unfollowed.connect(remove_author, dispatch_uid="timelines.remove_author")
    muted.connect(drop_muted, dispatch_uid="timelines.drop_muted")
    unmuted.connect(restore_unmuted, dispatch_uid="timelines.restore_unmuted")
    last_active_refreshed.connect(reader_returned, dispatch_uid="timelines.reader_returned")
    notification_signals.connect()
