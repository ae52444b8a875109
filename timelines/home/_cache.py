"""The Redis adapter beneath ``timelines.home._inbox``: list caches of inboxes (seed 001).

One Redis list per reader: a sentinel at index 0, then the reader's timeline
keys, newest first, each once; the scripts (``timelines.home._cache_scripts``) keep it so.

- **Why a list.** A fan-out adds the newest key to tens of thousands of caches
  at once: a list takes it with one LINSERT after the sentinel, whatever the
  cache's length. A sorted set small enough to stay compact (a listpack) scans
  every member to add one, more work than the list's whole push; a large
  one (a skiplist) takes ~100 KB for 800 keys. A list of 800 keys takes ~16 KB
  in Redis's default list encoding (docs/BENCHMARKS.md). Reads halve it by
  index to find a cursor (``_cache_scripts.position``).
- The sentinel (``!`` and the server's incarnation) is always there in a cached
  inbox, so an existing key with nothing else is "known empty", and a missing
  key is "not cached" (seed 001's "no more" flag).
- **Complete above its oldest key**: every post of the inbox newer than the
  cache's oldest key is in the cache, but for deliveries on their way (and at or
  above the table's floor: a fill copies the table, whose entries below the
  floor the reads ignore in the cache as in the table). Trimming
  to the cap at each push cuts the oldest, so that key is the cache's floor, as
  ``InboxState.floor`` is the table's: a push below it is left out (reads pull
  below the oldest key), and a cache that removals leave with no key is deleted,
  having lost its floor.
- Keys are ``inbox:{<reader>}:<generation>:list``; the braces make Redis Cluster put a
  reader's keys in one slot. On a single Redis, a push or removal for many
  readers (a fan-out chunk) is one script call looping over all their keys; on
  a Redis Cluster (``REDIS_URL=redis+cluster://``) a script may touch one slot
  only, so it is one call per reader, sent in one pipeline per master.
  The generation lives in PostgreSQL and is bumped whenever a write to Redis
  fails: caches that missed a write are never read.
- **A Redis that restarts, is restored from a snapshot, or is replaced by a
  lagging replica never serves what it missed.** A restored dataset brings back
  old values of every key, so no key can tell a restored cache from a current
  one. The server itself can: every cache is stamped by its fill with the
  incarnation of the server that holds it (``_cache_scripts.INCARNATION``: run_id, new at
  every start; replication id, new when a server is promoted or resynchronised
  from a master; the key counts of the last snapshot load, changed by an
  in-place load such as ``DEBUG RELOAD``), none of which is in the dataset.
  Every read and write script compares the stamp with the server it runs on
  and deletes a cache of another incarnation, so the page is served from the
  table and the cache refilled. The check runs inside the read's one script
  call (no extra round trip, no PostgreSQL write) and only on the reader's slot,
  so it holds per node of a Redis Cluster.
  Why not a value kept in PostgreSQL: the only value that would catch every
  restore is one changed by every cache write (a per-reader version written
  before each push): a PostgreSQL write per recipient per post. A global epoch
  key checked against PostgreSQL misses a snapshot taken in the current epoch.
  Known gap: an in-place load that brings back exactly as many keys (loaded and
  expired) as the load before it keeps the stamp (``DEBUG`` is off by default
  since Redis 7, and the cache Redis runs without persistence).
- Filling races with writers. A fill first sets a marker with a random token,
  reads the table, then writes only if the marker still holds its token.
  Every writer, after committing to the table, applies its change to the
  cache if the cache exists and deletes the marker, so a fill that may have
  read the table before that commit is dropped rather than written.
- With no REDIS_URL, or with Redis down, every call here is a no-op or a miss,
  and reads are served from the table.
- **A Redis that does not answer costs a process one wait, then a pause**
  (``feed_project.cache_breaker``): for a few seconds every call here is skipped.
  A skipped write is a lost write, so the first one of a pause bumps the
  generation, and the new generation is *held*: encoded in its value (a time
  in milliseconds, ``invalidate_all(held_until=...)``), the end of that pause,
  before which no process reads or fills a cache of it. No cache of it can exist
  while this process still skips writes, so one bump per pause is enough even
  though other processes, whose pause is over, use Redis meanwhile.
"""

import logging
import secrets
import time
from collections.abc import Iterable, Sequence
from functools import cache

