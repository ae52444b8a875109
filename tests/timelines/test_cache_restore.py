"""A cache Redis that restarts or is restored from an older snapshot never serves a stale feed.

Each test runs a redis-server of its own (tests/private_redis.py) in a
directory of its own, points the cache at it, and warms a reader's cache.
Then a post is pushed into that live cache after a snapshot was taken, and
the snapshot is brought back: by restarting the server on the old
``dump.rdb``, or in place with ``DEBUG RELOAD NOSAVE``. The restored cache
lacks the post although its push succeeded; the home page must show it
(timelines.home._cache: every cache is stamped with the incarnation of its server).
"""

import re
import shutil
from collections.abc import Iterator

import pytest
from django.utils import timezone

from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from tests.private_redis import PrivateRedis, cache_at, private_redis
from timelines.home import _cache as cache
from timelines.home._cache import CachedInbox

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server(tmp_path) -> Iterator[PrivateRedis]:
    with private_redis(directory=tmp_path) as redis_server, cache_at(redis_server.url()):
        yield redis_server


@pytest.fixture
def world(client, server):
    """A reader following an author, signed in, with a live cache holding the first post."""
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    reader = UserFactory(last_active_at=now)
    follow(follower=reader, followee=author)
    first = create_post(author=author, text="before the snapshot")
    client.force_login(reader)
    assert home_page_ids(client) == [first.pk]  # builds the inbox and fills the cache
    assert cached_keys(reader.pk) == [first.timeline_key]
    return author, reader, first


def home_page_ids(client) -> list[str]:
    response = client.get("/")
    assert response.status_code == 200
    return re.findall(r'data-post-id="([0-9A-Za-z]+)"', response.content.decode())


def cached_keys(reader_id: int) -> list[str] | None:
    return CachedInbox(reader_id, cache.generation()).older(None, 100)


def snapshot(server: PrivateRedis) -> None:
    """SAVE, and keep the snapshot aside (the next SAVE would overwrite it)."""
    server.client().save()
    shutil.copy(server.directory / "dump.rdb", server.directory / "old.rdb")


def put_back_old_snapshot(server: PrivateRedis) -> None:
    shutil.copy(server.directory / "old.rdb", server.directory / "dump.rdb")


def test_a_restart_on_an_older_snapshot_serves_the_post_pushed_after_it(client, server, world):
    author, reader, first = world
    snapshot(server)
    second = create_post(author=author, text="after the snapshot")
    assert cached_keys(reader.pk) == [second.timeline_key, first.timeline_key]  # pushed live

    server.stop()
    put_back_old_snapshot(server)
    server.restart()
    assert server.client().llen(cache.inbox_key(reader.pk, cache.generation())) == 2  # restored

    assert home_page_ids(client) == [second.pk, first.pk]
    assert cached_keys(reader.pk) == [second.timeline_key, first.timeline_key]  # refilled


def test_an_in_place_reload_of_an_older_snapshot_serves_the_post_pushed_after_it(
    client, server, world
):
    author, reader, first = world
    snapshot(server)
    second = create_post(author=author, text="after the snapshot")
    assert cached_keys(reader.pk) == [second.timeline_key, first.timeline_key]

    put_back_old_snapshot(server)
    server.client().execute_command("DEBUG", "RELOAD", "NOSAVE")  # same run_id, old data
    assert server.client().llen(cache.inbox_key(reader.pk, cache.generation())) == 2

    assert home_page_ids(client) == [second.pk, first.pk]


def test_a_write_to_a_restored_cache_drops_it_instead_of_patching_it(client, server, world):
    author, reader, first = world
    snapshot(server)
    second = create_post(author=author, text="lost by the restore")
    server.stop()
    put_back_old_snapshot(server)
    server.restart()

    third = create_post(author=author, text="pushed into the restored cache")

    key = cache.inbox_key(reader.pk, cache.generation())
    assert not server.client().exists(key)  # not patched into "first, third"
    assert home_page_ids(client) == [third.pk, second.pk, first.pk]


def test_a_restart_without_persistence_refills_caches_from_postgresql(client, server, world):
    author, reader, first = world
    second = create_post(author=author, text="after the warm-up")

    server.restart()  # nothing saved: an empty server
    assert cached_keys(reader.pk) is None

    assert home_page_ids(client) == [second.pk, first.pk]
    assert cached_keys(reader.pk) == [second.timeline_key, first.timeline_key]


def test_a_cache_filled_now_is_served_from_redis(client, server, world):
    """The stamp is stable while the server lives: a warm cache stays warm."""
    _, reader, first = world
    key = cache.inbox_key(reader.pk, cache.generation())
    server.client().linsert(key, "AFTER", server.client().lindex(key, 0), "ZZZZZZZZZZZZZZZZ")

    assert cached_keys(reader.pk) == ["ZZZZZZZZZZZZZZZZ", first.timeline_key]
