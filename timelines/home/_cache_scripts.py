"""The Lua scripts of ``timelines.home._cache``: each runs on one reader's keys (one slot),
except the ``*_many`` forms, which loop over many readers' keys on a single Redis
(on a Redis Cluster they are called with one reader each).

A cached inbox is a Redis list: the sentinel at index 0, then the timeline keys,
newest first, each once. Why a list and not a sorted set, and why the scripts
do what they do (the sentinel, the incarnation stamp, the fill marker), is in
``timelines.home._cache``'s docstring.
"""

# Shared by every script. The sentinel of a cache names the incarnation of the
# Redis server that filled it: its run_id (new at every start), its replication
# id (new when it is promoted or resynchronised from a master), and the key
# counts of its last load of a snapshot (changed by an in-place load such as
# DEBUG RELOAD), hashed to 16 hex digits (64 bits). None of these is in the
# dataset, so a snapshot restored or replicated elsewhere cannot bring them
# back; a cache whose sentinel names another incarnation is deleted the moment
# any script touches it.
#
# Keys are compared by their bytes (``below``): Lua's ``<`` on strings follows
# the server's collation locale, which Redis takes from its environment. It
# reads eight bytes a side per string.byte call (a byte a call was two calls for
# each byte two keys share), and constant arguments of redis.call are strings
# (Lua formats a number with snprintf("%.14g") first), so a pushed reader costs
# Redis fewer instructions (bench.redis_instructions counts them).
# ``position`` finds a bound in the list with one LPOS (a scan in C), else
# halves the list by LINDEX: about ten O(1)-ish reads for 800 keys, where
# copying the list into Lua would copy all 800. ``field`` finds its line by a
# plain search: a pattern is tried at every offset of INFO's text, which made it
# the costliest part of a read.
INCARNATION = """
local function field(info, name)
  local _, at = string.find(info, '\\n' .. name .. ':', 1, true)
  if not at then return '?' end
  return string.sub(info, at + 1, (string.find(info, '\\r', at + 1, true) or 0) - 1)
end
local function incarnation()
  local persistence = redis.call('INFO', 'persistence')
  return '!' .. string.sub(redis.sha1hex(field(redis.call('INFO', 'server'), 'run_id')
    .. ':' .. field(redis.call('INFO', 'replication'), 'master_replid')
    .. ':' .. field(persistence, 'rdb_last_load_keys_loaded')
    .. ':' .. field(persistence, 'rdb_last_load_keys_expired')), 1, 16)
end
local function live(key)
  local first = redis.call('LINDEX', key, '0')
  if not first then return false end
  if first == incarnation() then return true end
  redis.call('DEL', key)
  return false
end
local function below(a, b)
  if a == b then return false end
  local i = 1
  while true do
    local a1, a2, a3, a4, a5, a6, a7, a8 = string.byte(a, i, i + 7)
    local b1, b2, b3, b4, b5, b6, b7, b8 = string.byte(b, i, i + 7)
    if a1 ~= b1 then return (a1 or -1) < (b1 or -1) end
    if a2 ~= b2 then return (a2 or -1) < (b2 or -1) end
    if a3 ~= b3 then return (a3 or -1) < (b3 or -1) end
    if a4 ~= b4 then return (a4 or -1) < (b4 or -1) end
    if a5 ~= b5 then return (a5 or -1) < (b5 or -1) end
    if a6 ~= b6 then return (a6 or -1) < (b6 or -1) end
    if a7 ~= b7 then return (a7 or -1) < (b7 or -1) end
    if a8 ~= b8 then return (a8 or -1) < (b8 or -1) end
    i = i + 8
  end
end
-- The first index (from 1) whose key is below ``bound``, or at or below it when
-- ``inclusive``: the list's length when there is none. A bound in the list (a
-- page's cursor, as a rule) is found by one LPOS.
local function position(key, bound, inclusive)
  local at = redis.call('LPOS', key, bound)
  if at and at > 0 then return inclusive and at or at + 1 end
  local low, high = 1, redis.call('LLEN', key)
  while low < high do
    local middle = math.floor((low + high) / 2)
    local member = redis.call('LINDEX', key, middle)
    if below(member, bound) or (inclusive and member == bound) then
      high = middle
    else
      low = middle + 1
    end
  end
  return low
end
-- Put each of ``members`` in its place unless it is there, then keep the newest
-- ``cap``. A fan-out's key is almost always the newest: one LINSERT after the
-- sentinel (``stamp``), found at once. A cache vouches for what lies above its
-- oldest key only (what the trim to the cap cut off lies below it), so a member
-- below that key is left out, as the table leaves out what lies below its floor:
-- put there, a late delivery or a backfill would pose as the bottom of a
-- complete cache, the posts trimmed off above it missing. Reads pull below the
-- oldest key.
local function insert(key, stamp, members, cap)
  local length = 0
  for _, member in ipairs(members) do
    local newest = redis.call('LINDEX', key, '1')
    if not newest or below(newest, member) then
      length = redis.call('LINSERT', key, 'AFTER', stamp, member)
    elseif newest ~= member then
      local there = redis.call('LINDEX', key, position(key, member, true))
      if there and there ~= member then
        length = redis.call('LINSERT', key, 'BEFORE', there, member)
      end
    end
  end
  if length > cap + 1 then redis.call('LTRIM', key, '0', cap) end
end
-- After ``removed`` removals: a cache they left with no key no longer knows how
-- far down it vouched (a push would make its key the bottom, with what was
-- trimmed off above it missing), so it goes, and the next read fills it from
-- the table. A cache filled empty, from an empty inbox, vouches for everything.
local function forget_if_emptied(key, removed)
  if removed > 0 and redis.call('LLEN', key) == 1 then redis.call('DEL', key) end
end
-- The walk of the ``*_many`` scripts, whose ARGV start: incarnation or "", the
-- key's head, tail and marker suffix, the readers' ids. Each reader's fill marker
-- goes, a cache of another incarnation goes, and ``apply`` gets each live key.
local function each_reader(apply)
  local now = ARGV[1] ~= '' and ARGV[1] or incarnation()
  local head, tail, suffix = ARGV[2], ARGV[3], ARGV[4]
  for reader in string.gmatch(ARGV[5], '%d+') do
    local key = head .. reader .. tail
    redis.call('DEL', key .. suffix)
    local first = redis.call('LINDEX', key, '0')
    if first == now then
      apply(key, now)
    elseif first then
      redis.call('DEL', key)
    end
  end
end
"""

