"""The feed invariant under faults: the queue is a real one, and it misbehaves.

``test_feed_invariant`` runs every task the moment it is queued. Here tasks are
published for real, to Celery's in-memory transport, and wait there: each step
of the machine may deliver one of them (in order or not), deliver it and keep
it for a second delivery (a redelivered message), lose it (a broker restarted
empty: the sweeper must find the work in the outbox), kill it half-way (a
worker SIGKILLed: the statements it had committed stay, an open transaction
rolls back, nothing after the kill runs, and the message is redelivered or
lost), run the trim sweep while deliveries are late, flush the cache, or
restart "the worker" (the process forgets what it held). Only when the machine
checks the feeds does the queue drain: every message delivered, then the sweep
until the outbox is empty. Then every feed must equal the pull model's.
"""

from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection
from django.test import override_settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from feed_project.celery import app as celery_app
from tests.private_redis import broker_at
from tests.timelines.conftest import machine_settings
from tests.timelines.test_feed_invariant import FeedMachine
from timelines import fanout
from timelines.home import _held_posts as held
from timelines.home import _state as opening
from timelines.models import FanOut, PendingTask
from timelines.tasks import sweep_undelivered, trim_inboxes

BROKER = "memory://localhost/"
TRIM = "timelines.trim_inboxes"


class Killed(BaseException):
    """The worker died: not an error any code may catch and carry on from."""


class Queue:
    """The messages published to the in-memory broker, taken off it as they arrive:
    (task name, args) in the order they were queued."""

    def __init__(self) -> None:
        self.connection = celery_app.connection_for_read(BROKER)
        self.queue = self.connection.SimpleQueue(celery_app.conf.task_default_queue, no_ack=True)
        self.waiting: list[tuple[str, tuple[Any, ...]]] = []

    def take(self) -> list[tuple[str, tuple[Any, ...]]]:
        while True:
            try:
                message = self.queue.get(block=False)
            except self.queue.Empty:
                return self.waiting
            args, _kwargs, _embed = message.decode()
            self.waiting.append((message.headers["task"], tuple(args)))

    def pop(self, index: int) -> tuple[str, tuple[Any, ...]] | None:
        waiting = self.take()
        return waiting.pop(index % len(waiting)) if waiting else None

    def pop_task(self, task: str) -> tuple[str, tuple[Any, ...]]:
        """The first waiting message of ``task``."""
        message = next(m for m in self.take() if m[0] == task)
        self.waiting.remove(message)
        return message

    def close(self) -> None:
        self.queue.close()
        self.connection.release()


@contextmanager
def killed_after(statements: int):
    """Let ``statements`` SQL statements run, then kill the task at the next one
    (and at every one after it: a dead worker runs no ``finally`` block's SQL)."""
    count = 0

    def execute(run, sql, params, many, context):
        nonlocal count
        count += 1
        if count > statements:
            raise Killed(sql)
        return run(sql, params, many, context)

    with connection.execute_wrapper(execute):
        yield


def run(task: str, args: tuple[Any, ...]) -> None:
    celery_app.tasks[task].apply(args=args, throw=True)


class FaultyFeedMachine(FeedMachine):
    def __init__(self) -> None:
        super().__init__()
        self.broker = Queue()
        self.broker.take().clear()  # a message an earlier example left behind

    def delivered(self, post_id: str) -> None:
        """Not checked here: a follow's backfill that runs after the post (as a late
        one does) writes the author's posts whatever their level, and the read
        drops what the reader may not see. ``test_feed_invariant`` checks each
        post's push the moment it is made."""

    def settle(self) -> None:
        """Every message delivered, then the sweep, until nothing is left anywhere."""
        for _ in range(50):
            self.deliver_waiting()
            if not (
                PendingTask.objects.exists()
                or FanOut.objects.filter(finished_at__isnull=True).exists()
            ):
                break
            self.sweep()
        else:
            raise AssertionError("the outbox did not drain")

    def deliver_waiting(self) -> None:
        """Every message, in the order queued, and what they queue."""
        while (message := self.broker.pop(0)) is not None:
            run(*message)

    @rule(index=st.integers(min_value=0, max_value=20), again=st.booleans())
    def deliver(self, index: int, again: bool) -> None:
        """A message delivered, the oldest or any other; ``again``: it will be
        delivered once more (a worker that died before acknowledging it)."""
        message = self.broker.pop(index)
        if message is not None:
            run(*message)
            if again:
                self.broker.waiting.append(message)

    @rule(index=st.integers(min_value=0, max_value=20))
    def lose(self, index: int) -> None:
        """A message lost with the broker: only the outbox remembers the work."""
        self.broker.pop(index)

    @rule(
        index=st.integers(min_value=0, max_value=20),
        statements=st.integers(min_value=0, max_value=12),
        redelivered=st.booleans(),
    )
    def kill(self, index: int, statements: int, redelivered: bool) -> None:
        """The worker SIGKILLed in the middle of a task."""
        message = self.broker.pop(index)
        if message is None:
            return
        try:
            with killed_after(statements):
                run(*message)
        except Killed:
            connection.close()  # its session, its locks and its transaction die with it
        if redelivered:
            self.broker.waiting.append(message)

    @rule()
    def sweep(self) -> None:
        """The sweeper, as if every row in the outbox were overdue."""
        with override_settings(FEED_SWEEP_AFTER_SECONDS=-1):
            sweep_undelivered()

    @rule()
    def restart_worker(self) -> None:
        """A new process: nothing held from before (posts, the generation seen)."""
        held.clear()
        opening._seen.clear()
        opening._pulled_seen.clear()

    @rule()
    def trim_sweep(self) -> None:
        """The beat's trim sweep, each batch run as it is queued, while every other
        message waits: trims while deliveries are late."""
        trim_inboxes()
        while True:
            trims = [m for m in self.broker.take() if m[0] == TRIM]
            if not trims:
                return
            for message in trims:
                self.broker.waiting.remove(message)
                run(*message)

    @precondition(lambda self: False)
    @rule()
    def come_back_after_a_week(self) -> None:
        """Not drawn here: ``test_feed_invariant`` covers it with a queue that drains."""

    def teardown(self) -> None:
        try:
            super().teardown()
        finally:
            self.broker.close()


