"""A worker keeps its database connection across tasks, under Django's request rules."""

import pytest
from celery.fixups.django import DjangoWorkerFixup
from celery.signals import task_postrun, task_prerun
from django.db import connection

from feed_project.celery import app
from timelines.tasks import fan_out_chunk

pytestmark = pytest.mark.django_db(transaction=True)


def around_a_task() -> None:
    """What a worker runs around one (non-eager) task: the fix-up's hooks and the signals."""
    fixup = DjangoWorkerFixup(app)
    fixup.on_task_prerun(sender=fan_out_chunk)
    task_prerun.send(sender=fan_out_chunk, task_id="t", task=fan_out_chunk, args=(), kwargs={})
    fixup.on_task_postrun(sender=fan_out_chunk)
    task_postrun.send(sender=fan_out_chunk, task_id="t", task=fan_out_chunk, args=(), kwargs={})


def test_the_connection_outlives_a_task():
    connection.ensure_connection()
    before = connection.connection
    around_a_task()
    assert connection.connection is before


def test_a_connection_past_its_max_age_is_closed_after_a_task(settings):
    connection.ensure_connection()
    connection.close_at = 0  # as if CONN_MAX_AGE had passed
    around_a_task()
    assert connection.connection is None
