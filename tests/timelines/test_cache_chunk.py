"""A fan-out chunk's cache push is one server-side call that keeps every reader's rules.

The push for many readers (``timelines.home._cache.push``, the chunk path) loops over
their keys inside Redis. Each reader's cache is still checked on its own: a live
cache of this server gets the key and is trimmed to the cap, a missing cache
stays missing, a cache stamped by another incarnation is deleted, and every
fill marker is dropped. Runs on a private redis-server, whose command counts
are this test's alone.
"""

import copy
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings

from tests.private_redis import PrivateRedis, private_redis
from timelines.home import _cache as cache

pytestmark = pytest.mark.django_db


@pytest.fixture
def server(tmp_path) -> Iterator[PrivateRedis]:
    with private_redis(directory=tmp_path) as redis_server:
        caches = copy.deepcopy(settings.CACHES)
        caches["default"]["LOCATION"] = redis_server.url()
        with override_settings(REDIS_URL=redis_server.url(), CACHES=caches):
            yield redis_server


def script_calls(server: PrivateRedis) -> int:
    stats = server.client().info("commandstats")
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("evalsha", "eval"))


def test_push_to_a_chunk_is_one_script_call_checking_each_readers_cache(server):
    redis = server.client()
    gen = cache.generation()
    now = cache.sentinel(redis)
    live, missing, stale, filling = 1, 2, 3, 4
    key = {reader: cache.inbox_key(reader, gen) for reader in (live, missing, stale, filling)}
    redis.rpush(key[live], now, "A1", "A0")
    redis.rpush(key[stale], "!another-incarnation", "A0")
    redis.rpush(key[filling], now)
    redis.set(key[filling] + ":fill", "token")
    before = script_calls(server)

    cache.push([live, missing, stale, filling], ["A2"], cap=2)

    assert script_calls(server) - before == 1
    assert redis.lrange(key[live], 0, -1) == [now.encode(), b"A2", b"A1"]  # trimmed to 2
    assert not redis.exists(key[missing])
    assert not redis.exists(key[stale])
    assert redis.lrange(key[filling], 0, -1) == [now.encode(), b"A2"]
    assert not redis.exists(key[filling] + ":fill")  # a fill that read before is dropped


def test_removal_from_a_chunk_is_one_script_call_checking_each_readers_cache(server):
    redis = server.client()
    gen = cache.generation()
    now = cache.sentinel(redis)
    live, stale = 1, 2
    key = {reader: cache.inbox_key(reader, gen) for reader in (live, stale)}
    redis.rpush(key[live], now, "A1", "A0")
    redis.rpush(key[stale], "!another-incarnation", "A0")
    before = script_calls(server)

    cache.remove([live, stale, 3], ["A0"])

    assert script_calls(server) - before == 1
    assert redis.lrange(key[live], 0, -1) == [now.encode(), b"A1"]
    assert not redis.exists(key[stale])


def test_a_push_bigger_than_one_call_is_split_and_reaches_everyone(server, monkeypatch):
    redis = server.client()
    gen = cache.generation()
    now = cache.sentinel(redis)
    readers = list(range(1, 8))
    for reader in readers:
        redis.rpush(cache.inbox_key(reader, gen), now)
    monkeypatch.setattr(cache, "READERS_PER_CALL", 3)
    before = script_calls(server)

    cache.push(readers, ["A0"], cap=10)

    assert script_calls(server) - before == 3
    for reader in readers:
        assert redis.lrange(cache.inbox_key(reader, gen), 0, -1) == [now.encode(), b"A0"]
