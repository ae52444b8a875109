"""Faults of the queue, through a real worker process and a real broker: nothing is lost.

Each test runs twice, once on a Redis broker of its own (a private
redis-server on a free port, without persistence) and once on RabbitMQ (a
virtual host of its own on the machine's server, deleted afterwards). Losing
the broker's messages is killing that redis-server (SIGKILL: nothing saved)
and starting an empty one on the same port, or purging the RabbitMQ queue.
The sweeper runs in the test process, as beat would have it run, with
FEED_SWEEP_AFTER_SECONDS at one second; the worker does the work. No
``rebuild_timelines`` anywhere: what brings the feeds back is the outbox.
"""

import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from kombu import Connection

from accounts.models import User
from posts.services import create_post
from relations.services import follow, mute, unmute
from tests.factories import UserFactory
from tests.private_redis import PrivateRedis, broker_at, drop_publisher_pools, private_redis
from tests.timelines.test_worker import (
    DRAIN_SECONDS,
    RealQueue,
    backends_waiting_on_locks,
    end_backends_waiting_on_locks,
    feed_keys,
    reference_keys,
    url_of_test_database,
    wait_until,
)
from timelines import tasks
from timelines.home._models import InboxEntry, InboxState
from timelines.models import FanOut, PendingTask
from timelines.notifications.models import Notification

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

RABBITMQ = "amqp://guest:guest@127.0.0.1:5672"


class Broker(Protocol):
    url: str

    def lose_messages(self) -> None: ...


