"""A circuit breaker for the cache Redis, per process and server: one bounded wait, then a pause.

A Redis that accepts connections but never answers (frozen, a paused VM, a
black-holed network) costs each call the client's socket timeout
(settings: a third of SERVICE_TIMEOUT_SECONDS), and a page makes several
calls, a post many more. So after a call to a server fails with a connection
error or a timeout, every call to that server from this process fails at once
for PAUSE_SECONDS, with ``CacheSkipped`` (a redis-py ``ConnectionError``, which
every caller already takes for an outage: a miss, a write lost); then the next
call tries the server again. Publishing to the broker pauses the same way
(``feed_project.celery.FailFastTask``).

Every client of the cache Redis is one of these: django-redis builds
``GuardedRedis`` (settings: ``CACHES`` OPTIONS ``REDIS_CLIENT_CLASS``), or
``GuardedRedisCluster`` for a cluster (``feed_project.redis_cluster``), so the
Django cache (rate limits, throttles) and the inbox caches, which take their
client from django-redis, honour it; ``timelines.home._cache`` wraps the calls it
sends to a cluster's nodes itself in ``guarding``.

A write skipped is a write lost, and others may fill caches meanwhile (their
pause may be over, or never began). ``timelines.home._cache`` therefore bumps the
cache generation at the first write a pause loses (``Pause.lost_writes_noted``),
and holds the new generation back from every process until the pause is over
(``Pause.ends_at``, plus CLOCK_SKEW_SECONDS): no cache of it can exist while
this process still skips writes, so one bump per pause is enough.

``/healthz`` checks the server for real (``bypassed``): a load balancer must see
it answer again as soon as it does.
"""

import contextvars
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from redis import Redis
from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

# Long enough that a frozen server costs a busy process one wait every few
# seconds, short enough that the cache is back soon after the server is.
PAUSE_SECONDS = 5.0
# How far the clocks of the site's machines may disagree: a generation is held
# back this much longer than the pause that made it.
CLOCK_SKEW_SECONDS = 1.0

# What a server that is down or does not answer raises (redis-py turns socket
# errors into these). A server that answers with an error has not failed.
_WAITED = (RedisConnectionError, RedisTimeoutError, OSError)


class Pause:
    """One pause of one server in this process."""

    def __init__(self, key: str, seconds: float) -> None:
        self.key = key
        self.until = time.monotonic() + seconds
        self.ends_at = time.time() + seconds  # the same moment by the wall clock, for others
        # Set once the writes this pause loses are accounted for (timelines.home._cache):
        # after that step succeeds, so that a failed one is tried at the next loss.
        self.lost_writes_noted = False

    def over(self) -> bool:
        return time.monotonic() >= self.until


class CacheSkipped(RedisConnectionError):
    """The server failed less than PAUSE_SECONDS ago: the call was not sent."""

    def __init__(self, pause: Pause) -> None:
        super().__init__(
            f"cache Redis {pause.key} failed less than {PAUSE_SECONDS:g} s ago: not trying it"
        )
        self.cache_pause = pause


_pauses: dict[str, Pause] = {}
_lock = threading.Lock()
_bypass: contextvars.ContextVar[bool] = contextvars.ContextVar("cache_breaker", default=False)


def _trip(key: str, exc: BaseException) -> Pause:
    with _lock:
        pause = _pauses.get(key)
        if pause is None or pause.over():
            pause = _pauses[key] = Pause(key, PAUSE_SECONDS)
            logger.warning("cache Redis %s failed, not used for %g s: %s", key, PAUSE_SECONDS, exc)
    return pause


def _check(key: str) -> None:
    """Raise CacheSkipped during the server's pause; forget a pause that is over."""
    pause = _pauses.get(key)
    if pause is None or _bypass.get():
        return
    if not pause.over():
        raise CacheSkipped(pause)
    with _lock:
        if _pauses.get(key) is pause:
            del _pauses[key]  # over: this call tries the server again


