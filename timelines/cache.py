"""The Redis adapter beneath ``timelines.inbox``: sorted-set caches of inboxes (seed 001).

One sorted set per reader, every score 0, so members (timeline keys) sort by
their bytes, which is time order: ZREVRANGEBYLEX reads a feed page.

- A sentinel member (``!`` and the server's incarnation, below every key) is
  always present in a cached inbox, so an existing key with nothing else is
  "known empty", and a missing key is "not cached" (seed 001's "no more" flag).
- Keys are ``inbox:{<reader>}:<generation>``; the braces make Redis Cluster put a
  reader's keys in one slot. On a single Redis, a push or removal for many
  readers (a fan-out chunk) is one script call looping over all their keys; on
  a Redis Cluster it is one call per reader, touching that reader's slot only.
  The generation lives in PostgreSQL and is bumped whenever a write to Redis
  fails: caches that missed a write are never read.
- **A Redis that restarts, is restored from a snapshot, or is replaced by a
  lagging replica never serves what it missed.** A restored dataset brings back
  old values of every key, so no key can tell a restored cache from a current
  one. The server itself can: every cache is stamped by its fill with the
  incarnation of the server that holds it (``_INCARNATION``: run_id, new at
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
"""

import logging
import secrets
from collections.abc import Iterable, Sequence
from functools import cache

from django.conf import settings
from django.db.models import F
from redis import Redis
from redis.exceptions import RedisError

from posts import ids
from timelines.models import CacheGeneration

logger = logging.getLogger(__name__)

# The sentinel member starts with "!" and sorts below "!~"; timeline keys
# (0-9A-Z) sort above it, so the scripts' lex ranges of keys start at "(!~".
SENTINEL = "!"
FILL_MARKER_SECONDS = 30

# Shared by every script. The sentinel member of a cache names the incarnation of
# the Redis server that filled it: its run_id (new at every start), its
# replication id (new when it is promoted or resynchronised from a master), and
# the key counts of its last load of a snapshot (changed by an in-place load such
# as DEBUG RELOAD). None of these is in the dataset, so a snapshot restored or
# replicated elsewhere cannot bring them back; a cache whose sentinel names
# another incarnation is deleted the moment any script touches it.
_INCARNATION = """
local function field(info, name)
  return string.match(info, name .. ':([^\\r\\n]*)') or '?'
end
local function incarnation()
  local persistence = redis.call('INFO', 'persistence')
  return '!' .. field(redis.call('INFO', 'server'), 'run_id')
    .. ':' .. field(redis.call('INFO', 'replication'), 'master_replid')
    .. ':' .. field(persistence, 'rdb_last_load_keys_loaded')
    .. ':' .. field(persistence, 'rdb_last_load_keys_expired')
end
local function live(key)
  local first = redis.call('ZRANGE', key, 0, 0)
  if #first == 0 then return false end
  if first[1] == incarnation() then return true end
  redis.call('DEL', key)
  return false
end
"""

