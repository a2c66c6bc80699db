"""The pool's shared list in Redis: the names of ready, table-less actors of one cell
(`keys.pool`), shared by its gateways, and the targets they announce.

Redis outlives Ray, so every name taken from the list is checked with Ray: one Ray does not know
is dropped there and then, and only live names count. A surplus is stopped down to the highest
target any gateway announced, so that one gateway does not stop what a busier one keeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

from actors import keys
from actors.placement import place_of
from actors.pool_demand import DEMAND_WINDOW_S
from actors.protocol import Probe
from actors.ray_calls import ask
from actors.ray_names import Actors, Handle
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Script

log = logging.getLogger("quatro.pool")

POOLED_FRESH_S = 30.0  # a pooled name seen alive this recently is not looked up again
STOP_PROBE_S = 2.0  # a pooled actor about to be stopped says within this whether it holds a table

# KEYS[1]: hash gateway -> "target:until_ms"; ARGV: this gateway's id, its target, for how long
# (ms). Records ours, forgets what has expired (a gateway gone), returns the highest target.
ANNOUNCE = Script(
    "pool.announce",
    """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. (now + tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
local highest = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local target, untl = string.match(all[i + 1], '^(%d+):(%d+)$')
  if target == nil or tonumber(untl) < now then
    redis.call('HDEL', KEYS[1], all[i])
  elseif tonumber(target) > highest then
    highest = tonumber(target)
  end
end
return highest
""",
)

# KEYS[1]: the pool; ARGV[1]: the size to trim it to. One name off its tail while it is longer:
# gateways trimming at once never take it below that size together.
TRIM_ONE = Script(
    "pool.trim-one",
    """
if redis.call('LLEN', KEYS[1]) > tonumber(ARGV[1]) then
  return redis.call('RPOP', KEYS[1])
end
return false
""",
)


class PoolList:
    def __init__(self, redis: AsyncRedis, actors: Actors, cell: str = "") -> None:
        """`cell`: the cell whose Ray runs these actors: its list and targets are that cell's
        own, since a pooled name means nothing to another cell's Ray."""
        self.redis = redis
        self.actors = actors
        self.key = keys.pool(cell)
        self.targets_key = keys.pool_targets(cell)
        self.spread_key = keys.pool_spread(cell)
        self._alive: dict[str, float] = {}  # pooled name -> loop time last seen alive
        self._id = uuid.uuid4().hex[:10]  # this gateway's entry among the announced targets

    async def pop_live(self) -> tuple[str, Handle] | None:
        """The first live actor off the list; dead names before it are dropped."""
        while name := await self.redis.lpop(self.key):
            self._alive.pop(str(name), None)
            handle = await self.actors.lookup(str(name))
            if handle is None:
                log.warning("pooled actor %s is gone (unknown to Ray): skipped", name)
                continue
            return str(name), handle
        return None

    async def head(self, count: int) -> list[str]:
        """The first `count` names, as they stand (the readiness probe's)."""
        return [str(n) for n in await self.redis.lrange(self.key, 0, count - 1)]

    async def push(self, name: str) -> None:
        """A new actor, placed and answering: at the far end."""
        await self.redis.rpush(self.key, name)
        self._alive[name] = asyncio.get_running_loop().time()

    async def give_back(self, name: str) -> None:
        """An actor taken and not used: first out again."""
        with contextlib.suppress(Exception):  # Redis out of reach: the actor is left idle
            await self.redis.lpush(self.key, name)
            self._alive[name] = asyncio.get_running_loop().time()

    async def requeue(self, name: str) -> None:
        """Put a pooled actor that could not answer (its node lost, Ray restarting it elsewhere)
        back at the far end: it still holds a slot and will serve once it is back, by which
        time the actors ahead of it have been used."""
        with contextlib.suppress(Exception):  # Redis out of reach: the actor is left idle
            await self.redis.rpush(self.key, name)

    async def to_tail(self, name: str) -> None:
        """Move a pooled actor that could not answer to the far end, if it is still pooled."""
        with contextlib.suppress(Exception):
            if await self.redis.lrem(self.key, 1, name):
                await self.redis.rpush(self.key, name)

    async def drop(self, name: str) -> None:
        """Remove one dead name from the shared pool. By value, once: another gateway popping
        it at the same moment is fine, and a live name next to it stays."""
        self._alive.pop(name, None)
        if await self.redis.lrem(self.key, 1, name):
            log.warning("pooled actor %s is gone (unknown to Ray): dropped from the pool", name)

    async def claim(self, name: str) -> bool:
        """Take one named actor off the list, if it is still there: then it is ours alone
        (a gateway that popped it first serves a table with it)."""
        return bool(await self.redis.lrem(self.key, 1, name))

    async def nodes(self) -> dict[str, str]:
        """Where each pooled actor runs: name -> Ray's node id (those Ray does not count alive
        left out)."""
        found = {}
        for name in [str(n) for n in await self.redis.lrange(self.key, 0, -1)]:
            handle = await self.actors.lookup(name)
            place = None if handle is None else await asyncio.to_thread(place_of, handle)
            if place is not None and place.state == "ALIVE" and place.node:
                found[name] = place.node
        return found

    async def lead(self, ttl_ms: int) -> bool:
        """Whether this gateway may spread the pool now: it holds the cell's turn for `ttl_ms`
        (taken when free, renewed when its own)."""
        if await self.redis.set(self.spread_key, self._id, nx=True, px=ttl_ms):
            return True
        if await self.redis.get(self.spread_key) == self._id:
            await self.redis.pexpire(self.spread_key, ttl_ms)
            return True
        return False

    async def live(self) -> int:
        """How many actors of the shared pool are alive; dead names are dropped on the way."""
        names = [str(n) for n in await self.redis.lrange(self.key, 0, -1)]
        now = asyncio.get_running_loop().time()
        unsure = [n for n in names if now - self._alive.get(n, float("-inf")) > POOLED_FRESH_S]
        found = await asyncio.gather(*(self.actors.lookup(n) for n in unsure))
        count = len(names)
        for name, handle in zip(unsure, found, strict=True):
            if handle is None:
                await self.drop(name)
                count -= 1
            else:
                self._alive[name] = now
        for name in [n for n in self._alive if n not in names]:
            del self._alive[name]  # taken by some gateway since
        return count

    async def trim(self, target: int, live: int) -> None:
        """Stop pooled actors past the highest target any gateway announced (each holds a slot
        and ~100 MB). Ours holds for two demand windows, renewed at every quiet pass."""
        ttl_ms = int(DEMAND_WINDOW_S * 2000)
        highest = int(
            await ANNOUNCE.run(self.redis, [self.targets_key], [self._id, target, ttl_ms])
        )
        for _ in range(live - highest):
            name = await TRIM_ONE.run(self.redis, [self.key], [highest])
            if name is None:
                return
            self._alive.pop(str(name), None)
            handle = await self.actors.lookup(str(name))
            if handle is not None and await self.stop(str(name), handle):
                log.info("pool above its target (%d): stopped %s", highest, name)

    async def stop(self, name: str, handle: Handle) -> bool:
        """Stop a pooled actor taken off the list, unless it says it holds a table: a name on
        the list by mistake (pushed twice, put back by a caller that did not know its table)
        must not cost a table. One that does not answer in time is stopped."""
        try:
            async with asyncio.timeout(STOP_PROBE_S):
                status = await ask(handle, Probe())
        except Exception:
            status = None
        if status is not None and status.code:
            log.warning("pooled actor %s holds table %s: left running", name, status.code)
            return False
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.actors.kill, handle)
        return True
