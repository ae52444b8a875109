"""Notification tasks, recorded in the outbox: each insert ignores duplicates, so a retry
or a sweep notifies no one twice. A row is owned by the one notified; that of a new post
(its reply, repost and mentions) by the post's author."""

from celery import shared_task

from timelines.notifications import services
from timelines.notifications.models import Notification
from timelines.tasks import OutboxTask


@shared_task(name="timelines.notify_followed", base=OutboxTask, owner_arg=1)
def notify_followed(follower_id: int, followee_id: int) -> None:
    services.notify(recipient_id=followee_id, kind=Notification.Kind.FOLLOW, actor_id=follower_id)


@shared_task(name="timelines.notify_follow_requested", base=OutboxTask, owner_arg=1)
def notify_follow_requested(requester_id: int, user_id: int) -> None:
    services.notify(recipient_id=user_id, kind=Notification.Kind.REQUEST, actor_id=requester_id)


@shared_task(name="timelines.notify_follow_accepted", base=OutboxTask, owner_arg=1)
def notify_follow_accepted(user_id: int, requester_id: int) -> None:
    services.notify(recipient_id=requester_id, kind=Notification.Kind.ACCEPT, actor_id=user_id)


@shared_task(name="timelines.notify_liked", base=OutboxTask)
def notify_liked(post_id: str, author_id: int, user_id: int) -> None:
    services.notify(
        recipient_id=author_id, kind=Notification.Kind.LIKE, actor_id=user_id, post_id=post_id
    )


@shared_task(name="timelines.notify_about_post", base=OutboxTask)
def notify_about_post(post_id: str) -> None:
    services.notify_about_post(post_id=post_id)


@shared_task(name="timelines.notify_edited", base=OutboxTask)
def notify_edited(post_id: str, version: int) -> None:
    services.notify_edited(post_id=post_id, version=version)
