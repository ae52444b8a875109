"""The site keeps working when Redis or the broker is down, and recovers cleanly.

Redis "down" is Redis pointed at a closed port (127.0.0.1:1: connections are
refused at once). ``redis_at_closed_port`` overrides REDIS_URL and CACHES;
Django's own setting_changed handler (django.test.signals.clear_cache_handlers)
then drops every cache object, so the next ``caches["default"]`` is a new
django-redis client for the new LOCATION. django-redis keeps its connection
pools in a process-wide dict keyed by URL (django_redis.pool.ConnectionFactory
._pools): the closed port gets a pool of its own, and when the override ends
the next client finds the working pool of the real URL again. Nothing else
needs resetting.

The broker "down" is the Celery app's broker_url pointed at a closed port,
with eager mode off, and the app's cached connection and producer pools
dropped so that the next publish really tries that URL.

Redis "frozen" is a redis-server of the test's own stopped with SIGSTOP
(tests/private_redis.py): connections are accepted and nothing answers, so
each call waits out the client's socket timeout unless the cache's breaker
(feed_project.cache_breaker) skips it. The breaker's pause is shortened for
these tests (``short_pause``) so that waiting it out costs a second, not five.
"""

import copy
import logging
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from django_redis import get_redis_connection
from redis.exceptions import ConnectionError as RedisConnectionError

from accounts.models import User
from accounts.services import refresh_last_active
from feed_project import cache_breaker
from feed_project.pagination import Cursor
from posts.models import Post
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from tests.private_redis import PrivateRedis, broker_at, cache_at, private_redis
from timelines.home import _cache as cache
from timelines.home import home_feed
from timelines.home._cache import CachedInbox
from timelines.home._inbox import Inbox
from timelines.home._models import CacheGeneration, InboxEntry
from timelines.home.pull_model import pull_reference_keys
from timelines.models import FanOut
from timelines.tasks import sweep_undelivered

CLOSED_PORT = "redis://127.0.0.1:1/0"
# Refused connections must cost a page milliseconds; this bound only catches a hang.
FAST_SECONDS = 2.0
# The cache client's socket timeout: what one call to a frozen Redis waits.
ONE_WAIT = settings.CACHES["default"].get("OPTIONS", {}).get("SOCKET_TIMEOUT", 0.0)
# A call skipped by the breaker waits for nothing: well under one wait.
NO_WAIT = ONE_WAIT / 2
PAUSE_SECONDS = 1.0


@contextmanager
def redis_at_closed_port() -> Iterator[None]:
    """Point the cache (and the inbox caches that use its client) at a closed port."""
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["LOCATION"] = CLOSED_PORT
    with override_settings(REDIS_URL=CLOSED_PORT, CACHES=caches):
        with pytest.raises(RedisConnectionError):
            get_redis_connection("default").ping()
        yield
    get_redis_connection("default").ping()  # back to the real Redis


@pytest.fixture
def short_pause(monkeypatch):
    """The breaker's pause, and the hold of a generation made in one, a second long."""
    monkeypatch.setattr(cache_breaker, "PAUSE_SECONDS", PAUSE_SECONDS)
    monkeypatch.setattr(cache_breaker, "CLOCK_SKEW_SECONDS", 0.1)


@pytest.fixture
def own_redis(short_pause) -> Iterator[PrivateRedis]:
    """The site's cache on a redis-server of the test's own, which it may freeze."""
    with private_redis() as server, cache_at(server.url()):
        yield server


def wait_out_the_pauses() -> None:
    """Sleep until no pause of this process, and no hold of the generation, is left."""
    until = max([pause.until for pause in cache_breaker._pauses.values()], default=0.0)
    time.sleep(max(0.0, until - time.monotonic()))
    time.sleep(max(0.0, cache.generation() / 1000 - time.time()))
    assert not cache.held(cache.generation())


def timed(read):
    started = time.monotonic()
    result = read()
    return time.monotonic() - started, result


def evalsha_calls(server: PrivateRedis) -> int:
    return server.client().info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)


