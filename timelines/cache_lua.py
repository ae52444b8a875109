"""The Lua scripts of ``timelines.cache``: each runs on one reader's keys (one slot),
except the ``*_many`` forms, which loop over many readers' keys on a single Redis.

Why the scripts do what they do (the sentinel, the incarnation stamp, the fill
marker) is in ``timelines.cache``'s docstring.
"""

# Shared by every script. The sentinel member of a cache names the incarnation of
# the Redis server that filled it: its run_id (new at every start), its
# replication id (new when it is promoted or resynchronised from a master), and
# the key counts of its last load of a snapshot (changed by an in-place load such
# as DEBUG RELOAD), hashed to 16 hex digits (64 bits), so that the member is as
# short as a timeline key and a cache fits Redis's compact listpack encoding
# (timelines.checks). None of these is in the dataset, so a snapshot restored or
# replicated elsewhere cannot bring them back; a cache whose sentinel names
# another incarnation is deleted the moment any script touches it.
INCARNATION = """
local function field(info, name)
  return string.match(info, name .. ':([^\\r\\n]*)') or '?'
end
local function incarnation()
  local persistence = redis.call('INFO', 'persistence')
  return '!' .. string.sub(redis.sha1hex(field(redis.call('INFO', 'server'), 'run_id')
    .. ':' .. field(redis.call('INFO', 'replication'), 'master_replid')
    .. ':' .. field(persistence, 'rdb_last_load_keys_loaded')
    .. ':' .. field(persistence, 'rdb_last_load_keys_expired')), 1, 16)
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
PUSH = """
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
# would check it. On a Redis Cluster, where a call holds one reader's keys, the
# caller reads it once per master and passes it (ARGV[1], "" to read it here):
# the three INFO calls are most of a one-reader call's cost. A stamp read a
# moment before is safe for writes: a push into a cache restored meanwhile
# leaves its old sentinel, which the next read finds and deletes.
# KEYS: inbox, marker, inbox, marker... ARGV: incarnation or "", cap, members...
PUSH_MANY = """
local now = ARGV[1] ~= '' and ARGV[1] or incarnation()
local cap = tonumber(ARGV[2])
for k = 1, #KEYS, 2 do
  local key = KEYS[k]
  redis.call('DEL', KEYS[k + 1])
  local first = redis.call('ZRANGE', key, 0, 0)
  if #first > 0 then
    if first[1] == now then
      for i = 3, #ARGV do redis.call('ZADD', key, 0, ARGV[i]) end
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
# KEYS: inbox, marker, inbox, marker... ARGV: incarnation or "", members...
REMOVE_MANY = """
local now = ARGV[1] ~= '' and ARGV[1] or incarnation()
for k = 1, #KEYS, 2 do
  local key = KEYS[k]
  redis.call('DEL', KEYS[k + 1])
  local first = redis.call('ZRANGE', key, 0, 0)
  if #first > 0 then
    if first[1] ~= now then
      redis.call('DEL', key)
    elseif #ARGV > 1 then
      redis.call('ZREM', key, unpack(ARGV, 2))
    end
  end
end
return 0
"""
# KEYS: inbox, marker. ARGV: members...
REMOVE = """
redis.call('DEL', KEYS[2])
if live(KEYS[1]) and #ARGV > 0 then redis.call('ZREM', KEYS[1], unpack(ARGV)) end
return 0
"""
# KEYS: inbox, marker. ARGV: the author part of a timeline key, its first
# position (1-based, from posts.ids.TIMELINE_KEY_AUTHOR).
REMOVE_AUTHOR = """
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
FILL = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2], KEYS[1])
redis.call('ZADD', KEYS[1], 0, incarnation())
for i = 3, #ARGV do redis.call('ZADD', KEYS[1], 0, ARGV[i]) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
# Reads: nil when not cached (or cached by another incarnation).
# KEYS: inbox. ARGV: ttl seconds, high bound, limit.
OLDER = """
if not live(KEYS[1]) then return false end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], '(!~', 'LIMIT', 0, ARGV[3])
"""
# KEYS: inbox. ARGV: ttl seconds, after, limit. Returns {keys above, 1 if one at or below}.
NEWER = """
if not live(KEYS[1]) then return false end
redis.call('EXPIRE', KEYS[1], ARGV[1])
local above = redis.call('ZRANGEBYLEX', KEYS[1], '(' .. ARGV[2], '+', 'LIMIT', 0, ARGV[3])
local below = redis.call('ZREVRANGEBYLEX', KEYS[1], '[' .. ARGV[2], '(!~', 'LIMIT', 0, 1)
return {above, #below}
"""
# KEYS: inbox. ARGV: after.
COUNT_NEWER = """
if not live(KEYS[1]) then return false end
return redis.call('ZLEXCOUNT', KEYS[1], '(' .. ARGV[1], '+')
"""
# KEYS: one reader's inbox, only to route the call to that reader's node.
SENTINEL_NOW = "return incarnation()"
