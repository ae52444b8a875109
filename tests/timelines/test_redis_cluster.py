"""The feed caches and the Django cache on a real Redis Cluster of three masters.

The cluster is started by the test (tests/private_redis.py) on loopback ports.
A Lua script may touch keys of one slot only: a reader's keys share one by
their ``{reader}`` hash tag, and a push to many readers is one call per reader,
sent in one pipeline per master (timelines.home._cache). ``make test`` also runs the
cache suites (feed invariant, feed rules, home, new posts, trim sweep, rate
limits) with the whole site on a cluster, where tests/conftest.py fails any test
whose cache calls failed.
"""

import copy
import re
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from redis.exceptions import RedisClusterException, ResponseError

from feed_project.redis_cluster import CACHE_OPTIONS, ClusterConnectionFactory
from posts import ids
from posts.services import create_post
from relations.services import follow, unfollow
from tests.factories import UserFactory
from tests.private_redis import PrivateRedisCluster, private_redis_cluster
from timelines.home import _cache as cache
from timelines.home._models import InboxEntry

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory) -> Iterator[PrivateRedisCluster]:
    with private_redis_cluster(tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster
        ClusterConnectionFactory.forget(cluster.url())


@pytest.fixture
def on_cluster(redis_cluster) -> Iterator[PrivateRedisCluster]:
    """The site's caches (inboxes, rate limits, throttles) on the cluster, emptied."""
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["LOCATION"] = [redis_cluster.url()]
    caches["default"]["OPTIONS"].update(CACHE_OPTIONS)
    redis_cluster.client().flushall()
    with override_settings(REDIS_URL=redis_cluster.url(), REDIS_CLUSTER=True, CACHES=caches):
        yield redis_cluster


def evalsha_calls(cluster: PrivateRedisCluster) -> dict[int, int]:
    """EVALSHA calls so far, per master's port."""
    return {
        m.port: m.client().info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
        for m in cluster.masters
    }


def post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Z]+)"', response.content.decode())


@pytest.fixture
def publish(django_capture_on_commit_callbacks):
    def publish(author, text: str = "post") -> str:
        with django_capture_on_commit_callbacks(execute=True):
            return create_post(author=author, text=text).pk

    return publish


def test_a_readers_keys_share_one_slot_and_readers_spread_over_every_master(on_cluster):
    redis = on_cluster.client()
    for reader_id in range(1, 31):
        inbox = cache.inbox_key(reader_id, 7)
        assert redis.keyslot(inbox) == redis.keyslot(inbox + ":fill")
    masters = {on_cluster.master_of(cache.inbox_key(r, 7)).port for r in range(1, 31)}
    assert masters == {master.port for master in on_cluster.masters}


def test_a_script_over_two_readers_keys_is_refused_by_the_cluster(on_cluster):
    """Why a chunk's push is one call per reader there: the single-Redis form fails."""
    redis = cache.client()
    one, other = cache.inbox_key(1, 0), cache.inbox_key(2, 0)
    assert redis.keyslot(one) != redis.keyslot(other)
    push_many, layout = cache._scripts(redis)["push_many"], cache.key_layout(0)
    with pytest.raises((RedisClusterException, ResponseError), match="slot"):
        push_many(
            keys=[one, one + ":fill", other, other + ":fill"], args=["", *layout, "1,2", 10, "A"]
        )


def test_a_readers_feed_is_filled_into_and_served_from_the_cluster(on_cluster, client, publish):
    alice, bob = UserFactory(), UserFactory()
    follow(follower=bob, followee=alice)
    post_id = publish(alice, "hello cluster")
    client.force_login(bob)

    assert post_ids(client.get("/")) == [post_id]  # fills bob's cache on his master
    key = cache.inbox_key(bob.pk, cache.generation())
    stored = on_cluster.master_of(key).client().lrange(key, 0, -1)
    assert ids.post_id_to_timeline_key(post_id).encode() in stored

    # The table's rows gone, the page still lists the post: it came from Redis.
    InboxEntry.objects.filter(reader_id=bob.pk).delete()
    assert post_ids(client.get("/")) == [post_id]


