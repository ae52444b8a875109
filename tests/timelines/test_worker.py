"""Fan-out through a real Celery worker process, on the real PostgreSQL and Redis.

Nothing is mocked: the test process publishes to a Redis broker of the test's
own, a ``celery worker --pool=prefork`` subprocess consumes it against the test
database, and the test polls the tables until the fan-out is done. The queue,
the workers and the ``real_queue`` fixture are ``tests/workers.py``'s (shared
with the other worker tests and the live-client tests); they are imported here
too, where the other worker tests have long imported them from.
"""

import time
import uuid

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from accounts.models import User
from feed_project import sharding
from feed_project.pagination import Cursor
from posts.models import Post
from posts.services import create_post
from relations.models import Followee, Follower
from relations.services import follow
from tests.factories import UserFactory
from tests.workers import (  # noqa: F401 (real_queue is a fixture; the rest, others' imports)
    DRAIN_SECONDS,
    RealQueue,
    real_queue,
    url_of_test_database,
    wait_until,
)
from timelines.home import _cache as cache
from timelines.home import home_feed
from timelines.home._cache import CachedInbox
from timelines.home._models import InboxEntry, InboxState
from timelines.home.pull_model import pull_reference_keys
from timelines.models import FanOut

pytestmark = pytest.mark.worker


def cached_keys(reader_id: int) -> list[str] | None:
    """The reader's live Redis cache (newest first), or None when it has none."""
    return CachedInbox(reader_id, cache.generation()).older(None, 1000)


def feed_keys(reader: User) -> list[str]:
    return [item.key for item in home_feed(reader=reader, cursor=Cursor()).items]


def reference_keys(reader: User) -> list[str]:
    return pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=settings.FEED_PAGE_SIZE)


@pytest.mark.django_db(transaction=True)
def test_a_post_made_on_the_site_reaches_every_follower_through_a_real_worker(
    client,
    real_queue,  # noqa: F811
):
    worker = real_queue.start_worker()
    now = timezone.now()
    author = UserFactory(last_active_at=now)
    followers = [UserFactory(last_active_at=now) for _ in range(3)]
    stranger = UserFactory(last_active_at=now)
    for follower in followers:
        follow(follower=follower, followee=author)
    real_queue.wait_for_drain()  # the follows' backfills ran in the worker
    for reader in [*followers, stranger]:
        assert feed_keys(reader) == []  # builds the inbox and fills its cache
        assert cached_keys(reader.pk) == []

    client.force_login(author)
    response = client.post("/posts/new/", {"text": "hello from the site"})

    assert response.status_code == 302
    post = Post.objects.get(author=author)
    fan_out = wait_until(
        lambda: FanOut.objects.filter(pk=post.pk, finished_at__isnull=False).first(),
        what="the worker to finish the fan-out",
        timeout=DRAIN_SECONDS,
    )
    assert fan_out.mode == FanOut.Mode.PUSH
    assert fan_out.recipients == len(followers)
    log = worker.log()
    assert "timelines.fan_out_post[" in log and "succeeded" in log
    assert "timelines.fan_out_chunk[" in log
    for follower in followers:
        assert InboxEntry.objects.filter(reader_id=follower.pk, timeline_key=post.timeline_key)
        assert cached_keys(follower.pk) == [post.timeline_key]
        assert feed_keys(follower) == [post.timeline_key] == reference_keys(follower)
    assert not InboxEntry.objects.filter(reader_id=stranger.pk).exists()
    assert cached_keys(stranger.pk) == []
    assert feed_keys(stranger) == [] == reference_keys(stranger)


CHUNK = 50
FOLLOWERS = 1000  # 20 chunks of 50
BLOCKED_CHUNKS = (7, 8)  # one per worker process: both stop inside a chunk


def make_followers(author: User, count: int) -> tuple[list[int], set[int]]:
    """``count`` followers of ``author`` in bulk, in follower-id (chunk) order.

    Every 25th has no kept inbox (no InboxState: never here, or away and
    released by the sweep): no push may reach it. Returns (all follower ids in
    order, the ids of those a push must reach).
    """
    now = timezone.now()
    tag = uuid.uuid4().hex[:6]
    users = User.objects.bulk_create(
        [User(username=f"f{tag}_{n}", password="!", last_active_at=now) for n in range(count)]
    )
    ids = sorted(user.pk for user in users)
    Follower.objects.bulk_create(
        [Follower(user_id=author.pk, follower_id=pk, created_at=now) for pk in ids]
    )
    Followee.objects.bulk_create(
        [Followee(user_id=pk, followee_id=author.pk, created_at=now) for pk in ids]
    )
    User.objects.filter(pk=author.pk).update(followers_count=count)
    User.objects.filter(pk__in=ids).update(following_count=1)
    kept = [pk for n, pk in enumerate(ids) if n % 25 != 0]
    InboxState.objects.bulk_create([InboxState(reader_id=pk, built_at=now) for pk in kept])
    return ids, set(kept)


_WAITING_ON_LOCKS = "FROM {view} WHERE datname = %s AND wait_event_type = 'Lock'"


def backends_waiting_on_locks(database: str) -> int:
    """Sessions of ``database`` queued on a row lock. On Citus the row is on a
    worker node and the session queued there is the coordinator's connection
    to it: citus_stat_activity shows every node's."""
    view = "citus_stat_activity" if sharding.on_citus(connection) else "pg_stat_activity"
    with connection.cursor() as db:
        db.execute("SELECT count(*) " + _WAITING_ON_LOCKS.format(view=view), [database])
        return db.fetchone()[0]


