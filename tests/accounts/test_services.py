from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings

from accounts.models import User
from accounts.services import refresh_last_active
from accounts.signals import last_active_refreshed

INTERVAL = timedelta(seconds=settings.ACCOUNTS_LAST_ACTIVE_INTERVAL_SECONDS)
NOON = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def refreshes():
    """Every last_active_refreshed signal, as (user_id, previous)."""
    sent: list[tuple[int, datetime | None]] = []

    def record(sender, user_id, previous, **kwargs):
        sent.append((user_id, previous))

    last_active_refreshed.connect(record, dispatch_uid="test-record-last-active")
    yield sent
    last_active_refreshed.disconnect(dispatch_uid="test-record-last-active")


def stored_last_active(user: User) -> datetime | None:
    return User.objects.values_list("last_active_at", flat=True).get(pk=user.pk)


def test_the_first_visit_is_recorded_and_announced_with_no_previous_value(
    alice, refreshes, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        assert refresh_last_active(user=alice, now=NOON)
    assert stored_last_active(alice) == NOON
    assert refreshes == [(alice.pk, None)]


def test_visits_within_the_interval_write_nothing_and_send_nothing(
    alice, refreshes, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        refresh_last_active(user=alice, now=NOON)
        assert not refresh_last_active(user=alice, now=NOON + INTERVAL / 2)
        assert not refresh_last_active(user=alice, now=NOON + INTERVAL - timedelta(seconds=1))
    assert stored_last_active(alice) == NOON
    assert refreshes == [(alice.pk, None)]


def test_a_visit_after_the_interval_is_recorded_with_the_previous_value(
    alice, refreshes, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        refresh_last_active(user=alice, now=NOON)
        assert refresh_last_active(user=alice, now=NOON + INTERVAL)
    assert stored_last_active(alice) == NOON + INTERVAL
    assert refreshes == [(alice.pk, None), (alice.pk, NOON)]


def test_two_requests_with_the_same_stale_user_write_once(
    alice, refreshes, django_capture_on_commit_callbacks
):
    """Two requests loaded the user before either wrote: only the first one writes."""
    first, second = User.objects.get(pk=alice.pk), User.objects.get(pk=alice.pk)
    with django_capture_on_commit_callbacks(execute=True):
        assert refresh_last_active(user=first, now=NOON)
        assert not refresh_last_active(user=second, now=NOON + timedelta(seconds=1))
    assert stored_last_active(alice) == NOON
    assert refreshes == [(alice.pk, None)]


def test_the_signal_waits_for_the_commit(alice, refreshes, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        refresh_last_active(user=alice, now=NOON)
    assert refreshes == []
    for callback in callbacks:
        callback()
    assert refreshes == [(alice.pk, None)]
