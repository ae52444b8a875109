"""The one policy for queueing a task whose broker cannot take it (feed_project.queueing),
with a stand-in task: no broker, no database."""

import logging

import pytest
from kombu.exceptions import OperationalError

from feed_project import queueing

pytestmark = pytest.mark.embedded


class StandIn:
    """What queueing uses of a Celery task: its name, ``delay`` and ``apply``."""

    name = "feedtest.stand_in"

    def __init__(self, *, refusal: Exception | None = None, failure: Exception | None = None):
        self.refusal, self.failure = refusal, failure
        self.queued: list[tuple] = []
        self.ran: list[tuple] = []

    def delay(self, *args):
        if self.refusal is not None:
            raise self.refusal
        self.queued.append(args)

    def apply(self, *, args, throw):
        assert throw  # a failure here is the caller's, as CELERY_TASK_EAGER_PROPAGATES makes it
        self.ran.append(tuple(args))
        if self.failure is not None:
            raise self.failure


def test_a_task_the_broker_takes_is_only_queued(caplog):
    task = StandIn()
    for if_refused in queueing.IfRefused:
        queueing.enqueue(task, 1, "A", if_refused=if_refused)
    assert (task.queued, task.ran, caplog.records) == ([(1, "A")] * len(queueing.IfRefused), [], [])


@pytest.mark.parametrize(
    "refusal", [OperationalError("refused"), ConnectionRefusedError(), TimeoutError()]
)
def test_a_refused_task_runs_here_or_is_left_to_its_sweep(refusal, caplog):
    with caplog.at_level(logging.WARNING, logger="feed_project.queueing"):
        here, swept = StandIn(refusal=refusal), StandIn(refusal=refusal)
        queueing.enqueue(here, 7, if_refused=queueing.RUN_HERE)
        queueing.enqueue(swept, 7, if_refused=queueing.LEAVE_TO_SWEEP)
    assert (here.ran, swept.ran) == ([(7,)], [])
    assert [record.getMessage().split(" (")[0] for record in caplog.records] == [
        "broker refused feedtest.stand_in"
    ] * 2
    assert caplog.records[0].getMessage().endswith("running it in process")
    assert caplog.records[1].getMessage().endswith("leaving it to its sweep")


def test_what_the_task_raises_in_process_is_the_callers():
    task = StandIn(refusal=OperationalError("down"), failure=ValueError("it failed"))
    with pytest.raises(ValueError, match="it failed"):
        queueing.enqueue(task, 1, if_refused=queueing.RUN_HERE)


def test_an_error_that_is_no_broker_s_is_raised_as_it_is():
    task = StandIn(refusal=TypeError("not JSON"))
    with pytest.raises(TypeError):
        queueing.enqueue(task, object(), if_refused=queueing.LEAVE_TO_SWEEP)
    assert task.ran == []


@pytest.mark.django_db
def test_on_commit_it_queues_after_the_commit_and_never_raises_into_it(
    django_capture_on_commit_callbacks, caplog
):
    task = StandIn(refusal=OperationalError("down"), failure=ValueError("it failed"))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        queueing.enqueue_on_commit(task, 3, if_refused=queueing.RUN_HERE)
    assert task.ran == []  # nothing before the commit
    with django_capture_on_commit_callbacks(execute=True):
        queueing.enqueue_on_commit(task, 3, if_refused=queueing.RUN_HERE)
    assert task.ran == [(3,)] and len(callbacks) == 1
    assert "Error calling enqueue of feedtest.stand_in" in caplog.text  # Django logged it
    assert "it failed" in caplog.text


def test_run_here_or_sweep_logs_a_failure_and_leaves_it_to_the_sweep(caplog):
    """The outbox's policy: its change is committed and its row stays, so a run here that
    fails (a deadlock with a worker) must not fail the request."""
    task = StandIn(refusal=OperationalError("down"), failure=ValueError("it failed"))
    with caplog.at_level(logging.WARNING, logger="feed_project.queueing"):
        queueing.enqueue(task, 5, if_refused=queueing.RUN_HERE_OR_SWEEP)
    assert task.ran == [(5,)]
    assert (
        caplog.records[-1].getMessage()
        == "feedtest.stand_in failed in process; its sweep runs it again"
    )
    assert caplog.records[-1].exc_info[0] is ValueError
