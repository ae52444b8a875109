import logging
import os

import pytest
from django.conf import settings
from django.core.cache import cache
from hypothesis import settings as hypothesis_settings

from feed_project import cache_breaker
from feed_project.celery import app as celery_app
from relations.services import follow
from tests.factories import UserFactory
from timelines.home import _held_posts as held

PASSWORD = "correct-horse-battery"

# CI replays the same examples every run, so a red CI always means a change;
# runs elsewhere keep drawing new ones (and keep the failures they find).
hypothesis_settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.hookimpl(trylast=True)  # after -m has deselected what it will
def pytest_collection_modifyitems(config, items):
    """Tests not marked ``embedded`` talk to PostgreSQL and Redis: refuse to run them
    without both, rather than let them skip or fail obscurely."""
    on_postgresql = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    if on_postgresql and settings.REDIS_URL:
        return
    needing = [item.nodeid for item in items if item.get_closest_marker("embedded") is None]
    if needing:
        raise pytest.UsageError(
            f"{len(needing)} selected tests need PostgreSQL and Redis (DATABASE_URL, "
            "REDIS_URL): run `make test`, or `-m embedded` for the SQLite smoke run."
        )


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Hashing with PBKDF2 costs ~0.5 s a user on this machine; tests don't need it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _eager_celery_and_clean_cache():
    """Tasks run in process (a worker test opts out); each test starts with empty caches,
    Redis's and this process's (timelines.home._held_posts), and no pause of a cache Redis left by
    another test (feed_project.cache_breaker)."""
    celery_app.conf.task_always_eager = True
    cache_breaker.forget_failures()
    cache.clear()
    held.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _every_cache_call_succeeds_on_a_redis_cluster(request, settings, caplog):
    """On a Redis Cluster (make test's second run), a test fails if a cache call failed.

    The site takes a failed cache call for an outage: it logs it and serves the
    page from PostgreSQL, so a script touching keys of two slots (CROSSSLOT)
    would pass every assertion on pages. Tests that break the cache on purpose
    are marked ``cache_outage``.
    """
    yield
    if not settings.REDIS_CLUSTER or request.node.get_closest_marker("cache_outage"):
        return
    failed = [
        record.getMessage()
        for record in caplog.records
        if record.name in ("timelines.home._cache", "django_redis.cache")
        and record.levelno >= logging.WARNING
    ]
    assert not failed, f"cache calls failed on the Redis Cluster: {failed}"


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Post images go to a directory of the test's own (STORAGES["default"])."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", display_name="Alice")


@pytest.fixture
def bob(db, alice, django_capture_on_commit_callbacks):
    """Bob follows Alice."""
    bob = UserFactory(username="bob", display_name="Bob")
    with django_capture_on_commit_callbacks(execute=True):
        follow(follower=bob, followee=alice)
    bob.refresh_from_db()
    return bob


@pytest.fixture
def carol(db):
    """Carol follows nobody and nobody follows her."""
    return UserFactory(username="carol", display_name="Carol")


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client
