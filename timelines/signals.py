"""Listeners: posts, relations and accounts announce, timelines reacts.

posts and relations send their signals inside the transaction that makes
the change, so each handler records the task the change needs in the outbox
(``timelines.outbox``) in that same transaction: it is queued once the
change commits, and swept if its message is lost. The work is in
``timelines.fanout`` and ``timelines.home``, run by ``timelines.tasks``.
"""

from typing import Any

from posts.signals import post_created, post_deleted
from relations.signals import followed, muted, unfollowed, unmuted
from timelines import fanout, tasks
from timelines.conversations import signals as conversation_signals
from timelines.notifications import signals as notification_signals
from timelines.outbox import record
from timelines.suggestions import signals as suggestion_signals


def fan_out(sender: Any, post_id: str, **kwargs: Any) -> None:
    """The FanOut row, the outbox of a post's delivery."""
    fanout.record_fan_out(post_id)


def clean_deleted(sender: Any, post_id: str, **kwargs: Any) -> None:
    fanout.record_removal(post_id)


def follow_changed(sender: Any, follower_id: int, followee_id: int, **kwargs: Any) -> None:
    """Followed or unfollowed (a block unfollows both ways): backfill or remove the author."""
    record(tasks.sync_author, follower_id, followee_id)


def mute_changed(sender: Any, user_id: int, target_id: int, **kwargs: Any) -> None:
    record(tasks.sync_author, user_id, target_id)


def connect() -> None:
    """Connected from TimelinesConfig.ready(), each with a dispatch_uid."""
    post_created.connect(fan_out, dispatch_uid="timelines.fan_out")
    post_deleted.connect(clean_deleted, dispatch_uid="timelines.clean_deleted")
    followed.connect(follow_changed, dispatch_uid="timelines.backfill")
    unfollowed.connect(follow_changed, dispatch_uid="timelines.remove_author")
    muted.connect(mute_changed, dispatch_uid="timelines.drop_muted")
    unmuted.connect(mute_changed, dispatch_uid="timelines.restore_unmuted")
    notification_signals.connect()
    conversation_signals.connect()
    suggestion_signals.connect()
