"""Quick play's seat queue, shared by every gateway replica through Redis.

For each table size, one hash holds the public table now filling: a token naming it, the next
seat to hand out, and until when seats are handed out (a little before its fill deadline). One
Lua script hands out seats atomically, so two gateways never give the same seat; when the table
is full, or its time is up, or a caller found it unusable, the next caller gets seat 0 of a new
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

# KEYS[1]: the size's hash. ARGV: players, a fresh token, how long a new table's seats are
# handed out (ms), the token of a table found unusable ("" if none).
# Returns {token, seat}: seat 0 means the caller opens the table of that token.
HAND_OUT = Script(
    "quick.hand-out",
    """
local players = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local e = redis.call('HMGET', KEYS[1], 'token', 'next', 'until')
if e[1] and (e[1] == ARGV[4] or tonumber(e[2]) >= players or tonumber(e[3]) <= now) then
  e[1] = false
end
if e[1] then
  return {e[1], redis.call('HINCRBY', KEYS[1], 'next', 1) - 1}
end
redis.call('HSET', KEYS[1], 'token', ARGV[2], 'next', 1, 'until', now + tonumber(ARGV[3]))
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
# Tables this gateway opens for quick play at once. Each may start a new actor process: a burst
# of players (say 200 at once) must not ask Ray for dozens of processes together, which on a
# small node thrashes (workers that take too long to start are started again) and opens none.
OPENING_AT_ONCE = 2


class QuickQueue:
    def __init__(self, redis: AsyncRedis) -> None:
        self.redis = redis
        self.opening = asyncio.Semaphore(OPENING_AT_ONCE)

    async def seat(
        self, players: int, fresh: str, offer_ms: int, unusable: str = ""
    ) -> tuple[str, int]:
        """(token, seat) handed out atomically; seat 0 (then of `fresh`) means "open it".
        `unusable`: a token whose table turned out full, started or gone."""
        token, seat = await HAND_OUT.run(
            self.redis, [keys.quick(players)], [players, fresh, offer_ms, unusable]
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
