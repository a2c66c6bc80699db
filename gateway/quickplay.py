"""Quick play's seat queue, shared by every gateway replica through Redis.

For each table size, one hash holds the public tables now filling, by level (issue 36): each a
token naming it, the level it was opened at (its opener's rating, engine.ratings.Rating.level),
the next seat to hand out, until when seats are handed out (a little before its fill deadline)
and when it opened. One Lua script hands out seats atomically, so two gateways never give the
same seat: a caller gets the nearest table in level whose band reaches theirs — the band starts
at ±100 and widens with the time the table's players have waited, to any level at three
quarters of the fill wait (engine.ratings.band), so nobody waits longer than before bots fill
in. With no such table (or when the one found is unusable), the caller gets seat 0 of a new
token and opens the table, and the callers given the other seats of that token wait for its
code. The engine still judges every seat (`seat_taken`, `wrong_phase`): a seat handed out here
is only a proposal.

Each player also has one quick-play record: asking again returns the seat they hold.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from actors import keys
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Script
from engine.ratings import BAND_REACH, BAND_START, NEW, WIDE_AT

# KEYS[1]: the size's hash of filling tables, token -> "level next until opened" (levels on the
# display's scale, times in ms of Redis's clock). ARGV: players, a fresh token, how long a new
# table's seats are handed out (ms), the token of a table found unusable ("" if none), the
# caller's level, the fill wait (ms), then engine.ratings' band: its start, its reach, and the
# share of the fill wait (per mille) after which any level is taken.
# Returns {token, seat}: seat 0 means the caller opens the table of that token.
HAND_OUT = Script(
    "quick.hand-out",
    """
local players = tonumber(ARGV[1])
local level = tonumber(ARGV[5])
local fill = tonumber(ARGV[6])
local open_at = math.max(1, math.floor(fill * tonumber(ARGV[9]) / 1000))
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local best, best_next, best_dist, best_opened = false, 0, 0, 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local token = all[i]
  local f = {}
  for x in string.gmatch(all[i + 1], '%S+') do f[#f + 1] = tonumber(x) end
  local at, nxt, till, opened = f[1], f[2], f[3], f[4]
  if token == ARGV[4] or nxt >= players or till <= now then
    redis.call('HDEL', KEYS[1], token)
  else
    local waited = now - opened
    local band = 1000000
    if waited < open_at then
      band = tonumber(ARGV[7]) + math.floor(tonumber(ARGV[8]) * math.max(0, waited) / open_at)
    end
    local dist = math.abs(at - level)
    local nearer = not best or dist < best_dist or (dist == best_dist and opened < best_opened)
    if dist <= band and nearer then
      best, best_next, best_dist, best_opened = token, nxt, dist, opened
    end
  end
end
if best then
  local f = {}
  for x in string.gmatch(redis.call('HGET', KEYS[1], best), '%S+') do f[#f + 1] = x end
  redis.call('HSET', KEYS[1], best, f[1] .. ' ' .. (best_next + 1) .. ' ' .. f[3] .. ' ' .. f[4])
  return {best, best_next}
end
local till = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], ARGV[2], level .. ' 1 ' .. till .. ' ' .. now)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + 60000)
return {ARGV[2], 0}
""",
)

# KEYS[1]: a player's record; ARGV[1]: the value it must still hold to be deleted.
DROP_IF = Script(
    "quick.drop-if",
    """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
""",
)

PENDING = "pending"
FAILED = ""  # a token's table that could not be opened
TOKEN_TTL_S = 600
SEAT_TTL_S = 24 * 3600
POLL_S = (0.02, 0.25)  # first and longest pause between two looks at a key


class QuickQueue:
    def __init__(self, redis: AsyncRedis) -> None:
        self.redis = redis

    async def seat(
        self,
        players: int,
        fresh: str,
        offer_ms: int,
        unusable: str = "",
        level: int = NEW.level,
        fill_ms: int = 60_000,
    ) -> tuple[str, int]:
        """(token, seat) handed out atomically; seat 0 (then of `fresh`) means "open it".
        `unusable`: a token whose table turned out full, started or gone. Of the tables filling
        whose band (engine.ratings.band: it widens with their wait) reaches `level`, the
        nearest in level is chosen, the one waiting longest among equals."""
        token, seat = await HAND_OUT.run(
            self.redis,
            [keys.quick(players)],
            [
                players,
                fresh,
                offer_ms,
                unusable,
                level,
                fill_ms,
                BAND_START,
                BAND_REACH,
                round(WIDE_AT * 1000),
            ],
        )
        return str(token), int(seat)

    async def opened(self, token: str, code: str) -> None:
        await self.redis.set(keys.quick_table(token), code, ex=TOKEN_TTL_S)

    async def failed(self, token: str) -> None:
        await self.redis.set(keys.quick_table(token), FAILED, ex=TOKEN_TTL_S)

    async def code_of(self, token: str, wait_s: float) -> str | None:
        """The code of the table `token` names once its opener says it; None when it failed
        or did not come within `wait_s`."""
        code = await poll(lambda: self.redis.get(keys.quick_table(token)), wait_s)
        return str(code) if code else None

    # -- one quick seat per player ----------------------------------------------------------
    async def claim(self, player_id: str, wait_s: float) -> bool:
        """Whether this call now looks for a seat for `player_id` (no other call does)."""
        return bool(
            await self.redis.set(keys.quick_seat(player_id), PENDING, nx=True, ex=int(wait_s) + 5)
        )

    async def mine(self, player_id: str) -> str | None:
        """The player's record: None, PENDING, or the JSON of their seat."""
        raw = await self.redis.get(keys.quick_seat(player_id))
        return None if raw is None else str(raw)

    async def keep(self, player_id: str, seat: dict[str, Any]) -> None:
        await self.redis.set(keys.quick_seat(player_id), json.dumps(seat), ex=SEAT_TTL_S)

    async def drop(self, player_id: str, was: str | None = None) -> None:
        """Forget the player's record (only if it is still `was`, when given)."""
        key = keys.quick_seat(player_id)
        if was is None:
            await self.redis.delete(key)
            return
        await DROP_IF.run(self.redis, [key], [was])


async def poll(look: Any, wait_s: float) -> Any:
    """`look()` again and again until it gives something other than None, for `wait_s` at most
    (None then)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    pause = POLL_S[0]
    while True:
        found = await look()
        if found is not None or loop.time() >= deadline:
            return found
        await asyncio.sleep(min(pause, max(0.0, deadline - loop.time())))
        pause = min(pause * 2, POLL_S[1])