def _call(key: str, call: Any, *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)`` to the server ``key``, refused during its pause; a
    failure starts one. A function, not ``guarded``: every page's cache reads pass
    here, and a generator's context manager costs them more than the check."""
    if _pauses:
        _check(key)
    try:
        return call(*args, **kwargs)
    except CacheSkipped:
        raise
    except _WAITED as exc:
        exc.cache_pause = _trip(key, exc)  # type: ignore[union-attr]  # for pause_of
        raise


@contextmanager
def guarded(key: str) -> Iterator[None]:
    """Calls to the server ``key`` in a block: refused at once during its pause; a
    failure starts one."""
    if _pauses:
        _check(key)
    try:
        yield
    except CacheSkipped:
        raise
    except _WAITED as exc:
        exc.cache_pause = _trip(key, exc)  # type: ignore[union-attr]  # for pause_of
        raise


@contextmanager
def guarding(client: Any) -> Iterator[None]:
    """``guarded`` by the server of a Guarded client; no guard for another client."""
    key = getattr(client, "breaker_key", None)
    if key is None:
        yield
        return
    with guarded(key):
        yield


@contextmanager
def bypassed() -> Iterator[None]:
    """Calls made in this block are sent even during a pause (health checks)."""
    token = _bypass.set(True)
    try:
        yield
    finally:
        _bypass.reset(token)


def pause_of(exc: BaseException | None) -> Pause | None:
    """The pause a failed call started or was skipped by (the exception, or what it was
    raised from: django-redis wraps them), else None."""
    for _ in range(5):
        if exc is None:
            return None
        pause = getattr(exc, "cache_pause", None)
        if pause is not None:
            return pause
        exc = exc.__cause__ or exc.__context__
    return None


def forget_failures() -> None:
    """Try every server again at the next call (tests that stop or move one)."""
    with _lock:
        _pauses.clear()


def _execute_guarded(pipe: Any, key: str) -> Any:
    """A pipeline whose ``execute`` is guarded by the server ``key``. The method is
    replaced on the instance, so the pipeline keeps its class (redis-py's scripts
    check ``isinstance(client, Pipeline)`` to load themselves in it)."""
    execute = pipe.execute

    def guarded_execute(raise_on_error: bool = True) -> Any:
        return _call(key, execute, raise_on_error)

    pipe.execute = guarded_execute
    return pipe


class GuardedRedis(Redis):
    """redis-py's client, every command and pipeline guarded by its server's breaker."""

    @cached_property
    def breaker_key(self) -> str:
        kwargs = self.connection_pool.connection_kwargs
        path = kwargs.get("path")
        return f"unix:{path}" if path else f"{kwargs.get('host')}:{kwargs.get('port')}"

    def execute_command(self, *args: Any, **options: Any) -> Any:
        return _call(self.breaker_key, super().execute_command, *args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        return _execute_guarded(super().pipeline(transaction, shard_hint), self.breaker_key)


class GuardedRedisCluster(RedisCluster):
    """redis-py's cluster client, guarded as one server (``breaker_key``: its URL).

    A node that fails pauses the whole cluster for this process: the pages are
    served from PostgreSQL for a few seconds, the simplest state to be right in.
    """

    def __init__(self, *args: Any, breaker_key: str, **kwargs: Any) -> None:
        self.breaker_key = breaker_key
        super().__init__(*args, **kwargs)

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        return _call(self.breaker_key, super().execute_command, *args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        return _execute_guarded(super().pipeline(transaction, shard_hint), self.breaker_key)


class QuietSkips(logging.Filter):
    """Drops django-redis's "Exception ignored" records for calls skipped by a pause
    (the failure that started it is logged once, above)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        for _ in range(5):
            if exc is None:
                return True
            if isinstance(exc, CacheSkipped):
                return False
            exc = exc.__cause__ or exc.__context__
        return True
