"""The scripts and pipelines of the ratings' putting right (actors/rating_fix.py): each on one
slot, the size's `{ratings:N}` or one match record's; registered in cluster/redis_ops.py."""

from __future__ import annotations

from cluster.lease_lua import TAKE
from cluster.redis_ops import Pipeline, Script

# KEYS: the size's fix hash. ARGV: holder, lease (ms), '1' to freeze the size's applies for as
# long ('0' to let them run). Takes or renews the lease unless another holder's is live; the
# freeze, `freeze` = "holder until_ms", is what this release's APPLY waits for. Returns Redis's
# time (ms), or 0 when another holds it. A script: the look at the lease and its taking must
# see no other taker between them.
LEASE = Script(
    "rating-fix.lease",
    TAKE
    + """
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'freeze', held)
else
  redis.call('HDEL', KEYS[1], 'freeze')
end
return now
""",
)

# KEYS: the size's fix hash. ARGV: holder, the marker's JSON, '1' to give the lease back too.
# Writes the marker (and gives back the lease and the freeze) if the lease is still the
# holder's. Returns 1, or 0 (lost).
MARK = Script(
    "rating-fix.mark",
    """
local lease = redis.call('HGET', KEYS[1], 'lease')
if not lease or string.match(lease, '^(%S+)') ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'done', ARGV[2]) end
if ARGV[3] == '1' then redis.call('HDEL', KEYS[1], 'lease', 'freeze') end
return 1
""",
)

# KEYS: ratings, board, board names, unrated, fix. ARGV: holder, then for each player: id, the
# version read, the rating's JSON with its next version ('': not rated any more), the board's
# score ('': not listed). A deleted player is left alone. Returns -1 when the lease is lost, else
# how many players' versions moved since they were read (those are not written).
WRITE = Script(
    "rating-fix.write",
    """
local lease = redis.call('HGET', KEYS[5], 'lease')
if not lease or string.match(lease, '^(%S+)') ~= ARGV[1] then return -1 end
local moved = 0
for i = 2, #ARGV, 4 do
  local p = ARGV[i]
  if not redis.call('ZSCORE', KEYS[4], p) then
    local raw = redis.call('HGET', KEYS[1], p)
    local v = 0
    if raw then v = tonumber(cjson.decode(raw)['v']) or 0 end
    if v ~= tonumber(ARGV[i + 1]) then
      moved = moved + 1
    elseif ARGV[i + 2] == '' then
      redis.call('HDEL', KEYS[1], p)
      redis.call('ZREM', KEYS[2], p)
      redis.call('HDEL', KEYS[3], p)
    else
      redis.call('HSET', KEYS[1], p, ARGV[i + 2])
      if ARGV[i + 3] == '' then
        redis.call('ZREM', KEYS[2], p)
      else
        redis.call('ZADD', KEYS[2], tonumber(ARGV[i + 3]), p)
      end
    end
  end
end
return moved
""",
)

# KEYS: rated, fix. ARGV: holder, then match id and entry pairs. An entry is written only where
# the match is still remembered: an id the size's trim forgot stays forgotten. -1: lease lost.
ENTRIES = Script(
    "rating-fix.entries",
    """
local lease = redis.call('HGET', KEYS[2], 'lease')
if not lease or string.match(lease, '^(%S+)') ~= ARGV[1] then return -1 end
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    n = n + 1
  end
end
return n
""",
)

# KEYS: a match's record. ARGV: the patch (JSON: rated, reason, each seat's before, after and
# played, in seat order). Only those fields change, read and written in one step, so that a
# deletion's scrub of the same record (gateway/profiles.py, SCRUB) is never undone. Queued by
# the page on PATCHES.
PATCH = Script(
    "rating-fix.patch",
    """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
local patch = cjson.decode(ARGV[1])
rec['rated'] = patch['rated']
rec['reason'] = patch['reason']
for i, seat in ipairs(rec['seats']) do
  local p = patch['seats'][i]
  seat['before'] = p['before']
  seat['after'] = p['after']
  seat['played'] = p['played']
end
redis.call('SET', KEYS[1], cjson.encode(rec), 'KEEPTTL')
return 1
""",
)

# A page's match records: single-key reads of many slots (a cluster client sends each node its
# part); nothing depends on their order.
RECORDS = Pipeline("rating-fix.records")
# A page of record patches: one script per record, each on its record's slot (a cluster client
# sends each node its part); nothing depends on their order.
PATCHES = Pipeline("rating-fix.patches")