@pytest.fixture
def publish(django_capture_on_commit_callbacks):
    """Post through the service and run its on-commit fan-out, as a real commit would."""

    def publish(author: User, text: str = "post") -> str:
        with django_capture_on_commit_callbacks(execute=True):
            return create_post(author=author, text=text).timeline_key

    return publish


@pytest.fixture
def activate(django_capture_on_commit_callbacks):
    """Mark readers as here now (pushes only reach readers active lately)."""

    def activate(*users: User) -> None:
        for user in users:
            with django_capture_on_commit_callbacks(execute=True):
                refresh_last_active(user=user)

    return activate


def feed_keys(reader: User) -> list[str]:
    return [item.key for item in home_feed(reader=reader, cursor=Cursor()).items]


def reference_keys(reader: User) -> list[str]:
    return pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=settings.FEED_PAGE_SIZE)


def shown_post_ids(response) -> list[str]:
    return re.findall(r'data-post-id="([0-9A-Za-z]+)"', response.content.decode())


def in_inbox(reader: User, key: str) -> bool:
    return InboxEntry.objects.filter(reader_id=reader.pk, timeline_key=key).exists()


@pytest.mark.django_db
def test_feeds_posting_and_following_work_from_the_tables_with_redis_down(
    alice, bob, carol, publish, activate, django_capture_on_commit_callbacks
):
    activate(bob, carol)
    before = publish(alice, "before the outage")

    with redis_at_closed_port():
        started = time.monotonic()
        assert feed_keys(bob) == [before] == reference_keys(bob)
        with django_capture_on_commit_callbacks(execute=True):
            assert follow(follower=carol, followee=alice)
        assert feed_keys(carol) == [before] == reference_keys(carol)
        during = publish(alice, "during the outage")
        assert in_inbox(bob, during) and in_inbox(carol, during)
        own = publish(carol, "carol's own")
        assert feed_keys(bob) == [during, before] == reference_keys(bob)
        assert feed_keys(carol) == [own, during, before] == reference_keys(carol)
        elapsed = time.monotonic() - started

    assert elapsed < FAST_SECONDS, f"Redis down made reads and writes take {elapsed:.2f}s"
    assert feed_keys(bob) == [during, before] == reference_keys(bob)
    assert feed_keys(carol) == [own, during, before] == reference_keys(carol)


@pytest.mark.django_db
def test_the_site_pages_work_with_redis_down(
    client, alice, bob, carol, publish, activate, django_capture_on_commit_callbacks
):
    activate(bob, carol)
    before = Post.objects.get(timeline_key=publish(alice, "before the outage"))

    with redis_at_closed_port():
        client.force_login(bob)
        assert shown_post_ids(client.get("/")) == [before.pk]  # bob's inbox built from tables
        client.force_login(carol)
        with django_capture_on_commit_callbacks(execute=True):
            followed = client.post("/@alice/follow/")
        assert shown_post_ids(client.get("/")) == [before.pk]
        client.force_login(alice)
        with django_capture_on_commit_callbacks(execute=True):
            posted = client.post("/posts/new/", {"text": "posted during the outage"})
        client.force_login(bob)
        bob_home = client.get("/")
        client.force_login(carol)
        carol_home = client.get("/")

    during = Post.objects.get(text="posted during the outage")
    assert followed.status_code == 302
    assert posted.status_code == 302
    for reader, response in ((bob, bob_home), (carol, carol_home)):
        assert response.status_code == 200
        assert in_inbox(reader, during.timeline_key)
        assert shown_post_ids(response) == [during.pk, before.pk]
        assert reference_keys(reader) == [during.timeline_key, before.timeline_key]


@pytest.mark.django_db
def test_an_inbox_rebuilt_from_several_posts_holds_their_whole_keys(alice, bob, publish, activate):
    activate(bob)  # bob's inbox is not built yet: his first read rebuilds it
    keys = [publish(alice, "one"), publish(alice, "two")]

    Inbox(bob.pk).rebuild()

    stored = InboxEntry.objects.filter(reader_id=bob.pk).values_list("timeline_key", flat=True)
    assert sorted(stored) == sorted(keys)
    assert feed_keys(bob) == keys[::-1] == reference_keys(bob)


