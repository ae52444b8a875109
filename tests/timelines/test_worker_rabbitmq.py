"""RabbitMQ as the broker, apart from the cache Redis: fan-out through a real worker.

RabbitMQ runs on this machine at 127.0.0.1:5672 (guest/guest). Each test gets
a virtual host of its own (``rabbitmqctl add_vhost``), deleted afterwards with
everything in it, so no test sees another's queue. The site publishes there
for real (not eagerly) and a ``celery worker`` subprocess (started as in
tests/timelines/test_worker.py) consumes it; the cache stays on REDIS_URL.
"""

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from posts.models import Post
from relations.services import follow
from tests.factories import UserFactory
from tests.private_redis import broker_at
from tests.timelines.test_worker import (
    DRAIN_SECONDS,
    RealQueue,
    cached_keys,
    feed_keys,
    reference_keys,
    url_of_test_database,
    wait_until,
)
from timelines.home._models import InboxEntry
from timelines.models import FanOut

pytestmark = pytest.mark.worker

RABBITMQ = "127.0.0.1:5672"


def rabbitmqctl(*arguments: str) -> str:
    binary = shutil.which("rabbitmqctl") or "/usr/sbin/rabbitmqctl"
    finished = subprocess.run(
        [binary, *arguments], capture_output=True, text=True, timeout=60, check=False
    )
    if finished.returncode != 0:
        pytest.fail(f"rabbitmqctl {' '.join(arguments)} failed: {finished.stderr}")
    return finished.stdout


def queues(vhost: str) -> dict[str, dict]:
    """The vhost's queues by name: durable, messages, messages_persistent."""
    out = rabbitmqctl(
        "list_queues", "-q", "-p", vhost, "--formatter", "json",
        "name", "durable", "messages", "messages_persistent",
    )  # fmt: skip
    return {queue["name"]: queue for queue in json.loads(out or "[]")}


@pytest.fixture
def rabbit(transactional_db, tmp_path, _eager_celery_and_clean_cache) -> Iterator[RealQueue]:
    """A fresh vhost; the site publishes to it; workers started here are stopped after."""
    vhost = f"feedtest-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("add_vhost", vhost)
    try:
        rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
        queue = RealQueue(
            broker_url=f"amqp://guest:guest@{RABBITMQ}/{vhost}",
            database_url=url_of_test_database(),
            log_dir=tmp_path,
            workers=[],
        )
        with broker_at(queue.broker_url):
            try:
                yield queue
            finally:
                for worker in queue.workers:
                    worker.stop()
    finally:
        rabbitmqctl("delete_vhost", vhost)


def vhost_of(queue: RealQueue) -> str:
    return queue.broker_url.rsplit("/", 1)[1]


@pytest.mark.django_db(transaction=True)
def test_tasks_wait_in_a_durable_queue_as_persistent_messages(rabbit):
    now = timezone.now()
    author, reader = UserFactory(last_active_at=now), UserFactory(last_active_at=now)

    follow(follower=reader, followee=author)  # queues the backfill; no worker yet

    celery_queue = queues(vhost_of(rabbit))["celery"]
    assert celery_queue["durable"] is True
    assert celery_queue["messages"] >= 1
    assert celery_queue["messages_persistent"] == celery_queue["messages"]


@pytest.mark.django_db(transaction=True)
def test_a_post_made_on_the_site_reaches_every_follower_through_a_worker_on_rabbitmq(
    client, rabbit
):
    worker = rabbit.start_worker()
    assert "amqp://guest:**@" in worker.log()  # the worker's banner names its transport
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    followers = [UserFactory(last_active_at=now) for _ in range(3)]
    for follower in followers:
        follow(follower=follower, followee=author)
    wait_until(
        lambda: queues(vhost_of(rabbit))["celery"]["messages"] == 0,
        what="the follows' backfills to run in the worker",
        timeout=DRAIN_SECONDS,
    )
    for follower in followers:
        assert feed_keys(follower) == []  # builds the inbox and fills the cache (Redis)

    client.force_login(author)
    response = client.post("/posts/new/", {"text": "through RabbitMQ"})

    assert response.status_code == 302
    post = Post.objects.get(author=author)
    fan_out = wait_until(
        lambda: FanOut.objects.filter(pk=post.pk, finished_at__isnull=False).first(),
        what="the worker to finish the fan-out",
        timeout=DRAIN_SECONDS,
    )
    assert fan_out.recipients == len(followers)
    assert "timelines.fan_out_chunk[" in worker.log()
    for follower in followers:
        assert InboxEntry.objects.filter(reader_id=follower.pk, timeline_key=post.timeline_key)
        assert cached_keys(follower.pk) == [post.timeline_key]
        assert feed_keys(follower) == [post.timeline_key] == reference_keys(follower)


@pytest.mark.django_db
def test_healthz_reports_a_rabbitmq_broker_ok_and_the_cache_apart(rabbit):
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"database": "ok", "redis": "ok", "broker": "ok"}
    assert settings.REDIS_URL.startswith("redis")  # the cache is not the broker


@pytest.mark.django_db
def test_healthz_names_a_rabbitmq_broker_that_refuses_connections():
    with broker_at("amqp://guest:guest@127.0.0.1:1//"):
        response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json()["broker"] == "failed"
