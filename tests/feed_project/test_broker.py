"""A real worker rides out its Redis broker going away (feed_project.broker).

The worker holds a task when the broker is killed, and is in BRPOP for the
next one: the state in which Celery's own consumer, closing the lost
connection twice, stopped with "Unrecoverable error". The broker stays down
for a while, as one restarted on a long append-only file does: Celery's own
consumer would try again 2, 6 and 12 s after the loss.
"""

import time
from collections.abc import Iterator

import pytest
from django.conf import settings

from feed_project.celery import app
from tests.private_redis import PrivateRedis, broker_at, private_redis
from tests.timelines.test_worker import RealQueue, url_of_test_database, wait_until

pytestmark = pytest.mark.worker

DOWN_SECONDS = 6.5
# The consumer tries every second at most: found back within this long, where
# Celery's own schedule would find it 5.5 s after.
BACK_WITHIN_SECONDS = 4.0


@pytest.fixture
def broker(
    transactional_db, tmp_path, _eager_celery_and_clean_cache
) -> Iterator[tuple[PrivateRedis, RealQueue]]:
    with private_redis() as server, broker_at(server.url()):
        queue = RealQueue(server.url(), url_of_test_database(), tmp_path, [])
        try:
            yield server, queue
        finally:
            for worker in queue.workers:
                worker.stop()


def test_a_worker_holding_a_task_when_its_broker_dies_reconnects_soon_and_goes_on(broker, tmp_path):
    server, queue = broker
    worker = queue.start_worker("--include", "tests.worker_tasks")
    release = tmp_path / "release"
    app.send_task("tests.hold_until", args=[str(release)])
    wait_until(lambda: queue.in_broker() == (0, 1), what="the task to be delivered", timeout=30)

    server.restart(down_for=DOWN_SECONDS)
    back = time.monotonic()
    wait_until(
        lambda: worker.log().count("Connected to redis") == 2 or not worker.running(),
        what="the worker to reconnect",
        timeout=30,
    )
    reconnected_after = time.monotonic() - back
    assert worker.running(), worker.log()[-3000:]
    assert reconnected_after < BACK_WITHIN_SECONDS, worker.log()[-3000:]

    # The held task ends on the lost connection: its acknowledgement fails, and
    # the worker goes on (the message is handed out again after the visibility
    # timeout; every task of the site's may run twice).
    release.touch()
    app.send_task("tests.hold_until", args=[str(release)])
    wait_until(
        lambda: worker.log().count("succeeded") == 2 or not worker.running(),
        what="both tasks to finish",
        timeout=settings.SERVICE_TIMEOUT_SECONDS * 10,
    )
    assert worker.running(), worker.log()[-3000:]
    assert "Unrecoverable error" not in worker.log()