def test_a_fan_out_pushes_to_live_caches_on_every_master_in_calls_of_one_reader(
    on_cluster, client, publish
):
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    readers = [UserFactory(last_active_at=now) for _ in range(12)]
    for reader in readers:
        follow(follower=reader, followee=author)
        client.force_login(reader)
        assert client.get("/").status_code == 200  # a live cache for each
    gen = cache.generation()
    keys = {reader.pk: cache.inbox_key(reader.pk, gen) for reader in readers}
    per_master: dict[int, int] = {}
    for key in keys.values():
        port = on_cluster.master_of(key).port
        per_master[port] = per_master.get(port, 0) + 1
    assert len(per_master) == 3
    publish(author, "warm-up")  # each master loads the scripts (a first call is NOSCRIPT)
    before = evalsha_calls(on_cluster)

    post_id = publish(author, "to everyone")

    timeline_key = ids.post_id_to_timeline_key(post_id)
    for key in keys.values():
        assert on_cluster.master_of(key).client().lindex(key, 1) == timeline_key.encode()
    assert cache.generation() == gen  # no write failed
    after = evalsha_calls(on_cluster)
    # One call per reader, and one per master reading its incarnation first.
    expected = {port: readers + 1 for port, readers in per_master.items()}
    assert {port: after[port] - before[port] for port in per_master} == expected


def test_unfollow_removes_the_authors_posts_from_the_cached_inbox(
    on_cluster, client, publish, django_capture_on_commit_callbacks
):
    alice, bob, carol = UserFactory(), UserFactory(), UserFactory()
    follow(follower=bob, followee=alice)
    follow(follower=bob, followee=carol)
    from_alice, from_carol = publish(alice, "a"), publish(carol, "c")
    client.force_login(bob)
    assert set(post_ids(client.get("/"))) == {from_alice, from_carol}

    with django_capture_on_commit_callbacks(execute=True):
        unfollow(follower=bob, followee=alice)

    key = cache.inbox_key(bob.pk, cache.generation())
    members = on_cluster.master_of(key).client().lrange(key, 0, -1)
    assert ids.post_id_to_timeline_key(from_alice).encode() not in members
    assert ids.post_id_to_timeline_key(from_carol).encode() in members
    assert post_ids(client.get("/")) == [from_carol]


def test_rate_limits_count_on_the_cluster(on_cluster, alice_client, settings):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_RATES = {**settings.RATELIMIT_RATES, "post": ("2/m", "")}
    statuses = [alice_client.post("/posts/new/", {"text": f"n{n}"}).status_code for n in range(3)]
    assert statuses == [302, 302, 429]
    counters = [key for key in on_cluster.client().scan_iter(match="feed:*rl:*")]
    assert counters  # the window's counter lives in the cluster


@pytest.mark.cache_outage
def test_a_frozen_master_costs_a_page_one_timeout_and_the_feed_comes_from_postgresql(
    on_cluster, client, publish
):
    alice, bob = UserFactory(), UserFactory()
    follow(follower=bob, followee=alice)
    post_id = publish(alice, "still here")
    client.force_login(bob)
    assert post_ids(client.get("/")) == [post_id]
    master = on_cluster.master_of(cache.inbox_key(bob.pk, cache.generation()))

    with master.frozen_for_a_while():
        started = time.monotonic()
        response = client.get("/")
        elapsed = time.monotonic() - started

    assert response.status_code == 200 and post_ids(response) == [post_id]
    assert elapsed < settings.SERVICE_TIMEOUT_SECONDS * 2


@pytest.mark.cache_outage
def test_healthz_checks_every_master_of_the_cluster(on_cluster, client):
    assert client.get("/healthz").json()["redis"] == "ok"

    with on_cluster.masters[2].frozen_for_a_while():
        response = client.get("/healthz")

    assert response.status_code == 503 and response.json()["redis"] == "failed"
