"""A parked table (actors/parking.py) woken by the first call about it: a player's hello, a
watcher, a REST call, another cell's gateway asking for it after a cell move. The same steps as
a table moved off a lost node (actors/rescue.py), with no actor to kill:

1. A record that names a ready actor already (`moving`: a wake under way, from any gateway) is
   followed: the caller waits, bounded, until the record names that actor's. Only a wake that
   never ends (its gateway died midway, or gave up) is taken over, once that wait is spent.
2. A ready actor is taken from the pool (waited for, as a creation waits, when none is ready)
   and told the table's code (`keys.actor`), as a restart learns it.
3. `MOVE_HERE`, a compare-and-set on the table's record: it counts one more move only if the
   record still names the actor that parked it with the count the caller read. Of gateways
   waking one table at once, exactly one wins; the others give their ready actor back and
   follow. (Without step 1, a gateway that read the record after the winner's count, before
   its hand-over, would count once more and take the table from under it.)
4. The actor takes the table over from its snapshot (`Adopt`); `HAND_OVER` names it the table's
   actor and the record is parked no more. Its clock lets what fell due while the table slept
   fire in order; its first save gives the records back their usual lifetime.

An actor that could not take the table over is stopped for good (it may hold part of it), and
the record is left parked, with its new count: the caller's next try wakes it in another.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

import redis

from actors import keys
from actors.pool import Pool
from actors.protocol import Adopt
from actors.ray_calls import ask
from actors.ray_names import Actors
from actors.rescue import ADOPT_S, FOLLOW_S, HAND_OVER, MOVE_HERE
from actors.store import KEY_TTL_S
from actors.store_scripts import DELETE_IF_SAME
from actors.table_records import Parked, TableRecords
from actors.tasks import Tasks
from cluster.redis_client import AsyncRedis

log = logging.getLogger("quatro.directory")

COUNT_EVERY_S = 5.0  # how often the parked tables are counted for the gauges


class Waking:
    """The wakes of parked tables, for one gateway (`cell`: its home cell)."""

    def __init__(
        self,
        redis: AsyncRedis,
        actors: Actors,
        pool: Pool,
        records: TableRecords,
        wait_s: float,
        cell: str = "",
    ) -> None:
        """`wait_s`: how long a wake waits for a ready actor when none is (a creation's)."""
        self.redis = redis
        self.actors = actors
        self.pool = pool
        self.records = records
        self.wait_s = wait_s
        self.cell = cell
        self.parked = 0  # tables parked in its cell, at its last count
        self.woken = 0  # tables this gateway woke (the wakes it won)
        self.followed = 0  # wakes it lost to another gateway's, and followed
        self._waking: dict[str, asyncio.Task[None]] = {}  # code -> its wake from here
        # A wake outlives the call that started it (shielded: a player who leaves must not cut
        # it in half), not the gateway (`close`).
        self.tasks = Tasks("waking", report=False)
        self._counting: asyncio.Task[None] | None = None
        self._gave_up: set[str] = set()  # ready actors whose wake this gateway gave up

    async def wake(self, parked: Parked) -> None:
        """Wake the table (one wake at a time per table from this gateway). Returns once the
        record names an actor (this gateway's or another's), or the table is gone; raises what
        kept it from waking (no ready actor in time: NoRoom, TimeoutError)."""
        code = parked.code
        running = self._waking.get(code)
        if running is None or running.done():
            running = self.tasks.spawn(self._wake(parked), code)
            self._waking[code] = running
            running.add_done_callback(lambda _: self._waking.pop(code, None))
        await asyncio.shield(running)

    async def _wake(self, parked: Parked) -> None:
        code, began = parked.code, time.monotonic()
        if parked.moving and parked.moving not in self._gave_up:
            if await self._follow(code, parked.actor, parked.moves):
                self.followed += 1
                return
            log.warning("table %s: its wake into %s never ended: taken over", code, parked.moving)
        into, handle = await self.pool.take(self.wait_s, creation=False)
        await self.redis.set(keys.actor(into), code, ex=KEY_TTL_S)
        won = int(
            await MOVE_HERE.run(self.redis, [keys.table(code)], [parked.actor, parked.moves, into])
        )
        if not won:
            # Another gateway woke it first (or it ended): this actor is still a ready one.
            await DELETE_IF_SAME.run(self.redis, [keys.actor(into)], [code])
            await self.pool.requeue(into)
            self.followed += 1
            await self._follow(code, parked.actor, parked.moves + 1)  # the winner's count
            return
        try:
            async with asyncio.timeout(ADOPT_S):
                outcome = await ask(handle, Adopt(code))
            adopted = outcome.ok
        except Exception as exc:
            log.warning("table %s: ready actor %s did not wake it (%r)", code, into, exc)
            adopted = False
        handed = adopted and bool(
            await HAND_OVER.run(self.redis, [keys.table(code)], [into, won, "0"])
        )
        if not handed:
            # Whatever it holds of the table, it serves nobody: stopped for good; the record
            # stays parked (counting this try) for the next wake.
            await asyncio.to_thread(self.actors.kill, handle)
            await DELETE_IF_SAME.run(self.redis, [keys.actor(into)], [code])
            self._gave_up.add(into)  # its next try here takes over at once
            raise RuntimeError(f"table {code}: not woken in {into}")
        self.records.woken(code, handle, into, won)
        self.woken += 1
        with contextlib.suppress(redis.RedisError, OSError):
            await self.redis.zrem(keys.parked(self.cell), code)
        log.info("table %s: woken in %s in %.2f s", code, into, time.monotonic() - began)

    async def _follow(self, code: str, actor: str, moves: int) -> bool:
        """Another wake is under way: wait (bounded) until the record names its actor, is gone
        (the table ended meanwhile: the caller finds out), or counts another move (a wake
        after it). False when none of that happened within `FOLLOW_S`."""
        deadline = time.monotonic() + FOLLOW_S
        while time.monotonic() < deadline:
            raw = await self.redis.get(keys.table(code))
            if raw is None:
                return True
            record = json.loads(raw)
            if not record.get("parked") or record.get("actor") != actor:
                return True
            if int(record.get("moves", 0)) != moves:
                return True
            await asyncio.sleep(0.1)
        return False

    def start(self) -> None:
        """Count the parked tables now and then, for the gauges (`quatro_tables_parked`)."""
        if self._counting is None or self._counting.done():
            self._counting = self.tasks.spawn(self._count(), "count")

    async def _count(self) -> None:
        key = keys.parked(self.cell)
        while True:
            with contextlib.suppress(redis.RedisError, OSError, TimeoutError):
                # A parked table that ended by its own wait leaves its code behind: dropped.
                await self.redis.zremrangebyscore(key, "-inf", int(time.time() * 1000))
                self.parked = int(await self.redis.zcard(key))
            await asyncio.sleep(COUNT_EVERY_S)

    async def close(self) -> None:
        await self.tasks.close(3.0)
