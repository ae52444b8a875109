"""A cached inbox at the cap is compact, at most 20 KB, on a Redis with its
default settings: a list needs no server setting (a sorted set did)."""

import pytest
from django.utils import timezone

from feed_project.pagination import Cursor
from posts import ids
from tests.factories import UserFactory
from tests.private_redis import private_redis
from tests.timelines.test_cache_restore import cache_at
from timelines.home import _cache as cache
from timelines.home import home_feed
from timelines.home._inbox import Inbox
from timelines.home._models import InboxEntry

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 800


@pytest.fixture
def server(tmp_path, settings):
    settings.FEED_INBOX_CAP = CAP
    with private_redis() as redis_server, cache_at(redis_server.url()):
        yield redis_server


def fill_a_cache_at_the_cap() -> str:
    """A reader with a built inbox of CAP keys, read once: the read fills its cache."""
    reader = UserFactory(last_active_at=timezone.now())
    Inbox(reader.pk).rebuild()
    author = UserFactory()
    start = ids.time_of(timezone.now()) - CAP * 1000
    InboxEntry.objects.bulk_create(
        InboxEntry(
            reader_id=reader.pk,
            author_id=author.pk,
            timeline_key=ids.make_timeline_key(ids.KeyParts(start + n * 1000, author.pk, 0)),
        )
        for n in range(CAP)
    )
    home_feed(reader=reader, cursor=Cursor())
    return cache.inbox_key(reader.pk, cache.generation())


def test_an_inbox_at_the_cap_takes_at_most_20_kb_on_a_default_server(server):
    key = fill_a_cache_at_the_cap()
    redis = server.client()
    assert redis.llen(key) == CAP + 1  # the keys and the sentinel
    assert redis.memory_usage(key) <= 20_000


def test_a_push_past_the_cap_drops_the_oldest_key(server):
    key = fill_a_cache_at_the_cap()
    redis = server.client()
    oldest = redis.lindex(key, -1)
    reader_id = int(key.split("{")[1].split("}")[0])
    newest = ids.make_timeline_key(ids.KeyParts(ids.time_of(timezone.now()) + 1, 1, 0))
    cache.push([reader_id], [newest], cap=CAP)
    assert redis.llen(key) == CAP + 1
    assert redis.lindex(key, 1).decode() == newest
    assert oldest not in redis.lrange(key, 0, -1)
