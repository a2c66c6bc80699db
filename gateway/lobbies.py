"""At most N open lobbies per player: tables they created that have not started yet. Each is a
table actor process (~105 MB) waiting for players, so one session must not hold many.

A set per player in Redis holds their lobbies' codes. A code leaves the set when its table
starts (the start route) or, when the set looks full, once the table is found gone or out of its
lobby. A creation first reserves a slot (a `pending:<ms>` member), so concurrent creations by
one player cannot overshoot; a reservation left by a crashed gateway expires after a minute.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from actors import keys
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Script
from engine.errors import ErrorCode
from gateway.errors import ApiError

# KEYS[1]: the player's set; ARGV: a reservation, the set's TTL. The reservation added, the set
# renewed and counted at once: of two creations at once, only the later sees both.
RESERVE = Script(
    "lobbies.reserve",
    """
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return redis.call('SCARD', KEYS[1])
""",
)
# KEYS[1]: the player's set; ARGV: the reservation, the table's code, the TTL. The reservation
# becomes the code at once (the set never lacks both).
OPENED = Script(
    "lobbies.opened",
    """
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
""",
)

PENDING = "pending:"
PENDING_TTL_MS = 60_000

# code -> the table's phase, or None when it is gone
PhaseOf = Callable[[str], Awaitable[str | None]]


class OpenLobbies:
    def __init__(self, redis: AsyncRedis, limit: int, ttl_s: int) -> None:
        self.redis = redis
        self.limit = limit
        self.ttl_s = ttl_s

    async def reserve(self, player_id: str, phase_of: PhaseOf) -> str:
        """A reservation for one more lobby; ApiError `too_many_lobbies` (429) when the player
        already has `limit` open ones."""
        key = keys.open_lobbies(player_id)
        if await self.redis.scard(key) >= self.limit:
            await self._prune(key, phase_of)
        ticket = f"{PENDING}{int(time.time() * 1000)}:{time.monotonic_ns()}"
        count = int(await RESERVE.run(self.redis, [key], [ticket, self.ttl_s]))
        if count > self.limit:
            await self.redis.srem(key, ticket)
            raise ApiError(
                ErrorCode.TOO_MANY_LOBBIES,
                f"you already have {self.limit} tables waiting in their lobby: start or leave one",
                429,
                retry_after=60,
            )
        return ticket

    async def opened(self, player_id: str, ticket: str, code: str) -> None:
        key = keys.open_lobbies(player_id)
        await OPENED.run(self.redis, [key], [ticket, code, self.ttl_s])

    async def release(self, player_id: str, member: str) -> None:
        """A reservation not used, or a lobby that started."""
        await self.redis.srem(keys.open_lobbies(player_id), member)

    async def _prune(self, key: str, phase_of: PhaseOf) -> None:
        now_ms = int(time.time() * 1000)
        for raw in await self.redis.smembers(key):
            member = raw.decode() if isinstance(raw, bytes) else raw  # decode_responses=True
            if member.startswith(PENDING):
                stale = now_ms - int(member[len(PENDING) :].split(":")[0]) > PENDING_TTL_MS
            else:
                stale = await phase_of(member) != "lobby"
            if stale:
                await self.redis.srem(key, member)