# KEYS: inbox, marker. ARGV: cap, members...
_PUSH = """
redis.call('DEL', KEYS[2])
if live(KEYS[1]) then
  for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 0, ARGV[i]) end
  if redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[1]) + 1 then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 1, -(tonumber(ARGV[1]) + 1))
  end
end
return 0
"""
# The same writes for many readers in one call (fan-out's chunk path): KEYS are
# (inbox, marker) pairs, one pair per reader, and the server loops over them.
# The incarnation is read once per call: it cannot change while a script runs,
# so every cache is checked against the same server as one call per reader
# would check it. KEYS: inbox, marker, inbox, marker... ARGV: cap, members...
_PUSH_MANY = """
local now = incarnation()
local cap = tonumber(ARGV[1])
for k = 1, #KEYS, 2 do
  local key = KEYS[k]
  redis.call('DEL', KEYS[k + 1])
  local first = redis.call('ZRANGE', key, 0, 0)
  if #first > 0 then
    if first[1] == now then
      for i = 2, #ARGV do redis.call('ZADD', key, 0, ARGV[i]) end
      if redis.call('ZCARD', key) > cap + 1 then
        redis.call('ZREMRANGEBYRANK', key, 1, -(cap + 1))
      end
    else
      redis.call('DEL', key)
    end
  end
end
return 0
"""
# KEYS: inbox, marker, inbox, marker... ARGV: members...
_REMOVE_MANY = """
local now = incarnation()
for k = 1, #KEYS, 2 do
  local key = KEYS[k]
  redis.call('DEL', KEYS[k + 1])
  local first = redis.call('ZRANGE', key, 0, 0)
  if #first > 0 then
    if first[1] ~= now then
      redis.call('DEL', key)
    elseif #ARGV > 0 then
      redis.call('ZREM', key, unpack(ARGV))
    end
  end
end
return 0
"""
# KEYS: inbox, marker. ARGV: members...
_REMOVE = """
redis.call('DEL', KEYS[2])
if live(KEYS[1]) and #ARGV > 0 then redis.call('ZREM', KEYS[1], unpack(ARGV)) end
return 0
"""
# KEYS: inbox, marker. ARGV: the author part of a timeline key, its first
# position (1-based, from posts.ids.TIMELINE_KEY_AUTHOR).
_REMOVE_AUTHOR = """
redis.call('DEL', KEYS[2])
if not live(KEYS[1]) then return 0 end
local first = tonumber(ARGV[2])
local last = first + #ARGV[1] - 1
local members = redis.call('ZRANGEBYLEX', KEYS[1], '(!~', '+')
for _, member in ipairs(members) do
  if string.sub(member, first, last) == ARGV[1] then redis.call('ZREM', KEYS[1], member) end
end
return 0
"""
# KEYS: inbox, marker. ARGV: token, ttl seconds, members...
_FILL = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2], KEYS[1])
redis.call('ZADD', KEYS[1], 0, incarnation())
for i = 3, #ARGV do redis.call('ZADD', KEYS[1], 0, ARGV[i]) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
# Reads: nil when not cached (or cached by another incarnation).
# KEYS: inbox. ARGV: ttl seconds, high bound, limit.
_OLDER = """
if not live(KEYS[1]) then return false end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], '(!~', 'LIMIT', 0, ARGV[3])
"""
# KEYS: inbox. ARGV: ttl seconds, after, limit. Returns {keys above, 1 if one at or below}.
_NEWER = """
if not live(KEYS[1]) then return false end
redis.call('EXPIRE', KEYS[1], ARGV[1])
local above = redis.call('ZRANGEBYLEX', KEYS[1], '(' .. ARGV[2], '+', 'LIMIT', 0, ARGV[3])
local below = redis.call('ZREVRANGEBYLEX', KEYS[1], '[' .. ARGV[2], '(!~', 'LIMIT', 0, 1)
return {above, #below}
"""
# KEYS: inbox. ARGV: after.
_COUNT_NEWER = """
if not live(KEYS[1]) then return false end
return redis.call('ZLEXCOUNT', KEYS[1], '(' .. ARGV[1], '+')
"""
_SENTINEL_NOW = "return incarnation()"


@cache
def _scripts(client: Redis) -> dict:
    return {
        name: client.register_script(_INCARNATION + source)
        for name, source in (
            ("push", _PUSH),
            ("push_many", _PUSH_MANY),
            ("remove", _REMOVE),
            ("remove_many", _REMOVE_MANY),
            ("remove_author", _REMOVE_AUTHOR),
            ("fill", _FILL),
            ("older", _OLDER),
            ("newer", _NEWER),
            ("count_newer", _COUNT_NEWER),
            ("sentinel", _SENTINEL_NOW),
        )
    }


def client() -> Redis | None:
    if not settings.REDIS_URL:
        return None
    from django_redis import get_redis_connection

    return get_redis_connection("default")


def sentinel(redis: Redis) -> str:
    """The sentinel member a cache filled now on this Redis carries (dev tools fill caches)."""
    return _scripts(redis)["sentinel"]().decode()


def generation() -> int:
    value = CacheGeneration.objects.filter(pk=1).values_list("value", flat=True).first()
    return value or 0


def invalidate_all(reason: str) -> None:
    """A write to Redis failed: no cache written before now may be read again."""
    logger.warning("inbox caches invalidated: %s", reason)
    if not CacheGeneration.objects.filter(pk=1).update(value=F("value") + 1):
        # The row is gone (manage.py flush): recreate it one past the implied 0.
        CacheGeneration.objects.update_or_create(pk=1, defaults={"value": 1})


def inbox_key(reader_id: int, gen: int) -> str:
    """The Redis key of one reader's cached inbox in one generation."""
    return f"inbox:{{{reader_id}}}:{gen}"


def _keys(reader_id: int, gen: int) -> list[str]:
    inbox = inbox_key(reader_id, gen)
    return [inbox, inbox + ":fill"]


def ttl_seconds() -> int:
    return settings.FEED_CACHE_TTL_DAYS * 86400


