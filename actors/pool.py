"""The pool of ready, table-less actors: a buffer of ready servers that follows demand.

Starting a table actor takes a worker process (~0.6 s alone, seconds on a loaded node), so new
tables come from a Redis list of actors started ahead of time, shared by every gateway. Each
gateway keeps that list at its *target*: `minimum` plus the tables it opened in the last
`DEMAND_WINDOW_S`, at most `maximum` — a burst of creations raises the buffer while it lasts,
and a quiet spell lets it fall back (the surplus is stopped, down to the highest target any
gateway announced, so that one gateway does not stop what a busier one keeps).

Actors are started `at_once` at a time and no more: Ray starts one worker process per actor,
and a node asked for dozens at once (a burst of creations, each starting its own) thrashes:
processes take so long that calls time out and workers are started again. A creation that
finds the list empty does not start an actor of its own: it waits, first come first served,
for the next one this gateway's refill places. Only when the slot gate (actors/slots.py) grants
no room and nothing is on its way is it refused `NoRoom`.

Every name taken from the list is checked with Ray: one Ray does not know (Redis outlived the
cluster) is dropped there and then, and only live names count towards the target.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import ray
import redis.asyncio as aioredis
from ray.actor import ActorHandle

from actors import keys
from actors.slots import Slots
from actors.tasks import Tasks

log = logging.getLogger("quatro.pool")

DEMAND_WINDOW_S = 10.0  # the creations of this long raise the target
POOLED_FRESH_S = 30.0  # a pooled name seen alive this recently is not looked up again
# A new table actor not placed and answering by then is killed (see actors.slots): a worker
# process starts in about a second, and far slower on a loaded node; a new Kubernetes worker
# pod (the autoscaler's answer to waiting tables) in a few minutes.
PLACE_WAIT_S = 30.0
PLACE_WAIT_GROWING_S = 300.0

# KEYS[1]: hash gateway -> "target:until_ms"; ARGV: this gateway's id, its target, for how long
# (ms). Records ours, forgets what has expired (a gateway gone), returns the highest target.
ANNOUNCE = """
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
"""

# KEYS[1]: the pool; ARGV[1]: the size to trim it to. One name off its tail while it is longer:
# gateways trimming at once never take it below that size together.
TRIM_ONE = """
if redis.call('LLEN', KEYS[1]) > tonumber(ARGV[1]) then
  return redis.call('RPOP', KEYS[1])
