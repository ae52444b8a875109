"""The Celery app: JSON only, configured from Django settings (CELERY_*)."""

import os
import time
from typing import Any

from amqp.exceptions import AMQPError, MessageNacked
from celery import Celery, Task
from celery.signals import task_postrun, task_prerun
from kombu.exceptions import OperationalError

from feed_project.broker import use_redis_transport

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")

# After a publish fails, publishing in this process gives up at once for this
# long, then one publish tries the broker again. A hung broker costs each
# attempt SERVICE_TIMEOUT_SECONDS, and one post queues several tasks (fan-out,
# one per chunk of followers, notifications): without this pause a post by an
# author with 100,000 followers would wait out twenty timeouts in its request.
BROKER_PAUSE_SECONDS = 5.0

_failing_until: dict[str, float] = {}  # broker URL -> monotonic time


class FailFastTask(Task):
    """A task whose ``delay``/``apply_async`` fails at once while its broker is known to fail.

    The error is kombu's OperationalError, as for a broker that refuses, so
    callers' fallback (feed_project.queueing: run the task in process, or leave
    it to its sweep) handles both alike. RabbitMQ's own refusals (a publish nacked under publisher
    confirms, a channel closed by the broker) are raised as OperationalError too.
    """

    def apply_async(self, *args: Any, **kwargs: Any) -> Any:
        if self.app.conf.task_always_eager:
            return super().apply_async(*args, **kwargs)
        broker = str(self.app.conf.broker_url)
        if _failing_until.get(broker, 0.0) > time.monotonic():
            raise OperationalError(
                f"the broker failed less than {BROKER_PAUSE_SECONDS:g} s ago: not trying it"
            )
        try:
            return super().apply_async(*args, **kwargs)
        except (OperationalError, OSError):
            _failing_until[broker] = time.monotonic() + BROKER_PAUSE_SECONDS
            raise
        except (AMQPError, MessageNacked) as exc:
            _failing_until[broker] = time.monotonic() + BROKER_PAUSE_SECONDS
            raise OperationalError(f"the broker refused the message: {exc!r}") from exc


def forget_broker_failures() -> None:
    """Try the broker again at the next publish (tests that move or restart it)."""
    _failing_until.clear()


use_redis_transport()
app = Celery("feed_project", task_cls=FailFastTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
if not app.conf.broker_url:
    # No broker (the embedded default: tasks run eagerly). Celery still takes a
    # producer for each task, and kombu's default, amqp with no host, logs "No
    # hostname was supplied" every time; the in-memory transport has nothing to warn.
    app.conf.broker_url = "memory://localhost/"
app.autodiscover_tasks()


@task_prerun.connect(dispatch_uid="feed_project.celery.reuse_db_connections_before")
@task_postrun.connect(dispatch_uid="feed_project.celery.reuse_db_connections_after")
def _close_old_db_connections(sender: Task | None = None, **kwargs: Any) -> None:
    """Around every task in a worker, what Django does around every request.

    The fix-up's own close is off (CELERY_DB_REUSE_MAX in settings), so a worker
    process keeps its connection across tasks. That is safe because this closes
    a connection past CONN_MAX_AGE, one whose transaction state a task left
    changed (autocommit off, an atomic block still open), or one that raised and
    no longer answers; and with CONN_HEALTH_CHECKS on, the first query of the
    next task pings a reused connection and reconnects if the server dropped
    it (a restart, an idle timeout). Each prefork child has its own connection:
    the fix-up closes the parent's inherited one when a child starts.
    Eager tasks run inside a request or a test: their connection is the caller's.
    """
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
