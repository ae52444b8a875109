"""posts' periodic tasks (Celery beat, feed_project/settings.py)."""

from celery import shared_task

from posts import tags


@shared_task(name="posts.compute_trending", acks_late=True, ignore_result=True)
def compute_trending() -> int:
    """Rewrite the trending tags; idempotent (each run replaces the table). How many."""
    return len(tags.compute_trending())
