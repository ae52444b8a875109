"""Listeners that record notification tasks in the outbox, in the change's transaction."""

from typing import Any

from posts.signals import post_created, post_edited, post_liked
from relations.signals import follow_accepted, follow_requested, followed
from timelines.notifications import tasks
from timelines.outbox import record


def notify_followed(sender: Any, follower_id: int, followee_id: int, **kwargs: Any) -> None:
    record(tasks.notify_followed, follower_id, followee_id)


def notify_follow_requested(sender: Any, user_id: int, requester_id: int, **kwargs: Any) -> None:
    record(tasks.notify_follow_requested, requester_id, user_id)


def notify_follow_accepted(sender: Any, user_id: int, requester_id: int, **kwargs: Any) -> None:
    record(tasks.notify_follow_accepted, user_id, requester_id)


def notify_liked(sender: Any, post_id: str, author_id: int, user_id: int, **kwargs: Any) -> None:
    record(tasks.notify_liked, post_id, author_id, user_id)


def notify_about_post(sender: Any, post_id: str, **kwargs: Any) -> None:
    """A reply, a repost or @mentions: the task reads the post to know which."""
    record(tasks.notify_about_post, post_id)


def notify_edited(sender: Any, post_id: str, version: int, **kwargs: Any) -> None:
    """An edit: "edited" to who replied, liked or reposted; the newly @mentioned."""
    record(tasks.notify_edited, post_id, version)
    record(tasks.notify_about_post, post_id)


def connect() -> None:
    """Connected from TimelinesConfig.ready(), each with a dispatch_uid."""
    followed.connect(notify_followed, dispatch_uid="timelines.notify_followed")
    follow_requested.connect(notify_follow_requested, dispatch_uid="timelines.notify_request")
    follow_accepted.connect(notify_follow_accepted, dispatch_uid="timelines.notify_accepted")
    post_liked.connect(notify_liked, dispatch_uid="timelines.notify_liked")
    post_created.connect(notify_about_post, dispatch_uid="timelines.notify_about_post")
    post_edited.connect(notify_edited, dispatch_uid="timelines.notify_edited")
