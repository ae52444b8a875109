"""Fan-out through a real Celery worker process, on the real PostgreSQL and Redis.

Nothing is mocked: the test process publishes to a Redis broker (a
redis-server of the test's own, so neither the cache's FLUSHDB between tests
nor another checkout's test worker can eat the queue), a
``celery worker --pool=prefork`` subprocess consumes it against the test
database, and the test polls the tables until the fan-out is done.

Redelivery after a SIGKILL: with the Redis transport, a message delivered but
not acknowledged (acks_late) waits in the ``unacked`` hash until it is older
than ``visibility_timeout`` (kombu's default: one hour), then a live worker's
periodic sweep puts it back on the queue. The settings have no way to shorten
that from the environment, so the worker is launched through a few lines of
Python that set the transport options, then run the ordinary ``celery worker``
command line (``app.worker_main``).
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
import redis
from django.conf import settings
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from accounts.models import User
from bench.processes import SOON_REDELIVERED, WORKER_BOOTSTRAP
from feed_project import sharding
from feed_project.pagination import Cursor
from posts.models import Post
from posts.services import create_post
from relations.models import Followee, Follower
from relations.services import follow
from tests.factories import UserFactory
from tests.private_redis import broker_at, private_redis
from timelines.home import _cache as cache
from timelines.home import home_feed
from timelines.home._cache import CachedInbox
from timelines.home._models import InboxEntry, InboxState
from timelines.home.pull_model import pull_reference_keys
from timelines.models import FanOut

pytestmark = pytest.mark.worker

BASE_DIR = Path(settings.BASE_DIR)
PYTHON = BASE_DIR / ".venv" / "bin" / "python"
if not PYTHON.exists():
    PYTHON = Path(sys.executable)

READY_SECONDS = 30
DRAIN_SECONDS = 45


def wait_until(predicate: Callable[[], Any], *, what: str, timeout: float) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


def url_of_test_database() -> str:
    """The database pytest-django created (test_<name>), as a DATABASE_URL."""
    db = connection.settings_dict
    credentials = quote(db["USER"] or "postgres", safe="")
    if db["PASSWORD"]:
        credentials += ":" + quote(db["PASSWORD"], safe="")
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or 5432
    return f"postgres://{credentials}@{host}:{port}/{quote(db['NAME'], safe='')}"


@dataclass
class Worker:
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def running(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group: the parent and its prefork children."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL whatever is left of the group."""
        if self.running():
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        self.kill()


@dataclass
class RealQueue:
    """The test process publishes to ``broker_url``; workers started here consume it."""

    broker_url: str
    database_url: str
    log_dir: Path
    workers: list[Worker]

    def broker(self) -> redis.Redis:
        return redis.Redis.from_url(self.broker_url)

    def start_worker(
        self, *options: str, redeliver_after: int | None = None, **environment: str
    ) -> Worker:
        """Start ``celery worker`` (with ``options`` on its command line) and wait until
        it says it is ready.

        ``redeliver_after``: the broker's visibility timeout in seconds for
        this worker (kombu's default, an hour, when None).
        """
        transport = SOON_REDELIVERED | {"visibility_timeout": redeliver_after}
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "feed_project.settings",
            "DATABASE_URL": self.database_url,
            "REDIS_URL": settings.REDIS_URL,
            "CELERY_BROKER_URL": self.broker_url,
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "WORKER_TRANSPORT_OPTIONS": json.dumps(transport if redeliver_after else {}),
            "PYTHONUNBUFFERED": "1",
            **environment,
        }
        name = f"feedtest-{uuid.uuid4().hex[:8]}"
        log_path = self.log_dir / f"{name}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    str(PYTHON),
                    "-c",
                    WORKER_BOOTSTRAP,
                    "--pool=prefork",
                    "--concurrency=2",
                    "-l",
                    "info",
                    "-n",
                    f"{name}@%h",
                    # No cluster chatter: one worker, and start-up without mingle's wait.
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    *options,
                ],
                cwd=BASE_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed as one
            )
        worker = Worker(process, log_path)
        self.workers.append(worker)

        def ready() -> bool:
            if not worker.running():
                raise AssertionError(f"worker exited at start-up:\n{worker.log()[-3000:]}")
            return " ready." in worker.log()

        wait_until(ready, what="the worker to log 'ready'", timeout=READY_SECONDS)
        return worker

    def in_broker(self) -> tuple[int, int]:
        """(messages waiting in the default queue, delivered but unacknowledged)."""
        broker = self.broker()
        return broker.llen("celery"), broker.hlen("unacked")

    def drained(self) -> bool:
        return self.in_broker() == (0, 0)

    def wait_for_drain(self) -> None:
        # Twice, apart: a message between BRPOP and the unacked store is in neither.
        def drained_twice() -> bool:
            if not self.drained():
                return False
            time.sleep(0.2)
            return self.drained()

        wait_until(drained_twice, what="the queue to drain", timeout=DRAIN_SECONDS)


@pytest.fixture
def real_queue(transactional_db, tmp_path, _eager_celery_and_clean_cache) -> Iterator[RealQueue]:
    """Publish for real (not eagerly) to a broker of the test's own; stop every worker after.

    A private redis-server, not a database of the shared one: a worker left
    running by another checkout's run would consume its messages. Requests
    transactional_db so that workers are stopped before the tables are
    flushed, and conftest's autouse fixture so that eager mode is turned off
    after it turned it on.
    """
    with private_redis() as server, broker_at(server.url()):
        queue = RealQueue(
            broker_url=server.url(),
            database_url=url_of_test_database(),
            log_dir=tmp_path,
            workers=[],
        )
        try:
            yield queue
        finally:
            for worker in queue.workers:
                worker.stop()


def cached_keys(reader_id: int) -> list[str] | None:
    """The reader's live Redis cache (newest first), or None when it has none."""
    return CachedInbox(reader_id, cache.generation()).older(None, 1000)


def feed_keys(reader: User) -> list[str]:
    return [item.key for item in home_feed(reader=reader, cursor=Cursor()).items]


def reference_keys(reader: User) -> list[str]:
    return pull_reference_keys(reader_id=reader.pk, cursor=Cursor(), limit=settings.FEED_PAGE_SIZE)


@pytest.mark.django_db(transaction=True)
def test_a_post_made_on_the_site_reaches_every_follower_through_a_real_worker(client, real_queue):
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
def test_killing_the_worker_mid_fan_out_still_delivers_every_key_exactly_once(real_queue):
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
