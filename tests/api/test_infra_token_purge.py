"""Spent authorization codes and ended tokens are purged on Celery beat's schedule."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_grant_model

from api.tasks import clear_expired_tokens
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_purge_is_on_the_beat_schedule():
    entries = settings.CELERY_BEAT_SCHEDULE.values()
    assert any(entry["task"] == clear_expired_tokens.name for entry in entries)


def test_expired_codes_and_tokens_go_and_live_ones_stay(oauth_app):
    user = UserFactory()
    now = timezone.now()

    def grant(code, expires):
        return get_grant_model().objects.create(
            user=user,
            application=oauth_app,
            code=code,
            expires=expires,
            redirect_uri="urn:ietf:wg:oauth:2.0:oob",
            scope="read",
        )

    def token(value, expires):
        return get_access_token_model().objects.create(
            user=user, application=oauth_app, token=value, scope="read", expires=expires
        )

    grant("spent", now - timedelta(minutes=1))
    grant("pending", now + timedelta(minutes=5))
    token("ended", now - timedelta(seconds=1))
    token("live", now + timedelta(days=1))

    clear_expired_tokens.delay()  # the suite's Celery runs tasks in process

    assert list(get_grant_model().objects.values_list("code", flat=True)) == ["pending"]
    assert get_access_token_model().objects.count() == 1
    assert get_access_token_model().objects.get().expires > now