end
return false
"""

Handle = ActorHandle[Any]
Spawn = Callable[[str], Handle]  # a new table actor of that name
Lookup = Callable[[str], Awaitable[Handle | None]]  # name -> the live actor, None if Ray has none


class NoRoom(Exception):
    """Every table slot of the cluster is taken (past the reserve kept for restarts)."""


class Pool:
    def __init__(
        self,
        redis: aioredis.Redis,
        slots: Slots,
        spawn: Spawn,
        lookup: Lookup,
        on_answer: Callable[[], None],
        minimum: int,
        maximum: int,
        at_once: int,
        quiet_s: float = 0.0,
        cell: str = "",
        start_gap_s: float = 0.0,
    ) -> None:
        """`cell`: the cell whose Ray runs this pool's actors: its list and targets are that
        cell's own (`keys.pool`), since a pooled name means nothing to another cell's Ray."""
        self.redis = redis
        self.key = keys.pool(cell)
        self.targets_key = keys.pool_targets(cell)
        self.slots = slots
        self._spawn = spawn
        self._lookup = lookup
        self._on_answer = on_answer
        self.minimum = max(0, minimum)
        self.maximum = max(self.minimum, maximum)
        self.at_once = max(1, at_once)
        # Starting an actor costs a worker process's start (~0.6 s of CPU) on the cores the
        # tables in play use: with `quiet_s`, the buffer is refilled only once no creation came
        # for that long, so a ramp takes what was started ahead and starts only for creations
        # that find it empty (0: refill at once, as before).
        self.quiet_s = max(0.0, quiet_s)
        # With `start_gap_s`, the buffer grows one actor at a time, each start that long after
        # the last one ended, so that what play loses to starts is one process now and then,
        # never a flock of them. A creation that finds the pool empty is not paced: it waits.
        self.start_gap_s = max(0.0, start_gap_s)
        self._last_start_end = float("-inf")  # monotonic
        self._pace: asyncio.Task[None] | None = None
        self._takes: deque[float] = deque()  # monotonic times of the creations of the window
        self.last_target = self.minimum
        self._waiters: deque[asyncio.Future[tuple[str, Handle]]] = deque()
        self._starting = 0  # actors started and not yet placed
        # The one owner of the pool's tasks (its refill pass, its starts, its give-backs, the
        # pass that lets it fall back): `close` cancels them and waits for each.
        self.tasks = Tasks("pool", report=False)
        self._full = False  # the last start was not placed in time, or no room was granted
        self._wake = asyncio.Event()
        self._refill: asyncio.Task[None] | None = None
        self._later: asyncio.Task[None] | None = None
        self._alive: dict[str, float] = {}  # pooled name -> loop time last seen alive
        self._announce = redis.register_script(ANNOUNCE)
        self._trim_one = redis.register_script(TRIM_ONE)
        self._id = uuid.uuid4().hex[:10]  # this gateway's entry among the announced targets

    # -- what the pool aims at ----------------------------------------------------------------
    def target(self) -> int:
        """How many ready actors this gateway keeps: its minimum plus its recent creations.
        (On the event loop; `last_target`, for metrics, may be read from any thread.)"""
        horizon = time.monotonic() - DEMAND_WINDOW_S
        while self._takes and self._takes[0] < horizon:
            self._takes.popleft()
        self.last_target = min(self.maximum, self.minimum + len(self._takes))
        return self.last_target

    @property
    def starting(self) -> int:
        return self._starting

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.done())

    # -- taking -------------------------------------------------------------------------------
    async def take(self, wait_s: float) -> tuple[str, Handle]:
        """A ready actor, taken out of the pool; when there is none, the next one placed here,
        in the order asked, within `wait_s` (TimeoutError past it). NoRoom when the cluster has
        no slot for one and none is on its way."""
        loop = asyncio.get_running_loop()
        if not self._waiters:  # never ahead of those already waiting
            taken = await self._pop_live()
            if taken is not None:
                return self._served(taken)
        waiter: asyncio.Future[tuple[str, Handle]] = loop.create_future()
        self._waiters.append(waiter)
        self.refill_soon()
        try:
            async with asyncio.timeout(wait_s):
                return self._served(await waiter)
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                # Handed an actor just as we gave up (timeout, or the caller went away): it
                # goes back to the pool, it holds a slot. A task: we may be cancelled.
                self.tasks.spawn(self._give_back(waiter.result()[0]), "give back")
            raise
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _served(self, taken: tuple[str, Handle]) -> tuple[str, Handle]:
        """Count a creation served (its time: the demand that raises the target), refill."""
        self._takes.append(time.monotonic())
        self.target()
        self._fall_back_later()
        self.refill_soon()
        return taken

    async def _pop_live(self) -> tuple[str, Handle] | None:
        while name := await self.redis.lpop(self.key):
            self._alive.pop(str(name), None)
            handle = await self._lookup(str(name))
            if handle is None:
                log.warning("pooled actor %s is gone (unknown to Ray): skipped", name)
                continue
            return str(name), handle
        return None

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

    async def _give_back(self, name: str) -> None:
        with contextlib.suppress(Exception):  # Redis out of reach: the actor is left idle
            await self.redis.lpush(self.key, name)
            self._alive[name] = asyncio.get_running_loop().time()

    def _hand(self, name: str, handle: Handle) -> bool:
        """Give a newly placed actor to the first creation still waiting, if any."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result((name, handle))
                return True
        return False

    def _refuse_waiting(self, beyond: int) -> None:
        """NoRoom for the creations waiting past the first `beyond` (what is on its way)."""
        pending = [w for w in self._waiters if not w.done()]
        for waiter in pending[beyond:]:
            waiter.set_exception(NoRoom())
            self._waiters.remove(waiter)

    # -- the shared list ----------------------------------------------------------------------
    async def drop(self, name: str) -> None:
        """Remove one dead name from the shared pool. By value, once: another gateway popping
        it at the same moment is fine, and a live name next to it stays."""
        self._alive.pop(name, None)
        if await self.redis.lrem(self.key, 1, name):
            log.warning("pooled actor %s is gone (unknown to Ray): dropped from the pool", name)

    async def live(self) -> int:
        """How many actors of the shared pool are alive; dead names are dropped on the way."""
        names = [str(n) for n in await self.redis.lrange(self.key, 0, -1)]
        now = asyncio.get_running_loop().time()
        unsure = [n for n in names if now - self._alive.get(n, float("-inf")) > POOLED_FRESH_S]
        found = await asyncio.gather(*(self._lookup(n) for n in unsure))
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

    # -- the refill ---------------------------------------------------------------------------
    def refill_soon(self) -> None:
        self._wake.set()
        if self._refill is None or self._refill.done():
            self._refill = self.tasks.spawn(self._refill_logged(), "refill")

    def _in_ramp(self) -> bool:
        """Whether creations are coming in (the last one within `quiet_s`)."""
        return bool(self.quiet_s and self._takes) and (
            time.monotonic() - self._takes[-1] < self.quiet_s
        )

    def _paced(self, buffer: int) -> int:
        """The part of the buffer's shortfall that may start now: all of it unpaced, else one
        actor once `start_gap_s` has passed since the last start ended (a pass is woken then)."""
        if not self.start_gap_s or buffer <= 0:
            return buffer
        if self._starting:
            # One of the buffer's on its way is counted against it; a start for a waiting
            # creation is a process starting now too, so the buffer's waits for its end.
            return min(1, max(0, self._starting - self.waiting))
        wait = self._last_start_end + self.start_gap_s - time.monotonic()
        if wait <= 0:
            return 1
        if self._pace is None or self._pace.done():
            self._pace = self.tasks.spawn(self._refill_after(wait), "pace")
        return 0

    async def _refill_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self.refill_soon()

    def _fall_back_later(self) -> None:
        """A pass once this creation leaves the demand window, to let the pool fall back."""
        if self._later is not None:
            self._later.cancel()
        self._later = self.tasks.spawn(self._fall_back(), "fall back")

    async def _fall_back(self) -> None:
        if 0 < self.quiet_s < DEMAND_WINDOW_S:
            await asyncio.sleep(self.quiet_s + 0.1)
            self.refill_soon()  # the ramp is over: the buffer is grown back now
            await asyncio.sleep(DEMAND_WINDOW_S - self.quiet_s + 0.4)
        else:
            await asyncio.sleep(DEMAND_WINDOW_S + 0.5)
        self.refill_soon()

    async def _refill_logged(self) -> None:
        try:
            await self._fill()
        except Exception:
            log.exception("could not refill the table pool")
            self._refuse_waiting(self._starting)

    async def _fill(self) -> None:
        """Start actors, `at_once` at most side by side, until the waiting creations are served
        and the pool holds the target; then stop the surplus over every gateway's target."""
        while True:
            self._wake.clear()
            while self._waiters and (taken := await self._pop_live()) is not None:
                if not self._hand(*taken):
                    await self._give_back(taken[0])
            target = self.target()
            live = await self.live()
            buffer = self._paced(0 if self._in_ramp() else max(0, target - live))
            needed = buffer + self.waiting - self._starting
            if needed > 0 and self._starting < self.at_once and not self._full:
                room = await self.slots.room(min(needed, self.at_once - self._starting))
                self._full = room == 0
                for _ in range(room):
                    self._start_one()
            if self._full:
                self._refuse_waiting(self._starting)
            if self._starting == 0:
                self._full = False  # the next creation asks the slot gate again
                if needed <= 0:
                    await self._trim(target, live)
                if not self._wake.is_set():
                    return  # nothing asked meanwhile (refill_soon only wakes a running pass)
                continue
            await self._wake.wait()

    def _start_one(self) -> None:
        self._starting += 1
        self.tasks.spawn(self._start(), "start")

    async def _start(self) -> None:
        try:
            name = f"{keys.ACTOR_PREFIX}{uuid.uuid4().hex[:12]}"
            handle = self._spawn(name)
            if not await self._placed(name, handle):
                self._full = True
                return
            if not self._hand(name, handle):
                await self.redis.rpush(self.key, name)
                self._alive[name] = asyncio.get_running_loop().time()
        except Exception:
            log.exception("a new table actor could not be started")
            self._full = True
        finally:
            self._starting -= 1
            self._last_start_end = time.monotonic()
            self._wake.set()

    async def _placed(self, name: str, handle: Handle) -> bool:
        """Whether a new actor is placed and answers in time (PLACE_WAIT_S). One that is not is
        killed (cancelled waiting, too): left in Ray's queue, it could take the next free slot
        from a crashed table's restart."""
        try:
            async with asyncio.timeout(
                PLACE_WAIT_GROWING_S if self.slots.can_grow else PLACE_WAIT_S
            ):
                await handle.ping.remote()
        except BaseException as exc:
            with contextlib.suppress(Exception):  # the control store out of reach: nothing to do
                ray.kill(handle, no_restart=True)
            log.warning("new table actor %s not placed: killed (%s)", name, type(exc).__name__)
            if isinstance(exc, TimeoutError):
                return False
            raise
        self._on_answer()
        return True

    async def _trim(self, target: int, live: int) -> None:
        """Stop pooled actors past the highest target any gateway announced (each holds a slot
        and ~100 MB). Ours holds for two demand windows, renewed at every quiet pass."""
        ttl_ms = int(DEMAND_WINDOW_S * 2000)
        highest = int(
            await self._announce(keys=[self.targets_key], args=[self._id, target, ttl_ms])
        )
        for _ in range(live - highest):
            name = await self._trim_one(keys=[self.key], args=[highest])
            if name is None:
                return
            self._alive.pop(str(name), None)
            handle = await self._lookup(str(name))
            if handle is not None:
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(ray.kill, handle, no_restart=True)
            log.info("pool above its target (%d): stopped %s", highest, name)

    async def close(self) -> None:
        await self.tasks.close()
        for waiter in self._waiters:
            waiter.cancel()
