"""System checks of the cache Redis (``manage.py check``; migrate and runserver run them).

A cached inbox is a sorted set of up to FEED_INBOX_CAP keys plus its sentinel.
Redis keeps a sorted set in its compact listpack encoding (~20 bytes a key)
only while it has at most ``zset-max-listpack-entries`` members of at most
``zset-max-listpack-value`` bytes; past either, it converts it to a skiplist
(~120 bytes a key: an 800-key inbox takes ~100 KB instead of ~16 KB,
docs/BENCHMARKS.md). The server's defaults, 128 and 64, fit the members but not
the count, so the operator sets the first to the cap + 1 or more (README).
"""

from typing import Any

from django.core import checks
from redis import Redis
from redis.cluster import RedisCluster

from timelines import cache, inbox

MEMBER_BYTES = 17  # a timeline key, 16; the sentinel, "!" and 16 hex digits


def _servers(redis: Redis | RedisCluster) -> list[Redis]:
    if isinstance(redis, RedisCluster):
        return [redis.get_redis_connection(node) for node in redis.get_primaries()]
    return [redis]


def register() -> None:
    checks.register(check_compact_inbox_caches, checks.Tags.caches)


def check_compact_inbox_caches(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    entries = inbox.cap() + 1
    try:
        redis = cache.client()
        if redis is None:
            return []
        messages = []
        for server in _servers(redis):
            config = server.config_get("zset-max-listpack-*")
            limits = [int(config[f"zset-max-listpack-{name}"]) for name in ("entries", "value")]
            if limits[0] < entries or limits[1] < MEMBER_BYTES:
                where = server.get_connection_kwargs()
                messages.append(
                    checks.Warning(
                        f"The cache Redis at {where.get('host')}:{where.get('port')} keeps "
                        f"sorted sets of more than {limits[0]} members (or members over "
                        f"{limits[1]} bytes) as skiplists: a cached inbox of "
                        f"{entries - 1} keys then takes ~6x the memory.",
                        hint=f"Set zset-max-listpack-entries {max(entries, 1024)} (and "
                        f"zset-max-listpack-value at least {MEMBER_BYTES}) in its redis.conf "
                        "or with CONFIG SET.",
                        id="timelines.W001",
                    )
                )
        return messages
    except (*cache.ERRORS, KeyError, ValueError) as exc:
        return [
            checks.Warning(
                f"Could not read the cache Redis's listpack limits ({exc!r}); a cached inbox "
                "is compact only if zset-max-listpack-entries exceeds FEED_INBOX_CAP.",
                id="timelines.W002",
            )
        ]
