"""Private-message tasks, recorded in the outbox with the direct post (owner: its author)."""

from celery import shared_task

from timelines.conversations import services
from timelines.tasks import OutboxTask


@shared_task(name="timelines.deliver_message", base=OutboxTask)
def deliver_message(post_id: str) -> None:
    services.deliver(post_id=post_id)