from django.conf import settings
from django.db.models import F, PositiveBigIntegerField, Value
from django.db.models.functions import Greatest
from django_redis.exceptions import ConnectionInterrupted
from redis import Redis
from redis.cluster import RedisCluster
from redis.exceptions import (
    AskError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    RedisError,
)

from feed_project import cache_breaker
from posts import ids
from timelines.home import _cache_scripts
from timelines.home._models import CacheGeneration

logger = logging.getLogger(__name__)

# What a call to Redis may raise: redis-py's errors, its cluster client's own
# (not a RedisError: a cross-slot call, no node reachable), and django-redis's
# wrapper for a cluster it cannot reach at all (feed_project.redis_cluster).
ERRORS = (RedisError, RedisClusterException, ConnectionInterrupted)

SENTINEL = "!"  # the sentinel's first character; no timeline key (0-9A-Z) has it
FILL_MARKER_SECONDS = 30


@cache
def _scripts(client: Redis | RedisCluster) -> dict:
    return {
        name: client.register_script(_cache_scripts.INCARNATION + source)
        for name, source in (
            ("push_many", _cache_scripts.PUSH_MANY),
            ("remove_many", _cache_scripts.REMOVE_MANY),
            ("remove_author", _cache_scripts.REMOVE_AUTHOR),
            ("fill", _cache_scripts.FILL),
            ("older", _cache_scripts.OLDER),
            ("newer", _cache_scripts.NEWER),
            ("count_newer", _cache_scripts.COUNT_NEWER),
            ("sentinel", _cache_scripts.SENTINEL_NOW),
        )
    }


def client() -> Redis | RedisCluster | None:
    """The Redis (or Redis Cluster) of the caches; None when none is configured.

    Raises one of ERRORS when a cluster cannot be reached at all.
    """
    if not settings.REDIS_URL:
        return None
    from django_redis import get_redis_connection

    return get_redis_connection("default")


def sentinel(redis: Redis | RedisCluster, reader_id: int = 0) -> str:
    """The sentinel member a cache of this reader filled now carries (dev tools and
    tests fill caches); on a cluster, that of the reader's node."""
    fn = _scripts(redis)["sentinel"]
    return fn(keys=[inbox_key(reader_id, 0)]).decode()


def generation() -> int:
    value = CacheGeneration.objects.filter(pk=1).values_list("value", flat=True).first()
    return value or 0


def invalidate_all(reason: str, *, held_until: float | None = None) -> None:
    """A write to Redis failed: no cache written before now may be read again.

    ``held_until`` (a wall-clock time): no cache of the new generation is read or
    filled before then (``held``); its value is that time in milliseconds, if
    that is above the next one.
    """
    logger.warning("inbox caches invalidated: %s", reason)
    floor = 1 if held_until is None else max(1, int(held_until * 1000))
    # The field on the Value: a bare int is bound as int4, which wraps a time in ms.
    bigint = PositiveBigIntegerField()
    value = Greatest(F("value") + 1, Value(floor, output_field=bigint), output_field=bigint)
    if not CacheGeneration.objects.filter(pk=1).update(value=value):
        # The row is gone (manage.py flush): recreate it past the implied 0.
        CacheGeneration.objects.update_or_create(pk=1, defaults={"value": floor})


def held(gen: int) -> bool:
    """Whether caches of this generation may not be read or filled yet (``invalidate_all``).

    No hold is longer than a pause and the clocks' disagreement: a generation further
    ahead was made by a clock that is wrong, and holding it would leave the caches
    unused until that clock's time comes.
    """
    ahead = gen / 1000 - time.time()
    longest = cache_breaker.PAUSE_SECONDS + 2 * cache_breaker.CLOCK_SKEW_SECONDS
    return 0 < ahead <= longest


def _lost(what: str, exc: Exception) -> None:
    """A write failed, or was skipped during a pause of its Redis: no cache that missed it
    may be read again (the module docstring says why once per pause is enough)."""
    pause = cache_breaker.pause_of(exc)
    if pause is None:
        invalidate_all(f"{what} failed: {exc}")
    elif not pause.lost_writes_noted:
        held_until = pause.ends_at + cache_breaker.CLOCK_SKEW_SECONDS
        invalidate_all(f"{what} failed: {exc}", held_until=held_until)
        pause.lost_writes_noted = True  # after the bump: a failed one is tried again