@pytest.mark.django_db
def test_a_cache_that_missed_a_write_during_an_outage_is_never_served_after_it(
    alice, bob, publish, activate, short_pause
):
    CacheGeneration.objects.get_or_create(pk=1)
    activate(bob)
    first = publish(alice, "first")
    assert feed_keys(bob) == [first]  # fills bob's cache
    generation = cache.generation()
    assert CachedInbox(bob.pk, generation).older(None, 10) == [first]

    with redis_at_closed_port():
        second = publish(alice, "second")  # the push to bob's cache fails

    assert in_inbox(bob, second)
    assert cache.generation() > generation
    # The old cache is back with Redis, still without the second post ...
    assert CachedInbox(bob.pk, generation).older(None, 10) == [first]
    # ... and is not what bob reads.
    assert feed_keys(bob) == [second, first] == reference_keys(bob)
    assert CachedInbox(bob.pk, cache.generation()).older(None, 10) is None  # held a moment
    wait_out_the_pauses()
    assert feed_keys(bob) == [second, first] == reference_keys(bob)
    assert CachedInbox(bob.pk, cache.generation()).older(None, 10) == [second, first]


@pytest.mark.django_db
def test_a_missed_cache_write_is_not_served_even_without_a_generation_row(
    alice, bob, publish, activate
):
    CacheGeneration.objects.all().delete()  # what `manage.py flush` leaves behind
    activate(bob)
    first = publish(alice, "first")
    assert feed_keys(bob) == [first]

    with redis_at_closed_port():
        second = publish(alice, "second")

    assert in_inbox(bob, second)
    assert feed_keys(bob) == [second, first] == reference_keys(bob)


@pytest.mark.django_db
def test_flushing_redis_between_reads_leaves_the_feed_correct(alice, bob, publish, activate):
    redis = get_redis_connection("default")
    activate(bob)
    first = publish(alice, "first")
    assert feed_keys(bob) == [first]

    redis.flushdb()
    assert feed_keys(bob) == [first] == reference_keys(bob)
    redis.flushdb()
    second = publish(alice, "second")  # no cache to push to
    assert feed_keys(bob) == [second, first] == reference_keys(bob)
    third = publish(alice, "third")  # pushed to the refilled cache
    redis.flushdb()
    assert feed_keys(bob) == [third, second, first] == reference_keys(bob)
    assert feed_keys(bob) == [third, second, first]  # from the cache refilled just now
    assert CachedInbox(bob.pk, cache.generation()).older(None, 10) == [third, second, first]


@pytest.mark.django_db(transaction=True)
def test_posting_with_the_broker_down_commits_and_delivers_in_process(client, caplog):
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    reader = UserFactory(last_active_at=now)
    follow(follower=reader, followee=author)  # eager: conftest's default
    assert feed_keys(reader) == []  # builds the reader's inbox
    client.force_login(author)

    with broker_at(CLOSED_PORT), caplog.at_level(logging.WARNING, logger="timelines.tasks"):
        started = time.monotonic()
        response = client.post("/posts/new/", {"text": "the broker is down"})
        elapsed = time.monotonic() - started

    assert response.status_code == 302
    assert elapsed < FAST_SECONDS, f"posting with the broker down took {elapsed:.2f}s"
    assert "broker refused timelines.fan_out_post" in caplog.text  # it did try the broker
    post = Post.objects.get(author=author)
    assert FanOut.objects.get(pk=post.pk).finished_at is not None
    assert in_inbox(reader, post.timeline_key)
    assert feed_keys(reader) == [post.timeline_key] == reference_keys(reader)


@pytest.mark.django_db
def test_the_sweeper_redelivers_a_post_whose_fan_out_never_finished(
    alice, bob, activate, django_capture_on_commit_callbacks
):
    activate(bob)
    assert feed_keys(bob) == []
    # No on-commit callbacks run here: both posts' fan-out tasks are "lost".
    lost = create_post(author=alice, text="its task was lost")
    recent = create_post(author=alice, text="its task may still come")
    FanOut.objects.filter(pk=lost.pk).update(created_at=timezone.now() - timedelta(minutes=3))
    assert not in_inbox(bob, lost.timeline_key)

    with django_capture_on_commit_callbacks(execute=True):  # the plan queues its chunks
        assert sweep_undelivered() == 1

    assert in_inbox(bob, lost.timeline_key)
    assert FanOut.objects.get(pk=lost.pk).finished_at is not None
    assert not in_inbox(bob, recent.timeline_key)  # not two minutes old: left alone
    assert FanOut.objects.get(pk=recent.pk).finished_at is None
    assert sweep_undelivered() == 0


