"""One policy for queueing a Celery task whose broker may be down.

Every app queues its work the same way: ``delay``, and if the broker cannot
take the message (it refuses, is down, or does not answer within
SERVICE_TIMEOUT_SECONDS: ``FailFastTask`` raises kombu's OperationalError for
all three), the caller has said beforehand what happens instead:

- ``RUN_HERE``: run the task in this process now (mail, erasures). The
  change that asked for it is committed either way; its work must not depend
  on the broker being up. The run raises what the task raises
  (``CELERY_TASK_EAGER_PROPAGATES``), as ``apply`` always did here.
- ``RUN_HERE_OR_SWEEP``: run it here too (the outbox's deliveries), but a
  failure is logged, not raised: the task's row is its to-do list and the
  sweep runs it again, so the request whose change is already committed is
  not answered with an error (a deadlock with a worker, say).
- ``LEAVE_TO_SWEEP``: do nothing more, because the work's own rows are its
  to-do list and a periodic sweep queues the task again (posts' discarded
  images). Nothing waits in the request for work that can wait.

Either way one warning line says which task the broker refused and why.
"""

import enum
import logging
from typing import Any

from celery import Task
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

# What a publish raises when the broker cannot take the message: kombu's error
# (FailFastTask turns the transports' own into it), or the socket's.
BROKER_ERRORS = (OperationalError, ConnectionError, OSError)


class IfRefused(enum.Enum):
    """What to do with a task the broker would not take."""

    RUN_HERE = "running it in process"
    RUN_HERE_OR_SWEEP = "running it in process, its sweep retrying a failure"
    LEAVE_TO_SWEEP = "leaving it to its sweep"


RUN_HERE = IfRefused.RUN_HERE
RUN_HERE_OR_SWEEP = IfRefused.RUN_HERE_OR_SWEEP
LEAVE_TO_SWEEP = IfRefused.LEAVE_TO_SWEEP


def enqueue(task: Task, *args: Any, if_refused: IfRefused) -> None:
    """Queue ``task(*args)``; if the broker cannot take it, do what ``if_refused`` says."""
    try:
        task.delay(*args)
    except BROKER_ERRORS as exc:
        # Not the arguments: a mail task's are addresses, which logs should not keep.
        logger.warning("broker refused %s (%s): %s", task.name, exc, if_refused.value)
        if if_refused is LEAVE_TO_SWEEP:
            return
        try:
            task.apply(args=args, throw=True)
        except Exception:
            if if_refused is RUN_HERE:
                raise
            logger.exception("%s failed in process; its sweep runs it again", task.name)


def enqueue_on_commit(task: Task, *args: Any, if_refused: IfRefused) -> None:
    """``enqueue`` once the current transaction commits. Robust: the request's work is
    committed by then, so a failure is logged (by Django), never raised into it."""

    def queue() -> None:
        enqueue(task, *args, if_refused=if_refused)

    # A function, not a partial: Django's robust hook logs a failure by the callback's
    # __qualname__, which a partial lacks (the log call itself would then raise).
    queue.__qualname__ = f"enqueue of {task.name}"
    transaction.on_commit(queue, robust=True)
