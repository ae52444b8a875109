"""A real Celery worker for tests: a broker of the test's own and ``celery worker``
processes consuming it against the test database, with nothing mocked.

The test process (and pytest-django's live server, a thread of it) publishes to a
private redis-server, so neither the cache's FLUSHDB between tests nor another
checkout's test worker can eat the queue; ``RealQueue.start_worker`` runs a
``celery worker --pool=prefork`` subprocess on it, and ``wait_for_drain`` waits
until every message is consumed and acknowledged. ``real_queue`` is the fixture
that sets this up and stops every worker before the tables are flushed.

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

import pytest
import redis
from django.conf import settings
from django.db import connection

from bench.processes import SOON_REDELIVERED, WORKER_BOOTSTRAP
from tests.private_redis import broker_at, private_redis

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


def start_site_worker(queue: RealQueue) -> Worker:
    """A worker for a live-server test: the settings it reads from the environment set to
    what this test changed (the inbox's cap, where media go), as a deployment sets both
    the site's and the worker's alike."""
    return queue.start_worker(
        FEED_INBOX_CAP=str(settings.FEED_INBOX_CAP), MEDIA_ROOT=str(settings.MEDIA_ROOT)
    )
