"""Health of the services the site needs: PostgreSQL, the Redis cache, the Celery broker.

``/healthz`` answers load balancers: 200 and ``{"database": "ok", ...}``
when every configured service answers, else 503 naming the one that failed.
``manage.py doctor`` prints the same checks with their latency and why one
failed. A service that is not configured (no REDIS_URL, no broker) is not
checked. Every check is bounded by the clients' timeouts
(SERVICE_TIMEOUT_SECONDS), so a hung service makes the answer a 503 in
seconds, never a hang or a 500.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from feed_project.cache_breaker import bypassed
from feed_project.celery import app as celery_app
from feed_project.http import answers_json


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    seconds: float
    error: str = ""  # for the operator (doctor); /healthz does not show it


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def check_redis() -> None:
    from django_redis import get_redis_connection
    from redis.cluster import RedisCluster

    # The cache ignores its errors (IGNORE_EXCEPTIONS); its raw client does not. A
    # check asks the server even while the site's calls to it are paused.
    with bypassed():
        redis = get_redis_connection("default")
        if isinstance(redis, RedisCluster):
            redis.ping(target_nodes=RedisCluster.PRIMARIES)  # each master holds readers' caches
        else:
            redis.ping()


def check_broker() -> None:
    # A connection of its own, not one from the publishers' pool: the check
    # must see the broker as a new publish would, and leave the pool alone.
    with celery_app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=0)


def configured_checks() -> dict[str, Callable[[], None]]:
    checks: dict[str, Callable[[], None]] = {"database": check_database}
    if settings.REDIS_URL:
        checks["redis"] = check_redis
    if settings.CELERY_BROKER_URL:
        checks["broker"] = check_broker
    return checks


def run_checks() -> list[Result]:
    """Run every configured check; a check that raises has failed, nothing propagates."""
    results = []
    for name, check in configured_checks().items():
        started = time.monotonic()
        try:
            check()
        except Exception as exc:
            error = f"{exc.__class__.__name__}: {exc}"
            results.append(Result(name, False, time.monotonic() - started, error))
        else:
            results.append(Result(name, True, time.monotonic() - started))
    return results


@answers_json
@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when every configured service answers, else 503; the body names each one's state."""
    results = run_checks()
    body = {result.name: "ok" if result.ok else "failed" for result in results}
    status = 200 if all(result.ok for result in results) else 503
    return JsonResponse(body, status=status)