def end_backends_waiting_on_locks(database: str) -> None:
    """Terminate the sessions ``backends_waiting_on_locks`` counts (on every node on
    Citus: a worker node's session would run its statement once the lock goes)."""
    terminate = "SELECT pg_terminate_backend(pid) " + _WAITING_ON_LOCKS.format(
        view="pg_stat_activity"
    )
    with connection.cursor() as db:
        if sharding.on_citus(connection):
            db.execute(
                "SELECT run_command_on_all_nodes(format(%s::text, %s::text))",
                [terminate.replace("%s", "%L"), database],
            )
        else:
            db.execute(terminate, [database])


@pytest.mark.django_db(transaction=True)
def test_killing_the_worker_mid_fan_out_still_delivers_every_key_exactly_once(
    real_queue,  # noqa: F811
):
    """SIGKILL the worker while two chunks are half-way through their INSERT.

    To kill mid-way every time (not only when the timing happens to allow it),
    the test holds, in its own uncommitted transaction, an inbox row of one
    follower in chunk 7 and one in chunk 8: each chunk's INSERT ... ON CONFLICT
    waits on that row, so both worker processes stop inside a chunk, the
    other unacknowledged deliveries are held back by the prefetch limit, and
    chunks 9-19 stay queued. The worker is killed there; the blocking
    transaction is rolled back (it never commits a row); a new worker gets
    chunks 7 and 8 again from the broker's unacked store and the rest from
    the queue.
    """
    author = UserFactory(last_active_at=timezone.now())
    followers, eligible = make_followers(author, FOLLOWERS)
    # Live caches for a spread of eligible readers, including the blocked chunks.
    warm = [pk for n, pk in enumerate(followers) if n % 25 == 2]
    warm += [followers[chunk * CHUNK + 10] for chunk in BLOCKED_CHUNKS]
    for reader in User.objects.filter(pk__in=warm):
        assert feed_keys(reader) == []
        assert cached_keys(reader.pk) == []

    post = create_post(author=author, text="to a thousand followers")  # queued, no worker yet
    blockers = [followers[chunk * CHUNK + 10] for chunk in BLOCKED_CHUNKS]
    assert set(blockers) <= eligible
    database = connection.settings_dict["NAME"]
    locker = psycopg.connect(real_queue.database_url.replace("postgres://", "postgresql://", 1))
    try:
        with locker.cursor() as db:
            for reader_id in blockers:
                db.execute(
                    f"INSERT INTO {InboxEntry._meta.db_table} (reader_id, timeline_key, author_id)"
                    " VALUES (%s, %s, %s)",
                    [reader_id, post.timeline_key, author.pk],
                )
        # The transaction stays open: those two rows are locked, not committed.

        # One message a process, so that the picture at the kill is exact.
        first = real_queue.start_worker(
            FEED_FANOUT_CHUNK=str(CHUNK), CELERY_WORKER_PREFETCH_MULTIPLIER="1"
        )  # an hour to redeliver
        wait_until(
            lambda: backends_waiting_on_locks(database) == len(BLOCKED_CHUNKS),
            what="both worker processes to stop inside chunks 7 and 8",
            timeout=DRAIN_SECONDS,
        )
        time.sleep(0.3)  # let anything else in flight settle before taking the picture
        at_kill = FanOut.objects.get(pk=post.pk)
        delivered_at_kill = InboxEntry.objects.filter(timeline_key=post.timeline_key).count()
        queued_at_kill, unacked_at_kill = real_queue.in_broker()
        first.kill()
        # The killed processes' database sessions are still queued on the
        # locks; end them, then roll the locks back.
        end_backends_waiting_on_locks(database)
        locker.rollback()
    finally:
        locker.close()

    assert at_kill.chunks_total == FOLLOWERS // CHUNK
    assert at_kill.finished_at is None
    assert 0 < at_kill.chunks_done < at_kill.chunks_total, "the kill was not mid fan-out"
    assert 0 < delivered_at_kill < len(eligible)
    assert not InboxEntry.objects.filter(reader_id__in=blockers).exists()
    # Every chunk is done, held by the dying worker, or still queued.
    assert unacked_at_kill == len(BLOCKED_CHUNKS)
    assert at_kill.chunks_done + unacked_at_kill + queued_at_kill == at_kill.chunks_total

    second = real_queue.start_worker(FEED_FANOUT_CHUNK=str(CHUNK), redeliver_after=2)
    wait_until(
        lambda: (
            FanOut.objects.filter(pk=post.pk, finished_at__isnull=False).exists()
            and real_queue.drained()
        ),
        what="the new worker to finish the fan-out and drain the queue",
        timeout=DRAIN_SECONDS,
    )

    assert "timelines.fan_out_chunk[" in second.log()
    rows = InboxEntry.objects.filter(timeline_key=post.timeline_key)
    assert rows.count() == len(eligible)
    assert set(rows.values_list("reader_id", flat=True)) == eligible
    assert not rows.values("reader_id").annotate(n=Count("*")).filter(n__gt=1).exists()
    fan_out = FanOut.objects.get(pk=post.pk)
    assert fan_out.chunks_done == fan_out.chunks_total
    assert fan_out.recipients == len(eligible)
    for reader_id in warm:
        assert cached_keys(reader_id) == [post.timeline_key], reader_id
    for reader in User.objects.filter(pk__in=blockers):
        assert feed_keys(reader) == [post.timeline_key] == reference_keys(reader)
