"""A frozen cache Redis costs a process one bounded wait, then a pause in which every user of
the cache skips it (feed_project.cache_breaker), and it is used again after.

Each test starts a redis-server of its own (tests/private_redis.py) and
freezes it with SIGSTOP: connecting succeeds (the kernel accepts) and no call
is answered. The site's cache is pointed at it; the pause is shortened to a
second (``short_pause``) so that waiting it out is quick. The inbox caches'
side is in tests/timelines/test_outages.py.
"""

import copy
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import override_settings
from redis.exceptions import ConnectionError

from feed_project import cache_breaker
from tests.private_redis import PrivateRedis, private_redis

pytestmark = pytest.mark.cache_outage

ONE_WAIT = settings.CACHES["default"].get("OPTIONS", {}).get("SOCKET_TIMEOUT", 0.0)
NO_WAIT = ONE_WAIT / 2
PAUSE_SECONDS = 1.0


@pytest.fixture
def own_redis(monkeypatch) -> Iterator[PrivateRedis]:
    monkeypatch.setattr(cache_breaker, "PAUSE_SECONDS", PAUSE_SECONDS)
    with private_redis() as server:
        caches = copy.deepcopy(settings.CACHES)
        caches["default"]["LOCATION"] = server.url()
        with override_settings(REDIS_URL=server.url(), CACHES=caches):
            yield server


def timed(call):
    started = time.monotonic()
    result = call()
    return time.monotonic() - started, result


def wait_out_the_pause() -> None:
    until = max([pause.until for pause in cache_breaker._pauses.values()], default=0.0)
    time.sleep(max(0.0, until - time.monotonic()))


def test_the_django_cache_waits_once_then_skips_the_server_until_the_pause_is_over(
    own_redis, caplog
):
    cache.set("kept", 1)

    with own_redis.frozen_for_a_while():
        waited, value = timed(lambda: cache.get("kept"))
        calls = [
            timed(lambda: cache.get("kept")),
            timed(lambda: cache.add("counter", 0, 60)),
            timed(lambda: cache.incr("counter")),
            timed(lambda: cache.set("other", 2)),
        ]

    assert value is None and ONE_WAIT * 0.9 <= waited < ONE_WAIT + 0.5, waited
    assert all(elapsed < NO_WAIT for elapsed, _ in calls), calls
    assert not any(result for _, result in calls)  # misses, nothing written
    assert cache.get("kept") is None  # answering again, but the pause is not over
    assert own_redis.client().get(cache.make_key("other")) is None
    wait_out_the_pause()
    assert cache.get("kept") == 1  # used again
    ignored = [r for r in caplog.records if r.name == "django_redis.cache"]
    assert len(ignored) == 1  # the wait; the skipped calls are not logged one by one


@pytest.mark.django_db
def test_rate_limited_posts_with_the_cache_frozen_wait_once_and_are_let_through(
    own_redis, alice_client, settings
):
    settings.RATELIMIT_ENABLED = True
    settings.RATELIMIT_RATES = {**settings.RATELIMIT_RATES, "post": ("2/m", "")}

    with own_redis.frozen_for_a_while():
        answers = [
            timed(lambda n=n: alice_client.post("/posts/new/", {"text": f"n{n}"})) for n in range(4)
        ]

    (first, _), *later = answers
    assert first < ONE_WAIT + 1.0, first
    assert all(elapsed < NO_WAIT + 0.3 for elapsed, _ in later), [e for e, _ in later]
    assert [response.status_code for _, response in answers] == [302] * 4  # limits fail open
    wait_out_the_pause()
    statuses = [alice_client.post("/posts/new/", {"text": f"m{n}"}).status_code for n in range(3)]
    assert statuses == [302, 302, 429]  # counted in Redis again


@pytest.mark.django_db
def test_healthz_asks_the_server_itself_during_a_pause(own_redis, client):
    with own_redis.frozen_for_a_while():
        assert cache.get("anything") is None  # the wait: the pause begins
        frozen = client.get("/healthz")
    thawed = client.get("/healthz")

    assert frozen.status_code == 503 and frozen.json()["redis"] == "failed"
    assert thawed.status_code == 200 and thawed.json()["redis"] == "ok"
    assert cache_breaker._pauses  # the site's own calls are still paused


def test_a_server_that_refuses_connections_is_paused_too(own_redis):
    from django_redis import get_redis_connection

    own_redis.process.kill()
    own_redis.process.wait()

    assert cache.get("anything") is None  # refused: the pause begins
    with pytest.raises(cache_breaker.CacheSkipped):
        get_redis_connection("default").ping()
    with cache_breaker.bypassed(), pytest.raises(ConnectionError) as refused:
        get_redis_connection("default").ping()
    assert not isinstance(refused.value, cache_breaker.CacheSkipped)