# The writes of a fan-out chunk: many readers in one call. The readers come as
# one argument, their ids in a string ("1,2,3" or "{1,2,3}"), and the script
# builds each reader's keys from the head and tail of the inbox key around the
# id and the marker's suffix (``_cache.key_layout``). 10,000 readers as 20,000
# KEYS cost the worker CPU to build and send; the server builds the
# keys in about the instructions it took to parse them. A single Redis lets a
# script touch keys it was not given. On a Redis Cluster a script reaches only
# its own node's keys, and a slot may move to another node: the caller sends
# one reader a call, with that reader's keys as KEYS, which route it
# (cache._run_on_cluster).
# The incarnation is read once per call: it cannot change while a script runs,
# so every cache is checked against the same server as one call per reader
# would check it. On a Redis Cluster the caller reads it once per master and
# passes it (ARGV[1], "" to read it here): the three INFO calls are most of a
# one-reader call's cost. A stamp read a moment before is safe for writes: a
# push into a cache restored meanwhile leaves its old sentinel, which the next
# read finds and deletes.
# ARGV: (each_reader's), cap, members...
PUSH_MANY = """
local cap = tonumber(ARGV[6])
local members = {unpack(ARGV, 7)}
each_reader(function(key, now) insert(key, now, members, cap) end)
return 0
"""
# ARGV: (each_reader's), members...
REMOVE_MANY = """
each_reader(function(key)
  local removed = 0
  for i = 6, #ARGV do removed = removed + redis.call('LREM', key, '1', ARGV[i]) end
  forget_if_emptied(key, removed)
end)
return 0
"""
# KEYS: inbox, marker. ARGV: the author part of a timeline key, its first
# position (1-based, from posts.ids.TIMELINE_KEY_AUTHOR).
REMOVE_AUTHOR = """
redis.call('DEL', KEYS[2])
if not live(KEYS[1]) then return 0 end
local first = tonumber(ARGV[2])
local last = first + #ARGV[1] - 1
local removed = 0
for _, member in ipairs(redis.call('LRANGE', KEYS[1], '1', '-1')) do
  if string.sub(member, first, last) == ARGV[1] then
    removed = removed + redis.call('LREM', KEYS[1], '1', member)
  end
end
forget_if_emptied(KEYS[1], removed)
return 0
"""
# KEYS: inbox, marker. ARGV: token, ttl seconds, members newest first...
FILL = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2], KEYS[1])
redis.call('RPUSH', KEYS[1], incarnation())
for i = 3, #ARGV, 500 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 499, #ARGV)))
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
# Reads: nil when not cached (or cached by another incarnation).
# KEYS: inbox. ARGV: ttl seconds, before ("" for the newest), limit.
OLDER = """
if not live(KEYS[1]) then return false end
redis.call('EXPIRE', KEYS[1], ARGV[1])
local limit = tonumber(ARGV[3])
if limit < 1 then return {} end
local from = ARGV[2] == '' and 1 or position(KEYS[1], ARGV[2], false)
return redis.call('LRANGE', KEYS[1], from, from + limit - 1)
"""
# KEYS: inbox. ARGV: ttl seconds, after, limit. Returns {keys above, oldest
# first; the newest key at or below, "" if none}.
NEWER = """
if not live(KEYS[1]) then return false end
redis.call('EXPIRE', KEYS[1], ARGV[1])
local at = position(KEYS[1], ARGV[2], true)
local limit = tonumber(ARGV[3])
local above = {}
if at > 1 and limit > 0 then
  local newest_first = redis.call('LRANGE', KEYS[1], math.max(1, at - limit), at - 1)
  for i = #newest_first, 1, -1 do above[#above + 1] = newest_first[i] end
end
return {above, redis.call('LINDEX', KEYS[1], at) or ''}
"""
# KEYS: inbox. ARGV: after.
COUNT_NEWER = """
if not live(KEYS[1]) then return false end
return position(KEYS[1], ARGV[1], true) - 1
"""
# KEYS: one reader's inbox, only to route the call to that reader's node.
SENTINEL_NOW = "return incarnation()"