def a_follower_and_an_author(machine: FaultyFeedMachine) -> tuple[int, int]:
    """Two people, the first following the second, each with a post, inboxes of 4
    entries, the queue drained."""
    reader, author = machine.world(
        people=2,
        locked=[False] * 4,
        follows=[True] + [False] * 11,
        big=3,
        scanned=5,
        cap=4,
        muting=[None] * 4,
        first_posts=[("public", [], "hello", "")] * 4,
        reposting=[False] * 4,
    ).values
    machine.settle()
    return reader, author


@pytest.mark.django_db(transaction=True)
def test_home_feed_equals_pull_model_after_any_history_of_faults(feed_limits):
    with broker_at(BROKER):
        run_state_machine_as_test(
            FaultyFeedMachine,
            settings=machine_settings(examples=60, steps=30),
        )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("twice", [True, False], ids=["delivered-again", "delivered-late"])
def test_a_chunk_delivered_after_a_trim_leaves_no_gap(feed_limits, twice):
    """The histories the soak found: a fan-out chunk delivered once newer posts and a
    trim have cut its post out of the inbox, either again (a killed worker's message,
    handed out once more after the visibility timeout: it must write nothing) or for
    the first time (a message stuck behind a backlog: its entry lands below the
    floor, and the reads must ignore it)."""
    with broker_at(BROKER):
        machine = FaultyFeedMachine()
        _, author = a_follower_and_an_author(machine)
        machine.post(author, None, "public", [], "hello", "")
        run(*machine.broker.pop_task(fanout.FAN_OUT_POST))
        chunk = machine.broker.pop_task(fanout.FAN_OUT_CHUNK)
        if twice:
            run(*chunk)
        newer = [machine.post(author, None, "public", [], "hello", "") for _ in range(5)]
        machine.deliver_waiting()  # and no sweep yet: the chunk is late
        machine.trim_sweep()
        run(*chunk)
        # A deletion brings the late entry among the newest the cap reads, and the
        # cache (which trims itself at the push) is no help once flushed.
        machine.delete(newer[-1])
        machine.deliver_waiting()
        machine.flush_redis()
        machine.teardown()


@pytest.mark.django_db(transaction=True)
def test_a_chunk_delivered_late_into_a_cache_left_short_leaves_no_gap(feed_limits):
    """The soak's later history: a cache trimmed itself to the cap at each push (the
    posts around a late chunk's post cut off its bottom), a deletion left it short
    of the cap, and then the late chunk arrived: put below the cache's oldest key,
    its post posed as the bottom of a complete cache, the trimmed posts missing."""
    with broker_at(BROKER):
        machine = FaultyFeedMachine()
        reader, author = a_follower_and_an_author(machine)
        machine.read_first_page(reader)  # the reader's cache is live
        machine.post(author, None, "public", [], "hello", "")
        run(*machine.broker.pop_task(fanout.FAN_OUT_POST))
        chunk = machine.broker.pop_task(fanout.FAN_OUT_CHUNK)  # late
        newer = [machine.post(author, None, "public", [], "hello", "") for _ in range(5)]
        machine.deliver_waiting()  # each push trims the cache to the cap
        machine.delete(newer[-1])
        machine.deliver_waiting()  # and the deletion leaves it one short
        run(*chunk)
        machine.teardown()