# Readers per server-side call of a "many" script. One call blocks Redis while
# it runs (~1 us per reader and member): 5,000 readers (FEED_FANOUT_CHUNK) are a
# few ms, a bigger chunk is split into calls of this size in one pipeline.
READERS_PER_CALL = 5000


def _is_cluster(redis: Redis) -> bool:
    from redis.cluster import RedisCluster

    return isinstance(redis, RedisCluster)


def _run_for_readers(script: str, reader_ids: Iterable[int], args: Sequence[str | int]) -> None:
    """Run ``script`` on each reader's keys: one server-side call per READERS_PER_CALL
    readers on a single Redis (the ``<script>_many`` form), one call per reader on a
    Redis Cluster, where a script may touch one slot only (each reader's keys share
    theirs, by the ``{reader}`` hash tag), all in one pipeline (one round trip)."""
    redis = client()
    reader_ids = list(reader_ids)
    if redis is None or not reader_ids:
        return
    gen = generation()  # read after the table commit: see the module docstring
    try:
        pipe = redis.pipeline(transaction=False)
        scripts = _scripts(redis)
        if f"{script}_many" in scripts and not _is_cluster(redis):
            fn = scripts[f"{script}_many"]
            for start in range(0, len(reader_ids), READERS_PER_CALL):
                keys = [
                    key
                    for reader_id in reader_ids[start : start + READERS_PER_CALL]
                    for key in _keys(reader_id, gen)
                ]
                fn(keys=keys, args=list(args), client=pipe)
        else:
            fn = scripts[script]
            for reader_id in reader_ids:
                fn(keys=_keys(reader_id, gen), args=list(args), client=pipe)
        pipe.execute()
    except RedisError as exc:
        invalidate_all(f"{script} for {len(reader_ids)} inboxes failed: {exc}")


def push(reader_ids: Iterable[int], keys: Sequence[str], *, cap: int) -> None:
    """Add timeline keys to the live caches of these readers, trimmed to ``cap``."""
    if keys:
        _run_for_readers("push", reader_ids, [cap, *keys])


def remove(reader_ids: Iterable[int], keys: Sequence[str]) -> None:
    _run_for_readers("remove", reader_ids, list(keys))


def remove_author(reader_id: int, author_id: int) -> None:
    first = ids.TIMELINE_KEY_AUTHOR.start + 1  # Lua counts from 1
    _run_for_readers("remove_author", [reader_id], [ids.author_prefix(author_id), first])


def drop(reader_id: int) -> None:
    """Forget one reader's cache (after a rebuild): the next read refills it."""
    redis = client()
    if redis is None:
        return
    try:
        redis.delete(*_keys(reader_id, generation()))
    except RedisError as exc:
        invalidate_all(f"drop {reader_id} failed: {exc}")


class CachedInbox:
    """Reads of one reader's cached inbox; every method returns None on a miss."""

    def __init__(self, reader_id: int, gen: int) -> None:
        self.reader_id = reader_id
        self.key, self.marker = _keys(reader_id, gen)
        self.redis = client()

    def _read(self, script: str, args: list[str | int]) -> object:
        """One script call (one round trip); None on a miss or an error."""
        try:
            return _scripts(self.redis)[script](keys=[self.key], args=args)
        except RedisError as exc:
            logger.warning("inbox cache read failed: %s", exc)
            return None

    def older(self, before: str | None, limit: int) -> list[str] | None:
        """Up to ``limit`` keys below ``before`` (or the newest), newest first."""
        if self.redis is None:
            return None
        high = f"({before}" if before else "+"
        members = self._read("older", [ttl_seconds(), high, limit])
        return None if members is None else [m.decode() for m in members]

    def newer(self, after: str, limit: int) -> tuple[list[str], bool] | None:
        """Up to ``limit`` keys above ``after``, oldest first, and whether the
        cache reaches down to ``after`` (holds a key at or below it)."""
        if self.redis is None:
            return None
        result = self._read("newer", [ttl_seconds(), after, limit])
        if result is None:
            return None
        members, below = result
        return [m.decode() for m in members], bool(below)

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
        except RedisError:
            return None
        return token

    def finish_fill(self, token: str, keys: Sequence[str]) -> bool:
        """Write the inbox read from the table, unless a writer came in between."""
        try:
            fill = _scripts(self.redis)["fill"]
            return bool(fill(keys=[self.key, self.marker], args=[token, ttl_seconds(), *keys]))
        except RedisError as exc:
            logger.warning("inbox cache fill failed: %s", exc)
            return False