@dataclass
class RedisBroker:
    server: PrivateRedis

    @property
    def url(self) -> str:
        return self.server.url(0)

    def lose_messages(self) -> None:
        """SIGKILL the server (nothing is saved) and start an empty one on its port."""
        old = self.server.process
        old.kill()
        old.wait(timeout=10)
        self.server.process = subprocess.Popen(
            [*old.args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self._answers, what="the new redis-server", timeout=10)

    def _answers(self) -> bool:
        try:
            with Connection(self.url, connect_timeout=1) as probe:
                probe.ensure_connection(max_retries=1)
            return True
        except Exception:
            return False


@dataclass
class RabbitBroker:
    vhost: str

    @property
    def url(self) -> str:
        return f"{RABBITMQ}/{self.vhost}"

    def lose_messages(self) -> None:
        with Connection(self.url, connect_timeout=2) as rabbit:
            rabbit.default_channel.queue_purge("celery")


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture(params=["redis", "rabbitmq"])
def broker(request) -> Iterator[Broker]:
    if request.param == "redis":
        with private_redis() as server:
            yield RedisBroker(server)
        return
    if shutil.which("rabbitmqctl") is None:
        pytest.fail("rabbitmqctl is not installed: RabbitMQ must run on 127.0.0.1:5672")
    vhost = f"feedtest-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("add_vhost", vhost)
    try:
        rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
        yield RabbitBroker(vhost)
    finally:
        rabbitmqctl("delete_vhost", vhost)


@pytest.fixture
def queue(broker, tmp_path, settings, _eager_celery_and_clean_cache) -> Iterator[RealQueue]:
    """The test process publishes to ``broker``; workers started here consume it."""
    settings.FEED_SWEEP_AFTER_SECONDS = 1
    real = RealQueue(broker.url, url_of_test_database(), tmp_path, [])
    try:
        with broker_at(broker.url):
            yield real
    finally:
        for worker in real.workers:
            worker.stop()


def all_done() -> bool:
    """Nothing left in the outbox and every fan-out finished: the queue's work is done."""
    return (
        not PendingTask.objects.exists()
        and not FanOut.objects.filter(finished_at__isnull=True).exists()
    )


def wait_for_all_done() -> None:
    wait_until(all_done, what="the outbox to empty", timeout=DRAIN_SECONDS)


def sweep_after_the_delay() -> int:
    time.sleep(1.1)  # FEED_SWEEP_AFTER_SECONDS
    return tasks.sweep_undelivered()


def inbox_keys(reader: User) -> set[str]:
    return set(
        InboxEntry.objects.filter(reader_id=reader.pk).values_list("timeline_key", flat=True)
    )


def assert_every_feed_is_the_reference() -> None:
    for user in User.objects.order_by("pk"):
        assert feed_keys(user) == reference_keys(user), user.username


def test_a_follow_an_unmute_and_a_mute_whose_messages_the_broker_lost_reach_the_feeds(
    broker, queue
):
    worker = queue.start_worker()
    now = timezone.now()
    reader, followed, muted, later = (UserFactory(last_active_at=now) for _ in range(4))
    own = create_post(author=reader, text="the oldest entry of the reader's inbox")
    follow(follower=reader, followee=muted)
    follow(follower=reader, followee=later)
    for author in (followed, muted, later):
        create_post(author=author, text=f"by {author.username}")
    wait_for_all_done()
    assert len(feed_keys(reader)) == 3  # built: its own, muted's, later's
    mute(user=reader, target=muted)
    create_post(author=later, text="soon muted")
    wait_for_all_done()
    assert not InboxEntry.objects.filter(reader_id=reader.pk, author_id=muted.pk).exists()
    worker.stop()

    # Committed with no worker running: their messages wait in the broker ...
    follow(follower=reader, followee=followed)
    unmute(user=reader, target=muted)
    mute(user=reader, target=later)
    fresh = create_post(author=followed, text="posted while the messages were lost")
    assert PendingTask.objects.count() == 5  # sync_author x3, notify_followed, notify_about_post
    # ... and are lost.
    broker.lose_messages()
    drop_publisher_pools()
    assert feed_keys(reader) != reference_keys(reader)

    worker = queue.start_worker()
    assert sweep_after_the_delay() == 5 + 1  # the outbox rows, and the post's fan-out
    wait_for_all_done()

    assert "timelines.sync_author[" in worker.log()
    assert_every_feed_is_the_reference()
    keys = set(
        InboxEntry.objects.filter(reader_id=reader.pk).values_list("timeline_key", flat=True)
    )
    assert {own.timeline_key, fresh.timeline_key} <= keys
    assert not InboxEntry.objects.filter(reader_id=reader.pk, author_id=later.pk).exists()
    assert InboxEntry.objects.filter(reader_id=reader.pk, author_id=muted.pk).exists()
    assert Notification.objects.filter(recipient=followed, actor=reader, kind="follow").exists()


def test_a_fan_out_chunk_delivered_twice_finishes_the_fan_out_only_with_every_chunk(
    broker, queue, settings
):
    settings.FEED_FANOUT_CHUNK = 2
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    followers = [UserFactory(last_active_at=now) for _ in range(6)]
    for follower in followers:
        follow(follower=follower, followee=author)
        InboxState.objects.create(reader_id=follower.pk, built_at=now)
    post = create_post(author=author, text="to six followers, three chunks")
    tasks.fan_out_post.apply(args=(post.pk,))  # planned here: three chunks queued
    assert FanOut.objects.get(pk=post.pk).chunks_total == 3
    broker.lose_messages()  # every queued message: the chunks, the follows' work
    drop_publisher_pools()
    first = sorted(followers, key=lambda user: user.pk)[:2]
    for _ in range(2):  # the first chunk, delivered twice
        tasks.fan_out_chunk.delay(post.pk, 0, first[-1].pk)

    worker = queue.start_worker()
    wait_until(
        lambda: worker.log().count("timelines.fan_out_chunk[") >= 4,  # received, succeeded x2
        what="the worker to run the first chunk twice",
        timeout=DRAIN_SECONDS,
    )
    wait_until(
        lambda: worker.log().count("succeeded") >= 2, what="both runs", timeout=DRAIN_SECONDS
    )
    fan_out = FanOut.objects.get(pk=post.pk)
    assert fan_out.finished_at is None
    assert (fan_out.chunks_done, fan_out.recipients) == (1, 2)

    sweep_after_the_delay()
    wait_for_all_done()

    fan_out = FanOut.objects.get(pk=post.pk)
    assert (fan_out.chunks_done, fan_out.chunks_total, fan_out.recipients) == (3, 3, 6)
    assert InboxEntry.objects.filter(timeline_key=post.timeline_key).count() == 6
    assert_every_feed_is_the_reference()


def test_a_worker_killed_mid_rebuild_leaves_the_rebuild_to_be_done_again(broker, queue):
    now = timezone.now()
    reader = UserFactory(last_active_at=now)
    authors = [UserFactory(last_active_at=now) for _ in range(3)]
    for author in authors:
        follow(follower=reader, followee=author)
    posts = [create_post(author=author, text="to be pulled") for author in authors * 2]
    worker = queue.start_worker()
    wait_for_all_done()
    InboxState.objects.filter(reader_id=reader.pk).delete()  # back after a long absence
    InboxEntry.objects.filter(reader_id=reader.pk).delete()

    # An uncommitted row of the reader's inbox makes the rebuild's insert wait on it.
    database = connection.settings_dict["NAME"]
    locker = psycopg.connect(queue.database_url.replace("postgres://", "postgresql://", 1))
    try:
        with locker.cursor() as db:
            db.execute(
                f"INSERT INTO {InboxEntry._meta.db_table} (reader_id, timeline_key, author_id)"
                " VALUES (%s, %s, %s)",
                [reader.pk, posts[0].timeline_key, authors[0].pk],
            )
        call_command("rebuild_timelines", "--user", reader.username, "--queue", stdout=None)
        wait_until(
            lambda: backends_waiting_on_locks(database) == 1,
            what="the worker to stop inside the rebuild",
            timeout=DRAIN_SECONDS,
        )
        worker.kill()
        end_backends_waiting_on_locks(database)
        locker.rollback()
    finally:
        locker.close()
    assert PendingTask.objects.filter(owner=reader.pk, task="timelines.rebuild").exists()
    assert InboxState.objects.get(reader_id=reader.pk).built_at is None  # stopped half-way

    # Redis hands the unacknowledged message out again after the visibility
    # timeout, RabbitMQ at once; the sweeper queues it again either way.
    queue.start_worker(redeliver_after=2)
    sweep_after_the_delay()
    wait_for_all_done()

    assert InboxState.objects.get(reader_id=reader.pk).built_at is not None
    keys = set(
        InboxEntry.objects.filter(reader_id=reader.pk).values_list("timeline_key", flat=True)
    )
    assert keys == {post.timeline_key for post in posts}
    assert_every_feed_is_the_reference()
