"""A cached inbox at the cap is compact: listpack-encoded, at most 20 KB, when the
cache Redis allows it; ``manage.py check`` warns about a server that does not."""

import io

import pytest
from django.core.management import call_command
from django.utils import timezone

from feed_project.pagination import Cursor
from posts import ids
from tests.factories import UserFactory
from tests.private_redis import private_redis
from tests.timelines.test_cache_restore import cache_at
from timelines import cache
from timelines.checks import check_compact_inbox_caches
from timelines.feed import home_feed
from timelines.inbox import Inbox
from timelines.models import InboxEntry

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


def test_an_inbox_at_the_cap_is_a_listpack_of_at_most_20_kb(server):
    server.client().config_set("zset-max-listpack-entries", 1024)
    key = fill_a_cache_at_the_cap()
    redis = server.client()
    assert redis.zcard(key) == CAP + 1  # the keys and the sentinel
    assert redis.object("encoding", key) == b"listpack"
    assert redis.memory_usage(key) <= 20_000


def test_the_servers_default_makes_it_a_skiplist_and_the_check_says_so(server):
    key = fill_a_cache_at_the_cap()
    assert server.client().object("encoding", key) == b"skiplist"
    [warning] = check_compact_inbox_caches()
    assert warning.id == "timelines.W001"
    assert f":{server.port} keeps sorted sets of more than 128 members" in warning.msg

    server.client().config_set("zset-max-listpack-entries", CAP + 1)
    assert check_compact_inbox_caches() == []
    out = io.StringIO()
    call_command("check", stdout=out)
    assert "no issues" in out.getvalue()


def test_an_unreachable_cache_is_a_warning_not_a_crash(server):
    server.stop()
    [warning] = check_compact_inbox_caches()
    assert warning.id == "timelines.W002"
