"""Guest profiles (issue 47): what costs nothing to make weighs nothing.

Every new session makes a profile, for one request; until that profile is worth keeping it is a
guest's (`lasting` "0"), and everything it holds expires with its last session
(actors/profile_keys.py): a visitor who never comes back leaves nothing behind. It becomes
lasting — every key persisted at once, on its slot — with:

- its first rated match (the table that records the match does it: actors/match_records.py);
- a passkey (`POST /api/passkeys`: a second device is worth keeping for);
- its owner's choice (`PATCH /api/profiles/me` `{"keep": true}`: the profile page's "Keep this
  profile", which says what it means).

A profile made before issue 47 has no `lasting` field: it is judged once, lasting if it has a
rated match or a passkey, else a guest's expiring with its newest session (or at once without
one): by the migration at a gateway's start (gateway/guest_migration.py), or when one of its
sessions is next used (gateway/sessions.py), whichever comes first. A deleted profile's
tombstone is no guest's key: it keeps its own 60 days.
"""

from __future__ import annotations

import time

from actors import keys
from actors.profile_keys import LUA, OWNED, SEEN_MOST
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline, Script
from engine.cards import PLAYER_COUNTS

# KEYS: the new player's own keys (`keys.owned`). ARGV: name, now (ms), the guest's expiry (ms),
# the address tag it was made from ('' for none), the most tags kept. A profile already made is
# left as it is (0). A script: nobody may read a profile with a name and no date or expiry.
CREATE = Script(
    "guests.create",
    LUA
    + f"""
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'created', ARGV[2], 'lasting', '0')
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[{OWNED}], tonumber(ARGV[2]), ARGV[4])
  redis.call('ZREMRANGEBYRANK', KEYS[{OWNED}], 0, -tonumber(ARGV[5]) - 1)
end
expire(tonumber(ARGV[3]))
return 1
""",
)

# KEYS: the player's own keys. Made lasting (1), or -1 for no profile. A script: a guest's
# expiry renewed by a session between two PERSISTs would leave a key of it expiring.
KEEP = Script(
    "guests.keep",
    LUA
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
keep()
return 1
""",
)

# KEYS: the player's own keys. ARGV: '1' when worth keeping (a rated match, a passkey), the
# expiry of its newest session known here (ms, 0: none), now (ms). Judges a profile made before
# issue 47, once: -1 no profile, 0 judged already, 1 lasting, 2 a guest's until then, 3 a
# guest's with no session left: deleted. The migration's notes of its sessions
# (`session_until`, NOTE below) count as sessions.
JUDGE = Script(
    "guests.judge",
    LUA
    + f"""
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[1], 'lasting') == 1 then return 0 end
local last = tonumber(ARGV[2]) or 0
local noted = tonumber(redis.call('HGET', KEYS[1], 'session_until') or '0') or 0
if noted > last then last = noted end
redis.call('HDEL', KEYS[1], 'session_until')
if ARGV[1] == '1' then
  keep()
  return 1
end
if last <= tonumber(ARGV[3]) then
  redis.call('DEL', unpack(KEYS))
  return 3
end
redis.call('HSET', KEYS[1], 'lasting', '0')
for k = 1, {OWNED} do redis.call('PEXPIREAT', KEYS[k], last) end
return 2
""",
)

# KEYS: a profile. ARGV: when one of its sessions expires (ms). Noted on a profile not judged
# yet, if later than what is noted: the migration's first pass (gateway/guest_migration.py).
NOTE = Script(
    "guests.note",
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HEXISTS', KEYS[1], 'lasting') == 1 then return 0 end
local noted = tonumber(redis.call('HGET', KEYS[1], 'session_until') or '0') or 0
if tonumber(ARGV[1]) > noted then redis.call('HSET', KEYS[1], 'session_until', ARGV[1]) end
return 1
""",
)

# Whether players are worth keeping: a rating at any size (the sizes' slots), passkeys (the
# players' own). Single-key reads, any slots.
WORTH = Pipeline("guests.worth")


def now_ms() -> int:
    return int(time.time() * 1000)


class Guests:
    """`ttl_s`: a session's lifetime (`QUATRO_SESSION_TTL`), which a guest's profile follows."""

    def __init__(self, redis: AsyncRedis, ttl_s: int) -> None:
        self.redis = redis
        self.ttl_s = ttl_s

    async def create(self, player_id: str, name: str, tag: str | None) -> None:
        """A new player's profile, a guest's: a second call changes nothing."""
        args = [name, now_ms(), self.ttl_s * 1000, tag or "", SEEN_MOST]
        await CREATE.run(self.redis, keys.owned(player_id), args)

    async def keep(self, player_id: str) -> bool:
        """The profile is kept for good, with everything it holds; False: no such profile."""
        return int(await KEEP.run(self.redis, keys.owned(player_id), [])) == 1

    async def worth_keeping(self, ids: list[str]) -> list[bool]:
        """Whether each player has a rated match or a passkey (one round trip)."""
        pipe = WORTH.on(self.redis)
        for pid in ids:
            for players in PLAYER_COUNTS:
                pipe.hexists(keys.ratings(players), pid)
            pipe.hlen(keys.passkeys(pid))
        found = await WORTH.run(pipe)
        step = len(PLAYER_COUNTS) + 1
        return [any(int(x) for x in found[i * step : (i + 1) * step]) for i in range(len(ids))]

    async def judge(self, player_id: str, last_session_ms: int) -> int:
        """A profile made before issue 47, judged (JUDGE's answer)."""
        (worth,) = await self.worth_keeping([player_id])
        args = ["1" if worth else "0", last_session_ms, now_ms()]
        return int(await JUDGE.run(self.redis, keys.owned(player_id), args))

    async def expires(self, player_id: str) -> int | None:
        """When a guest's profile expires unless a session of it is used again (ms); None for
        a lasting one."""
        ttl = int(await self.redis.pttl(keys.profile(player_id)))
        return now_ms() + ttl if ttl > 0 else None
