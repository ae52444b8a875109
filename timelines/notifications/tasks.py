"""Notification tasks: each insert ignores duplicates, so a retry notifies no one twice."""

from celery import shared_task

from timelines.notifications import services
from timelines.notifications.models import Notification
from timelines.tasks import FeedTask


@shared_task(name="timelines.notify_followed", base=FeedTask)
def notify_followed(follower_id: int, followee_id: int) -> None:
    services.notify(recipient_id=followee_id, kind=Notification.Kind.FOLLOW, actor_id=follower_id)


@shared_task(name="timelines.notify_liked", base=FeedTask)
def notify_liked(post_id: str, author_id: int, user_id: int) -> None:
    services.notify(
        recipient_id=author_id, kind=Notification.Kind.LIKE, actor_id=user_id, post_id=post_id
    )


@shared_task(name="timelines.notify_about_post", base=FeedTask)
def notify_about_post(post_id: str) -> None:
    services.notify_about_post(post_id=post_id)
