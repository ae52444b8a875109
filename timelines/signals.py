"""Listeners: posts, relations and accounts announce, timelines reacts.

Each handler only queues a task (or marks a reader for rebuild); the work is
in timelines.services, run by timelines.tasks.
"""


def connect() -> None:
    """Connected from TimelinesConfig.ready(), each with a dispatch_uid."""
