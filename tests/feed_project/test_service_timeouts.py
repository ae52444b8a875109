"""A broker or cache Redis that accepts connections but never answers costs a request seconds.

Each test starts a redis-server of its own (tests/private_redis.py) and
freezes it with SIGSTOP: connecting still succeeds (the kernel accepts), and
every reply hangs, as with a paused VM. Without socket timeouts a post hung
until gunicorn killed the worker at 30 s. The timeouts are the
ones the settings give (SERVICE_TIMEOUT_SECONDS): only the broker's URL, or
the cache's, is pointed at the private server.
"""

import logging
import re
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from kombu.exceptions import OperationalError

from feed_project.celery import app as celery_app
from posts.models import Post
from posts.services import create_post
from relations.services import follow
from tests.factories import UserFactory
from tests.private_redis import PrivateRedis, broker_at, cache_at, private_redis
from timelines.home._models import InboxEntry
from timelines.models import FanOut
from timelines.tasks import fan_out_post

# What the timeouts are for: with the broker frozen each request answers in under 3 s.
ANSWER_SECONDS = 3.0


@pytest.fixture
def redis_server() -> Iterator[PrivateRedis]:
    with private_redis() as server:
        yield server


def test_the_settings_give_every_client_of_the_broker_and_cache_a_timeout():
    options = celery_app.conf.broker_transport_options
    timeout = settings.SERVICE_TIMEOUT_SECONDS
    assert options["socket_timeout"] == options["socket_connect_timeout"] == timeout
    assert options["read_timeout"] == options["write_timeout"] == timeout
    assert celery_app.conf.broker_connection_timeout == timeout
    assert options["brpop_timeout"] < options["socket_timeout"]
    assert celery_app.conf.task_publish_retry is False
    cache_options = settings.CACHES["default"]["OPTIONS"]
    assert 0 < cache_options["SOCKET_CONNECT_TIMEOUT"] <= cache_options["SOCKET_TIMEOUT"] < timeout


@pytest.mark.django_db(transaction=True)
def test_posting_with_the_broker_frozen_answers_fast_and_delivers_in_process(
    client, redis_server, caplog
):
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    readers = [UserFactory(last_active_at=now) for _ in range(3)]
    for reader in readers:
        follow(follower=reader, followee=author)  # eager: conftest's default
        client.force_login(reader)
        assert client.get("/").status_code == 200  # builds the reader's inbox
    client.force_login(author)

    # One chunk a follower: the post queues a fan-out, three chunks and a
    # notification task, each of which would wait out the timeout.
    with override_settings(FEED_FANOUT_CHUNK=1), broker_at(redis_server.url()):
        celery_app.send_task("feedtest.warm_up")  # a live pooled connection, as in production
        with (
            redis_server.frozen_for_a_while(),
            caplog.at_level(logging.WARNING, logger="timelines.tasks"),
        ):
            started = time.monotonic()
            response = client.post("/posts/new/", {"text": "the broker is frozen"})
            elapsed = time.monotonic() - started

    assert response.status_code == 302
    assert elapsed < ANSWER_SECONDS, f"posting with the broker frozen took {elapsed:.2f}s"
    assert "broker refused timelines.fan_out_post" in caplog.text
    post = Post.objects.get(author=author)
    assert FanOut.objects.get(pk=post.pk).finished_at is not None
    delivered = InboxEntry.objects.filter(timeline_key=post.timeline_key)
    assert set(delivered.values_list("reader_id", flat=True)) >= {r.pk for r in readers}
    client.force_login(readers[0])
    assert f'data-post-id="{post.pk}"' in client.get("/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_after_a_broker_failure_publishing_gives_up_at_once_for_a_while(redis_server):
    with broker_at(redis_server.url()), redis_server.frozen_for_a_while():
        with pytest.raises(OperationalError, match=r"(?i)timeout"):
            fan_out_post.delay("0" * 20)  # waits out the socket timeout
        with pytest.raises(OperationalError, match="not trying it"):
            fan_out_post.delay("0" * 20)  # does not touch the broker
    with broker_at(redis_server.url()):  # forgotten: the thawed broker takes it
        fan_out_post.delay("0" * 20)


@pytest.mark.django_db(transaction=True)
def test_a_frozen_cache_redis_does_not_hang_the_home_page(client, redis_server):
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    reader = UserFactory(last_active_at=now)
    follow(follower=reader, followee=author)
    client.force_login(reader)
    with cache_at(redis_server.url()):
        post = create_post(author=author, text="served from PostgreSQL")
        assert client.get("/").status_code == 200  # the reader's inbox is cached now
        with redis_server.frozen_for_a_while():
            started = time.monotonic()
            response = client.get("/")
            elapsed = time.monotonic() - started

    assert response.status_code == 200
    assert re.findall(r'data-post-id="([0-9A-Za-z]+)"', response.content.decode()) == [post.pk]
    assert elapsed < ANSWER_SECONDS, f"the home page with the cache frozen took {elapsed:.2f}s"


@pytest.mark.cache_outage
@pytest.mark.django_db(transaction=True)
def test_posting_with_one_frozen_redis_as_cache_and_broker_waits_once_for_each(
    client, redis_server
):
    """The development shape (REDIS_URL alone): the publish waits out the broker's
    timeout, the fan-out it runs in process waits once for the cache, and every
    later cache call of the request is skipped (feed_project.cache_breaker)."""
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    readers = [UserFactory(last_active_at=now) for _ in range(3)]
    with override_settings(FEED_FANOUT_CHUNK=1), cache_at(redis_server.url()):
        for reader in readers:
            follow(follower=reader, followee=author)
            client.force_login(reader)
            assert client.get("/").status_code == 200  # builds and caches the inbox
        client.force_login(author)
        with broker_at(redis_server.url()):
            celery_app.send_task("feedtest.warm_up")
            with redis_server.frozen_for_a_while():
                started = time.monotonic()
                response = client.post("/posts/new/", {"text": "one frozen Redis"})
                elapsed = time.monotonic() - started

    cache_wait = settings.CACHES["default"]["OPTIONS"]["SOCKET_TIMEOUT"]
    assert response.status_code == 302
    assert elapsed < settings.SERVICE_TIMEOUT_SECONDS + cache_wait + 0.7, f"{elapsed:.2f}s"
    post = Post.objects.get(author=author)
    delivered = InboxEntry.objects.filter(timeline_key=post.timeline_key)
    assert set(delivered.values_list("reader_id", flat=True)) >= {r.pk for r in readers}