def key_layout(gen: int) -> tuple[str, str, str]:
    """An inbox key's head and tail around the reader id, and its fill marker's suffix
    (the ``*_many`` scripts build readers' keys from them)."""
    return "inbox:{", f"}}:{gen}:list", ":fill"


def inbox_key(reader_id: int, gen: int) -> str:
    """The Redis key of one reader's cached inbox in one generation."""
    head, tail, _ = key_layout(gen)
    return f"{head}{reader_id}{tail}"


def _keys(reader_id: int, gen: int) -> list[str]:
    inbox = inbox_key(reader_id, gen)
    return [inbox, inbox + key_layout(gen)[2]]


def ttl_seconds() -> int:
    return settings.FEED_CACHE_TTL_DAYS * 86400


# Readers per server-side call of a "many" script. One call blocks Redis while
# it runs, and every page read waits behind it. A fan-out chunk
# (FEED_FANOUT_CHUNK, 10,000) is split into calls of this size in one pipeline:
# larger calls save no CPU a push and hold pages up longer (docs/BENCHMARKS.md
# has the figures).
READERS_PER_CALL = 1000


def _run_for_readers(script: str, reader_ids: Iterable[int], args: Sequence[str | int]) -> None:
    """Run ``script`` on each reader's keys: one server-side call per READERS_PER_CALL
    readers on a single Redis (the ``<script>_many`` form, the readers' ids in one
    argument), in one pipeline (one round trip); on a Redis Cluster, see
    ``_run_on_cluster``."""
    reader_ids = list(reader_ids)
    if not settings.REDIS_URL or not reader_ids:
        return
    gen = generation()  # read after the table commit: see the module docstring
    try:
        redis = client()
        if isinstance(redis, RedisCluster):
            with cache_breaker.guarding(redis):  # the nodes' own clients are not guarded
                _run_on_cluster(redis, script, reader_ids, gen, args)
            return
        pipe = redis.pipeline(transaction=False)
        scripts = _scripts(redis)
        if f"{script}_many" in scripts:
            fn, layout = scripts[f"{script}_many"], key_layout(gen)
            for start in range(0, len(reader_ids), READERS_PER_CALL):
                readers = ",".join(map(str, reader_ids[start : start + READERS_PER_CALL]))
                # "": the script reads the incarnation itself
                fn(keys=[], args=["", *layout, readers, *args], client=pipe)
        else:
            fn = scripts[script]
            for reader_id in reader_ids:
                fn(keys=_keys(reader_id, gen), args=list(args), client=pipe)
        pipe.execute()
    except ERRORS as exc:
        _lost(f"{script} for {len(reader_ids)} inboxes", exc)


def _run_on_cluster(
    redis: RedisCluster, script: str, reader_ids: list[int], gen: int, args: Sequence[str | int]
) -> None:
    """One script call per reader (a script may touch one slot: a reader's keys share
    theirs by the ``{reader}`` hash tag), in one pipeline per master.

    redis-py's cluster pipeline refuses EVALSHA, and EVAL would send the script's
    text with every reader, so the calls are grouped by the master that holds each
    reader's slot and sent through that master's own connection. Each call names
    its reader's keys as KEYS, which route it; the ``*_many`` scripts (given that
    one reader) take the master's incarnation, read once first
    (``_cache_scripts.PUSH_MANY``): two round trips per master. A slot that moved
    meanwhile answers MOVED: the caller counts it a failed write (the caches are
    invalidated), and the slot map is reloaded.
    """
    by_node: dict[str, tuple[Redis, list[int]]] = {}
    for reader_id in reader_ids:
        node = redis.get_node_from_key(inbox_key(reader_id, gen))
        by_node.setdefault(node.name, (redis.get_redis_connection(node), []))[1].append(reader_id)
    try:
        for node_client, node_readers in by_node.values():
            scripts = _scripts(node_client)
            pipe = node_client.pipeline(transaction=False)
            if f"{script}_many" in scripts:
                fn, layout = scripts[f"{script}_many"], key_layout(gen)
                stamp = scripts["sentinel"](keys=[inbox_key(node_readers[0], gen)]).decode()
                for reader_id in node_readers:
                    reader_args = [stamp, *layout, str(reader_id), *args]
                    fn(keys=_keys(reader_id, gen), args=reader_args, client=pipe)
            else:
                fn = scripts[script]
                for reader_id in node_readers:
                    fn(keys=_keys(reader_id, gen), args=list(args), client=pipe)
            pipe.execute()
    except (MovedError, AskError):
        redis.nodes_manager.initialize()
        raise