@pytest.mark.cache_outage
@pytest.mark.django_db
def test_a_frozen_cache_costs_one_wait_then_none_and_is_read_again_once_it_answers(
    alice, bob, publish, activate, own_redis
):
    activate(bob)
    first = publish(alice, "first")
    second = publish(alice, "second")
    assert feed_keys(bob) == [second, first]  # fills bob's cache
    reads = evalsha_calls(own_redis)

    with own_redis.frozen_for_a_while():
        waited, shown = timed(lambda: feed_keys(bob))
        later = [timed(lambda: feed_keys(bob)) for _ in range(5)]

    assert ONE_WAIT * 0.9 <= waited < ONE_WAIT + 0.5, f"the first read took {waited:.2f}s"
    assert shown == [second, first] == reference_keys(bob)  # from PostgreSQL
    assert all(elapsed < NO_WAIT for elapsed, _ in later), [f"{e:.2f}" for e, _ in later]
    assert all(keys == [second, first] for _, keys in later)
    # Thawed, but the pause is not over: the site does not ask the server yet.
    assert feed_keys(bob) == [second, first]
    assert evalsha_calls(own_redis) == reads + 1  # the frozen read only, answered late
    wait_out_the_pauses()
    assert feed_keys(bob) == [second, first] == reference_keys(bob)
    assert evalsha_calls(own_redis) > reads + 1  # the cache is read again
    assert cache.generation() <= time.time() * 1000  # no write was lost: nothing held


@pytest.mark.cache_outage
@pytest.mark.django_db
def test_writes_skipped_in_a_pause_bump_the_generation_once_and_it_is_filled_after_it(
    alice, bob, publish, activate, own_redis
):
    activate(bob)
    first = publish(alice, "first")
    assert feed_keys(bob) == [first]  # cached in this generation
    before = cache.generation()

    with own_redis.frozen_for_a_while():
        waited, second = timed(lambda: publish(alice, "second"))  # its push waits, and fails
        bumped = cache.generation()
        skipped, third = timed(lambda: publish(alice, "third"))  # its push is skipped
        assert cache.generation() == bumped > before  # one bump for the pause
        assert feed_keys(bob) == [third, second, first] == reference_keys(bob)

    assert waited < ONE_WAIT + 1.0 and skipped < NO_WAIT + 0.2, (waited, skipped)
    assert cache.held(bumped)
    # Another process, whose breaker is closed, meets a Redis that answers: it
    # neither reads nor fills a cache of the held generation, so none can miss
    # what this process still skips until its pause is over.
    cache_breaker.forget_failures()
    assert feed_keys(bob) == [third, second, first]
    assert not own_redis.client().exists(cache.inbox_key(bob.pk, bumped))
    assert CachedInbox(bob.pk, before).older(None, 10) == [first]  # stale, never read again

    wait_out_the_pauses()
    assert feed_keys(bob) == [third, second, first] == reference_keys(bob)
    fourth = publish(alice, "fourth")  # pushed into the cache filled just now
    assert CachedInbox(bob.pk, bumped).older(None, 10) == [fourth, third, second, first]
    assert feed_keys(bob) == [fourth, third, second, first] == reference_keys(bob)


@pytest.mark.embedded
def test_a_generation_is_held_at_most_a_pause_and_the_clocks_disagreement_ahead():
    now_ms = time.time() * 1000
    assert cache.held(int(now_ms + 2000))  # made in a pause that ends in 2 s
    assert not cache.held(int(now_ms - 10))  # that pause is over
    assert not cache.held(7)  # a generation bumped the ordinary way
    assert not cache.held(int(now_ms + 3_600_000))  # a clock an hour ahead: not believed
