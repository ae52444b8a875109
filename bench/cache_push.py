"""Time a fan-out chunk's cache push: one key to N live caches (timelines.home._cache.push).

For comparing a single Redis with a Redis Cluster (docs/SCALING.md). Uses the
database and Redis of the environment; empties that Redis (or every master)::

    DATABASE_URL=... REDIS_URL=redis+cluster://127.0.0.1:7000 CELERY_BROKER_URL=... \\
        python -m bench.cache_push [readers] [runs] [entries]

``entries`` is the keys in each cache before the push: 100 like a reader's
first days, 800 (the cap) like an active reader's (the default).
"""

import os
import statistics
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "feed_project.settings")


def main(readers: int, runs: int, entries: int) -> str:
    import django

    django.setup()
    from redis.cluster import RedisCluster

    from timelines.home import _cache as cache

    redis = cache.client()
    if redis is None:
        raise SystemExit("REDIS_URL is not set")
    gen = cache.generation()
    if isinstance(redis, RedisCluster):
        redis.flushall()
    else:
        redis.flushdb()
    keys = [f"0RGN{n:04d}00000G00" for n in reversed(range(entries))]  # newest first
    for reader in range(1, readers + 1):
        redis.rpush(cache.inbox_key(reader, gen), cache.sentinel(redis, reader), *keys)
    times = []
    for run in range(runs + 1):  # the first run loads the scripts: not counted
        key = f"1ZZZ{run:04d}00000G00"
        started = time.perf_counter()
        cache.push(range(1, readers + 1), [key], cap=800)
        times.append(time.perf_counter() - started)
        cache.remove(range(1, readers + 1), [key])
    if cache.generation() != gen:
        raise SystemExit("a push failed (the caches were invalidated): see the log")
    ms = [t * 1000 for t in times[1:]]
    return (
        f"{type(redis).__name__}: push of one key to {readers} live caches of {entries} keys: "
        f"median {statistics.median(ms):.1f} ms, min {min(ms):.1f}, max {max(ms):.1f} "
        f"({runs} runs, load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    args = [int(arg) for arg in sys.argv[1:4]]
    print(main(*(args + [5000, 20, 800][len(args) :])))
