"""How long what a profile holds is kept (issue 47): a guest's keys expire with its last session;
a lasting profile's are kept for good.

A profile is made a guest's (`lasting` "0"): it costs one request, so it weighs nothing until it
is worth keeping. Every key it holds (`keys.owned`: the profile hash, its history, wins,
passkeys, reports, where it was seen) then carries the expiry of its newest session, renewed
whenever a session of it is made or used (gateway/sessions.py), copied onto a key written later
(a history line, a win: actors/match_records.py). It becomes lasting (`lasting` "1", every key
persisted in one script on its slot) with its first rated match, a passkey, or its owner's
choice (gateway/guests.py). Where it was seen is the one key a lasting profile does not keep for
good: the newest `SEEN_MOST` address tags, for `SEEN_TTL_S` after the last.

The scripts that do either share the Lua of this module: their first keys are `keys.owned` of
the player, in that order (the profile first, where it was seen last).
"""

from __future__ import annotations

from actors import keys

SEEN_MOST = 8  # address tags kept per profile: a household's devices, a phone on the move
SEEN_TTL_S = 30 * 24 * 3600  # a lasting profile's tags, after the last seen
OWNED = len(keys.owned("p-"))  # the keys `owned` names: the scripts' first keys

# Lua: `keep()` makes the profile lasting (its keys persisted, its tags on their own expiry,
# ARGV-free: the expiry is inlined); `expire(ms)` gives every key of a guest the expiry `ms` from
# now. KEYS[1..OWNED] are `keys.owned` of the player.
LUA = f"""
local function keep()
  redis.call('HSET', KEYS[1], 'lasting', '1')
  for k = 1, {OWNED - 1} do redis.call('PERSIST', KEYS[k]) end
  redis.call('PEXPIRE', KEYS[{OWNED}], {SEEN_TTL_S * 1000})
end
local function expire(ms)
  for k = 1, {OWNED} do redis.call('PEXPIRE', KEYS[k], ms) end
end
"""
