"""Suggestion tasks: ids in, ``ranking`` does the work. Idempotent (a run replaces the
user's rows), so none is recorded in the outbox: a lost run leaves the rows of the
last one, and beat's next refresh redoes them."""

from celery import shared_task
from django.conf import settings
from django.core.cache import cache as django_cache
from django.utils import timezone

from timelines import home, outbox
from timelines.suggestions import ranking
from timelines.tasks import FeedTask

# Users a refresh task ranks: each is a few statements of a few ms, so a batch is
# a second or two of a worker's time, and the next batch waits behind other work.
REFRESH_BATCH = 200
REFRESH_SWEEP = "suggestion-sweep"  # a cache key: a refresh made progress within the interval


@shared_task(name="timelines.suggest_for", base=FeedTask)
def suggest_for(user_id: int) -> None:
    ranking.refresh(user_id)


@shared_task(name="timelines.refresh_suggestions", base=FeedTask)
def refresh_suggestions(after: int = 0) -> None:
    """Rank again every user active within FEED_INACTIVE_DAYS, REFRESH_BATCH a task,
    each queueing the next (beat starts one every FEED_SUGGEST_EVERY_SECONDS)."""
    interval = settings.FEED_SUGGEST_EVERY_SECONDS
    if after == 0 and not django_cache.add(REFRESH_SWEEP, 0, timeout=interval):
        return  # the last refresh made progress within the interval: still running
    now = timezone.now()
    batch = ranking.active_batch(after, size=REFRESH_BATCH, since=home.active_since(now))
    if batch:
        popular = ranking.popular_accounts(now=now)
        for user_id in batch:
            ranking.refresh(user_id, now=now, popular=popular)
    if len(batch) < REFRESH_BATCH:
        django_cache.delete(REFRESH_SWEEP)
        return
    django_cache.set(REFRESH_SWEEP, batch[-1], timeout=interval)
    outbox.send("timelines.refresh_suggestions", batch[-1])
