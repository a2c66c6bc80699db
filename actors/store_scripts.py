"""The Lua scripts and pipelines of a table's records (actors/store.py runs them), each on the
table's one slot (`keys.tag`), registered in cluster/redis_ops.py."""

from __future__ import annotations

from cluster.redis_ops import Pipeline, Script

# Whether a table record (raw JSON) says the table moved away from an incarnation of `cell`
# that found it after `moves` moves (actors/cells.py's MOVE sets the cell and counts one more).
FENCE = """
local function moved(raw, cell, moves)
  local ok, rec = pcall(cjson.decode, raw)
  if not ok or type(rec) ~= 'table' then return false end
  local named = rec['cell']
  if type(named) ~= 'string' then named = '' end
  return named ~= cell or (tonumber(rec['moves']) or 0) ~= tonumber(moves)
end
"""

# A table record read (nil when gone) and, changed by a move (cells' MOVE, rescue's MOVE_HERE
# and HAND_OVER), written back with the TTL it had.
REWRITE = """
local function record(key)
  local raw = redis.call('GET', key)
  if not raw then return nil end
  return cjson.decode(raw)
end
local function rewrite(key, rec)
  local ttl = redis.call('PTTL', key)
  if ttl > 0 then
    redis.call('SET', key, cjson.encode(rec), 'PX', ttl)
  else
    redis.call('SET', key, cjson.encode(rec))
  end
end
"""

# The save, as one script: SET the snapshot, append the new events to the log and the replay,
# renew the records. A write can be sent twice (its answer late: redis-py sends it again on a
# timeout, and so does the core's retry of a save it thinks failed): an event is appended only
# when its seq is past the last one its list holds, so no list ever holds one twice.
# The fence (cells, actors/cells.py): a save is refused (-1, nothing written) when the table
# record names another cell than this actor's, or counts more moves than it did when this
# incarnation found its table: the table was moved while this incarnation still ran (a
# partition), and the new one's saves are the table now. The count closes a -> b -> a, where a
# stale incarnation in a would see its own cell named again. No cells: '' and 0, as before.
# Every key is of the table's slot (`keys.tag`); the actor's own record is written apart.
# KEYS: snapshot, log, replay, replay meta, table record.
# ARGV: the snapshot, the records' ttl, the events the log keeps, the replay's cap, its ttl,
# its meta ('' when saved already: only renewed), the table record, this actor's cell, the
# moves it knows of, the last seq this incarnation wrote to the log and to the replay (-1:
# none, or not checked); then, for each new event: its seq, its JSON, and '1' when it belongs
# in the replay (orders do not).
# Returns {1 (saved), 0 (saved, but a list lost writes: none appended) or -1 (fenced), the log's
# last seq, the replay's, 1 if the table record was there}. Lost writes, or no record, are Redis
# having lost what its replica never got (a failover): the caller writes the missing events
# again, and its own record.
SAVE = Script(
    "table.save",
    FENCE
    + """
local current = redis.call('GET', KEYS[5])
if current and moved(current, ARGV[8], ARGV[9]) then return {-1, 0, 0, 1} end
local function last_seq(key)
  local raw = redis.call('LINDEX', key, -1)
  if not raw then return -1 end
  return tonumber(cjson.decode(raw)[1])
end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
local in_log, in_replay = last_seq(KEYS[2]), last_seq(KEYS[3])
local full = redis.call('LLEN', KEYS[3]) >= tonumber(ARGV[4])
-- A list that ends before what this incarnation wrote to it lost writes: nothing is appended
-- to it now, so that the caller's next call can append the missing events in their order.
local log_ok = in_log >= tonumber(ARGV[10])
local replay_ok = full or in_replay >= tonumber(ARGV[11])
local pushed_log, pushed_replay = 0, 0
for i = 12, #ARGV, 3 do
  local seq = tonumber(ARGV[i])
  if log_ok and seq > in_log then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    pushed_log = pushed_log + 1
  end
  if replay_ok and ARGV[i + 2] == '1' and seq > in_replay then
    redis.call('RPUSH', KEYS[3], ARGV[i + 1])
    pushed_replay = pushed_replay + 1
  end
end
if pushed_log > 0 then redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1) end
redis.call('EXPIRE', KEYS[2], ttl)
if pushed_replay > 0 then redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[4]) - 1) end
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[5]))
if ARGV[6] == '' then
  redis.call('EXPIRE', KEYS[4], tonumber(ARGV[5]))
else
  redis.call('SET', KEYS[4], ARGV[6], 'EX', tonumber(ARGV[5]))
end
redis.call('SET', KEYS[5], ARGV[7], 'EX', ttl)
if not log_ok or not replay_ok then
  return {0, in_log, in_replay, current and 1 or 0}
end
return {1, in_log, in_replay, current and 1 or 0}
""",
)

# The table stops: its record goes and its snapshot and log expire, unless the table was moved
# (FENCE: those records are the new incarnation's now). KEYS: table record, snapshot, log, alive;
# ARGV: this actor's cell, the stopped TTL, the moves it knows of. 1 when retired.
RETIRE = Script(
    "table.retire",
    FENCE
    + """
local current = redis.call('GET', KEYS[1])
if current and moved(current, ARGV[1], ARGV[3]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[2]))
if KEYS[4] then redis.call('EXPIRE', KEYS[4], tonumber(ARGV[2])) end
return 1
""",
)

# The table is alive at a table time (actors/clock.py's beat), unless it moved away from this
# incarnation (FENCE): a cut-off incarnation's beats must not shorten the stall the new one
# gives back. KEYS: table record, alive; ARGV: this actor's cell, the moves it knows of, the
# time, the TTL. 1 when written, -1 when fenced (nothing written).
BEAT = Script(
    "table.beat",
    FENCE
    + """
local current = redis.call('GET', KEYS[1])
if current and moved(current, ARGV[1], ARGV[2]) then return -1 end
redis.call('SET', KEYS[2], ARGV[3], 'EX', tonumber(ARGV[4]))
return 1
""",
)

# A restarting incarnation reads its table: snapshot, log, record and when it was last alive
# (`keys.alive`: the stall to give back, actors/clock.py) (nothing else saves it
# meanwhile: Ray runs one incarnation at a time).
RESTORE = Pipeline("table.restore")
# A table buried: its records go and a tombstone says why. KEYS: table record, snapshot, log,
# tombstone; ARGV: why, the tombstone's TTL.
BURY = Script(
    "table.bury",
    """
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('SET', KEYS[4], ARGV[1], 'EX', tonumber(ARGV[2]))
return 1
""",
)
# A save that scores a point or ends a match, then WAIT for a replica, on one connection.
DURABLE_SAVE = Pipeline("table.save-durable")

# KEYS[1] is deleted only if it still holds ARGV[1]: a record rewritten meanwhile stays. An
# actor's record (name -> code) that must still name the code released (a move may have named
# this actor for another table); a table's record still the one judged stale (a table opened
# since under the same code, once another gateway dropped the stale one, keeps its record).
DELETE_IF_SAME = Script(
    "records.delete-if-same",
    """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
""",
)