def push(reader_ids: Iterable[int], keys: Sequence[str], *, cap: int) -> None:
    """Add timeline keys to the live caches of these readers, trimmed to ``cap``; keys
    below a cache's oldest are left out (``_cache_scripts.insert``). Oldest first, so
    that a cache known empty takes them all, each one above the last."""
    if keys:
        _run_for_readers("push", reader_ids, [cap, *sorted(keys)])


def remove(reader_ids: Iterable[int], keys: Sequence[str]) -> None:
    _run_for_readers("remove", reader_ids, list(keys))


def remove_author(reader_id: int, author_id: int) -> None:
    first = ids.TIMELINE_KEY_AUTHOR.start + 1  # Lua counts from 1
    _run_for_readers("remove_author", [reader_id], [ids.author_prefix(author_id), first])


def drop(*reader_ids: int) -> None:
    """Forget these readers' caches (after a rebuild, a release): the next read refills.

    One DEL; on a Redis Cluster, redis-py splits it by slot."""
    redis = client()
    if redis is None or not reader_ids:
        return
    gen = generation()
    try:
        redis.delete(*(key for reader_id in reader_ids for key in _keys(reader_id, gen)))
    except ERRORS as exc:
        _lost(f"drop of {len(reader_ids)} caches", exc)


class CachedInbox:
    """Reads of one reader's cached inbox; every method returns None on a miss."""

    def __init__(self, reader_id: int, gen: int) -> None:
        self.reader_id = reader_id
        self.key, self.marker = _keys(reader_id, gen)
        self.redis = None  # every read a miss
        if held(gen):
            return
        try:
            self.redis = client()
        except ERRORS as exc:  # a cluster that cannot be reached
            if cache_breaker.pause_of(exc) is None:  # else the breaker said so
                logger.warning("inbox cache unreachable: %s", exc)

    def _read(self, script: str, args: list[str | int]) -> object:
        """One script call (one round trip); None on a miss or an error."""
        fn = _scripts(self.redis)[script]
        try:
            try:
                # EVALSHA straight through the client: every page reads here, and
                # redis-py's Script call adds its own Python work around the same command.
                return self.redis.execute_command("EVALSHA", fn.sha, 1, self.key, *args)
            except NoScriptError:
                return fn(keys=[self.key], args=args)  # loads the script, then runs it
        except ERRORS as exc:
            if cache_breaker.pause_of(exc) is None:  # else the breaker said so
                logger.warning("inbox cache read failed: %s", exc)
            return None

    def older(self, before: str | None, limit: int) -> list[str] | None:
        """Up to ``limit`` keys below ``before`` (or the newest), newest first."""
        if self.redis is None:
            return None
        members = self._read("older", [ttl_seconds(), before or "", limit])
        return None if members is None else [m.decode() for m in members]

    def newer(self, after: str, limit: int) -> tuple[list[str], str | None] | None:
        """Up to ``limit`` keys above ``after``, oldest first, and the newest key at or
        below ``after`` (None: the cache does not reach down to it)."""
        if self.redis is None:
            return None
        result = self._read("newer", [ttl_seconds(), after, limit])
        if result is None:
            return None
        members, below = result
        return [m.decode() for m in members], below.decode() or None

    def count_newer(self, after: str, cap: int) -> int | None:
        """How many keys lie above ``after`` (at most ``cap``); None on a miss."""
        if self.redis is None:
            return None
        count = self._read("count_newer", [after])
        return None if count is None else min(int(count), cap)

    def begin_fill(self) -> str | None:
        if self.redis is None:
            return None
        token = secrets.token_hex(8)
        try:
            self.redis.set(self.marker, token, ex=FILL_MARKER_SECONDS)
        except ERRORS:
            return None
        return token

    def finish_fill(self, token: str, keys: Sequence[str]) -> bool:
        """Write the inbox read from the table (``keys`` newest first), unless a writer
        came in between."""
        try:
            fill = _scripts(self.redis)["fill"]
            return bool(fill(keys=[self.key, self.marker], args=[token, ttl_seconds(), *keys]))
        except ERRORS as exc:
            if cache_breaker.pause_of(exc) is None:  # else the breaker said so
                logger.warning("inbox cache fill failed: %s", exc)
            return False
