"""The listener that records a direct post's delivery as a message, in its transaction."""

from typing import Any

from posts.models import Visibility
from posts.signals import post_created
from timelines.conversations import tasks
from timelines.outbox import record


def deliver_message(sender: Any, post_id: str, visibility: str = "", **kwargs: Any) -> None:
    if visibility == Visibility.DIRECT:
        record(tasks.deliver_message, post_id)


def connect() -> None:
    """Connected from timelines.signals.connect(), with a dispatch_uid."""
    post_created.connect(deliver_message, dispatch_uid="timelines.deliver_message")
