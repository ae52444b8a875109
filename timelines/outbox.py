"""The outbox: every task a committed change needs is a row written with the change.

A change that must reach someone's inbox or notifications (a follow, a mute,
a delete, a like, a chunk of a fan-out, a rebuild request) calls ``record``
inside its transaction: the ``PendingTask`` row commits or rolls back with the
change, and the task is queued once it commits. The task (an ``OutboxTask``,
``timelines.tasks``) deletes the row when it has done the work. A row left
behind (the message was lost with a broker, the worker died, the broker
refused and the fallback failed) is queued again by the sweeper after
FEED_SWEEP_AFTER_SECONDS. Tasks are idempotent, so running one twice is safe.

A row is a Celery call: the task's name and its arguments as JSON (ids and
numbers only, as every task takes). Its owner (the shard key) comes from one
argument named by the task: a user id, or a post id, whose author owns it.
"""

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from celery import Task
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from feed_project import queueing
from feed_project.celery import app
from posts import ids
from timelines.models import PendingTask

# Rows queued again by one sweep: the oldest first, the rest at the next.
SWEEP_BATCH = 1000
# Each sending by the sweep doubles the wait before the next, up to 2**this times
# FEED_SWEEP_AFTER_SECONDS (``due``).
SWEEP_BACKOFF_STEPS = 4


def enqueue(task: Task, *args: Any) -> None:
    """Queue a task; if the broker cannot take it, run it here instead.

    The change that asked for it is committed either way: delivery must not
    depend on the broker being up, and a run here that fails leaves the row to
    the sweeper, never an error to the request.
    """
    queueing.enqueue(task, *args, if_refused=queueing.RUN_HERE_OR_SWEEP)


def send(task: str, *args: Any) -> None:
    """Queue the task of this name (``enqueue``)."""
    enqueue(app.tasks[task], *args)


def owner_of(value: int | str) -> int:
    """The user a task argument names: a user id, or a post id's author."""
    return value if isinstance(value, int) else ids.parse_post_id(value).author


@dataclass(frozen=True)
class Call:
    """One call of a task: its row's key."""

    task: str
    args: tuple[Any, ...]
    owner: int

    @classmethod
    def of(cls, task: Task | str, args: tuple[Any, ...]) -> "Call":
        task = app.tasks[task] if isinstance(task, str) else task
        return cls(task.name, tuple(args), owner_of(args[task.owner_arg]))

    @property
    def encoded_args(self) -> str:
        return encode(self.args)

    def row(self) -> Any:
        return PendingTask.objects.filter(owner=self.owner, task=self.task, args=self.encoded_args)


def encode(args: tuple[Any, ...] | list[Any]) -> str:
    return json.dumps(list(args), separators=(",", ":"))


_RECORD_SQL = """
INSERT INTO {table} (owner, task, args, changed_at, version) VALUES (%s, %s, %s, %s, 1)
ON CONFLICT (owner, task, args)
DO UPDATE SET changed_at = excluded.changed_at, version = {table}.version + 1, sweeps = 0
"""


def record(task: Task | str, *args: Any) -> None:
    """Record a call of ``task`` in the current transaction; queue it once that commits.

    Recorded again while pending, the row's version goes up (see ``running``).
    """
    call = Call.of(task, args)
    with connection.cursor() as db:
        db.execute(
            _RECORD_SQL.format(table=PendingTask._meta.db_table),
            [call.owner, call.task, call.encoded_args, timezone.now()],
        )
    transaction.on_commit(partial(send, call.task, *call.args))


class Claim:
    """A recorded call about to run: ``finish`` deletes its row once the work is done,
    unless the call was recorded again meanwhile (a change made while it ran: that
    change's own message, or the sweeper, runs the task once more)."""

    def __init__(self, task: Task | str, args: tuple[Any, ...]) -> None:
        self.call = Call.of(task, args)
        # Read before the work, so that any change recorded after it bumps the version.
        self.version = self.call.row().values_list("version", flat=True).first()

    def finish(self) -> bool:
        """Whether this run took the call out of the outbox (False: done before, or again)."""
        if self.version is None:
            return False
        deleted, _ = self.call.row().filter(version=self.version).delete()
        return bool(deleted)


def pending_for(owner: int) -> bool:
    """Whether any call owned by ``owner`` is pending (a change of theirs on its way)."""
    return PendingTask.objects.filter(owner=owner).exists()


def pending_with_prefix(task: str, owner: int, *first_args: Any) -> bool:
    """Whether a call of ``task`` for ``owner`` whose arguments start so is pending."""
    prefix = encode(first_args)[:-1] + ","
    return PendingTask.objects.filter(owner=owner, task=task, args__startswith=prefix).exists()


def due(*, sent_at: datetime, sweeps: int, older_than: timedelta, now: datetime) -> bool:
    """Whether work sent at ``sent_at`` and not done is to be sent again now.

    The first time after ``older_than`` (FEED_SWEEP_AFTER_SECONDS), then after
    twice as long as the wait before, up to 2**SWEEP_BACKOFF_STEPS times it: the
    sweep cannot tell a lost message from one still waiting in a long queue, and
    sending each waiting one again at every interval would grow the queue faster
    than the workers drain it.
    """
    return sent_at < now - older_than * 2 ** min(sweeps, SWEEP_BACKOFF_STEPS)


def left_behind(*, older_than: timedelta) -> list[tuple[str, list[Any]]]:
    """Calls due to be sent again (``due``), oldest first: (task, args).

    Their ``changed_at`` moves to now and their ``sweeps`` count goes up.
    Crosses every owner: one of the few queries that touch every shard.
    """
    now = timezone.now()
    rows = [
        (owner, task, args)
        for owner, task, args, changed_at, sweeps in PendingTask.objects.filter(
            changed_at__lt=now - older_than
        )
        .order_by("changed_at")
        .values_list("owner", "task", "args", "changed_at", "sweeps")[:SWEEP_BATCH]
        if due(sent_at=changed_at, sweeps=sweeps, older_than=older_than, now=now)
    ]
    PendingTask.objects.filter(pk__in=rows).update(changed_at=now, sweeps=F("sweeps") + 1)
    return [(task, json.loads(args)) for _, task, args in rows]
