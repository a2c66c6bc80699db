"""A lease in a Redis hash, taken in Lua: one holder at a time does a job that many processes
could start (a migration's pass, a size's rating fix), and a holder that dies frees it when
its lease runs out. Redis's own clock judges every lease, so the holders' clocks never matter.

TAKE is the start of a script: KEYS[1] is the hash, ARGV[1] the holder, ARGV[2] the lease (ms).
It returns 0 when another holder's lease is live; otherwise it takes or renews the lease and
leaves `now` (Redis's time, ms) and `held` (the lease written, "holder until_ms") to the rest of
the script. In one script, the look at the lease and its taking see no other taker between.
"""

TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = redis.call('HGET', KEYS[1], 'lease')
if lease then
  local holder, till = string.match(lease, '^(.*) (%d+)$')
  if holder ~= ARGV[1] and tonumber(till) > now then return 0 end
end
local held = ARGV[1] .. ' ' .. (now + tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'lease', held)
"""
