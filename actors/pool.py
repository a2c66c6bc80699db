"""The pool of ready, table-less actors: a buffer of ready servers that follows demand.

Starting a table actor takes a worker process, so new tables come from a list of actors started
ahead of time, shared by every gateway (actors/pool_list.py). Each gateway keeps that list at
its target (actors/pool_demand.py) by its refill pass, which starts actors `at_once` at a time
and no more (actors/pool_starts.py): Ray starts one worker process per actor, and a node asked
for dozens at once (a burst of creations, each starting its own) thrashes: processes take so
long that calls time out and workers are started again. A creation that finds the list empty
does not start an actor of its own: it waits, first come first served, for the next one this
gateway's refill places. Only when the slot gate (actors/slots.py) grants no room and nothing
is on its way is it refused `NoRoom`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, deque

from actors.placement import answering_nodes, evictions, plan, with_tables
from actors.pool_demand import Demand, PoolPolicy
from actors.pool_floor import Floor
from actors.pool_list import PoolList
from actors.pool_starts import Starts
from actors.ray_calls import LastAnswer
from actors.ray_names import Actors, Handle
from actors.slots import Slots
from actors.tasks import Tasks
from cluster.redis_client import AsyncRedis

log = logging.getLogger("quatro.pool")

# How often a gateway looks whether the pool's ready actors are spread over the nodes
# (actors/placement.py): a node that joined is seen without waiting for a creation. One
# gateway of the cell at a time moves them (its turn lasts SPREAD_TURN_MS, renewed while it
# lives), and never while its refill runs: the refill's pacing (its quiet time after
# creations) is left alone.
WATCH_S = 5.0
SPREAD_TURN_MS = 15_000
# A pass left short of its target by a failed start or a full cluster looks again this much
# later: not only at the next creation, which would find the pool below its minimum.
RETRY_S = 5.0
# While creations wait, the refill looks at the shared list this often: an actor whose table
# ended comes back to it by itself (actors/reuse.py), as do other gateways' surplus ones, and
# serves the first creation waiting rather than the one after the start under way.
WAITING_LOOK_S = 0.2


class NoRoom(Exception):
    """Every table slot of the cluster is taken (past the reserve kept for restarts)."""


class Pool:
    def __init__(
        self,
        redis: AsyncRedis,
        slots: Slots,
        actors: Actors,
        last_answer: LastAnswer,
        policy: PoolPolicy,
        cell: str = "",
        floor: Floor | None = None,
    ) -> None:
        """`cell`: the cell whose Ray runs this pool's actors (its own list: `PoolList`);
        `floor`: the operator's floor (actors/pool_floor.py; None: none)."""
        self.shared = PoolList(redis, actors, cell)
        self.slots = slots
        self.demand = Demand(policy)
        self.floor = floor if floor is not None else Floor(redis, cell)
        self.ready = 0  # live actors on the shared list at the last pass (metrics)
        self.served = 0  # creations served by this gateway (metrics: starts per table)
        self._waiters: deque[asyncio.Future[tuple[str, Handle]]] = deque()
        # The one owner of the pool's tasks (its refill pass, its starts, its give-backs, the
        # passes that let it fall back): `close` cancels them and waits for each.
        self.tasks = Tasks("pool", report=False)
        self._wake = asyncio.Event()
        self.starts = Starts(actors, slots, last_answer, self.tasks, self._placed, self._wake.set)
        self._refill: asyncio.Task[None] | None = None
        self._pace: asyncio.Task[None] | None = None
        self._later: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None

    # -- for metrics (read from any thread) ----------------------------------------------------
    @property
    def last_target(self) -> int:
        return self.demand.last_target

    @property
    def starting(self) -> int:
        return self.starts.count

    @property
    def started(self) -> int:
        return self.starts.started

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.done())

    # -- taking -------------------------------------------------------------------------------
    async def take(self, wait_s: float, creation: bool = True) -> tuple[str, Handle]:
        """A ready actor, taken out of the pool; when there is none, the next one placed here,
        in the order asked, within `wait_s` (TimeoutError past it). NoRoom when the cluster has
        no slot for one and none is on its way. Not a `creation`: it wakes a parked table
        (actors/waking.py), not counted as a table served, a demand all the same."""
        loop = asyncio.get_running_loop()
        if not self._waiters:  # never ahead of those already waiting
            taken = await self.shared.pop_live()
            if taken is not None:
                return self._served(taken, creation)
        waiter: asyncio.Future[tuple[str, Handle]] = loop.create_future()
        self._waiters.append(waiter)
        self.refill_soon()
        try:
            async with asyncio.timeout(wait_s):
                return self._served(await waiter, creation)
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                # Handed an actor just as we gave up (timeout, or the caller went away): it
                # goes back to the pool, it holds a slot. A task: we may be cancelled.
                self.tasks.spawn(self.shared.give_back(waiter.result()[0]), "give back")
            raise
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    async def take_ready(self) -> tuple[str, Handle] | None:
        """A ready actor taken out of the pool now, or None: nothing is waited for."""
        taken = await self.shared.pop_live()
        return None if taken is None else self._served(taken)

    async def requeue(self, name: str) -> None:
        """A pooled actor that could not answer, back at the far end (`PoolList.requeue`)."""
        await self.shared.requeue(name)

    def _served(self, taken: tuple[str, Handle], creation: bool = True) -> tuple[str, Handle]:
        """Count a creation served (its time, and a wake's: the demand that raises the target),
        refill."""
        if creation:
            self.served += 1
        self.demand.served(time.monotonic())
        self._fall_back_later()
        self.refill_soon()
        return taken

    def _hand(self, name: str, handle: Handle) -> bool:
        """Give a newly placed actor to the first creation still waiting, if any."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result((name, handle))
                return True
        return False

    async def _placed(self, name: str, handle: Handle) -> None:
        if self._hand(name, handle):
            return
        try:
            await self.shared.push(name)
        except Exception as exc:
            # The store out of reach (a primary failing over): an actor on no list would hold
            # its slot for good, and it says nothing of the cluster's room.
            log.warning("new table actor %s could not be pooled (%r): stopped", name, exc)
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.shared.actors.kill, handle)

    def _refuse_waiting(self, beyond: int) -> None:
        """NoRoom for the creations waiting past the first `beyond` (what is on its way)."""
        pending = [w for w in self._waiters if not w.done()]
        for waiter in pending[beyond:]:
            waiter.set_exception(NoRoom())
            self._waiters.remove(waiter)

    # -- the refill ---------------------------------------------------------------------------
    def refill_soon(self) -> None:
        self._wake.set()
        if self._refill is None or self._refill.done():
            self._refill = self.tasks.spawn(self._refill_logged(), "refill")
        if self._watch is None or self._watch.done():
            self._watch = self.tasks.spawn(self._watching(), "watch")

    async def _watching(self) -> None:
        while True:
            await asyncio.sleep(WATCH_S)
            # Moves left: go on as soon as the last ones are placed, not a whole period later.
            while (self._refill is None or self._refill.done()) and await self._spread():
                await self.starts.none.wait()
            # A pass every period, creations or not: an operator's floor rises on its own
            # clock, and actors of ended tables come back above the target (the surplus trim).
            self.refill_soon()

    async def _refill_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self.refill_soon()

    def _fall_back_later(self) -> None:
        """Passes once the ramp is over and once this creation leaves the demand window."""
        if self._later is not None:
            self._later.cancel()
        self._later = self.tasks.spawn(self._fall_back(), "fall back")

    async def _fall_back(self) -> None:
        for delay in self.demand.fall_back_passes():
            await asyncio.sleep(delay)
            self.refill_soon()

    async def _refill_logged(self) -> None:
        try:
            await self._fill()
        except Exception:
            log.exception("could not refill the table pool")
            self._refuse_waiting(self.starts.count)

    async def _fill(self) -> None:
        """Start actors, `at_once` at most side by side, until the waiting creations are served
        and the pool holds the target; then stop the surplus over every gateway's target."""
        starts, at_once = self.starts, self.demand.policy.at_once
        if starts.count == 0:
            # A start that failed while no pass ran (a spread's, or one outliving a pass that
            # the store's failover broke off) refused nobody then: it must not refuse the
            # creations of this pass (a burst after a failover answered `no_room`).
            starts.full = False
        while True:
            self._wake.clear()
            while self._waiters and (taken := await self.shared.pop_live()) is not None:
                if not self._hand(*taken):
                    await self.shared.give_back(taken[0])
            self.demand.floor = await self.floor.now()
            target = self.demand.target(time.monotonic())
            live = self.ready = await self.shared.live()
            shortfall = 0 if self.demand.in_ramp(time.monotonic()) else max(0, target - live)
            buffer, wake_in = self.demand.buffer_starts(
                shortfall, starts.count, self.waiting, starts.last_end, time.monotonic()
            )
            if wake_in is not None and (self._pace is None or self._pace.done()):
                self._pace = self.tasks.spawn(self._refill_after(wake_in), "pace")
            # Starts on their way serve the creations waiting, but a stuck one (pool_starts.py)
            # may not be placed before they give up: those it would serve get starts of their own.
            serving = starts.count - min(starts.stuck(time.monotonic()), self.waiting)
            needed = buffer + self.waiting - serving
            if needed > 0 and serving < at_once and not starts.full:
                room = await self.slots.room(min(needed, at_once - serving))
                starts.full = room == 0
                for _ in range(room):
                    starts.start()
            if starts.full:
                self._refuse_waiting(starts.count)
            if starts.count == 0:
                short, starts.full = starts.full and needed > 0, False  # the next pass asks again
                if needed <= 0:
                    await self.shared.trim(self.demand.keep(time.monotonic()), live)
                if not self._wake.is_set():
                    if short and (self._pace is None or self._pace.done()):
                        self._pace = self.tasks.spawn(self._refill_after(RETRY_S), "retry")
                    return  # nothing asked meanwhile (refill_soon only wakes a running pass)
                continue
            if not self.waiting:
                await self._wake.wait()
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WAITING_LOOK_S):
                    await self._wake.wait()

    # -- where the ready actors run (actors/placement.py) ------------------------------------
    async def _spread(self) -> bool:
        """Move ready actors from nodes above their share to nodes below: each one claimed
        off the list, stopped, and replaced by a new one on the node below, `at_once` at most
        side by side. True when it started one and moves are left (the watch then goes on
        once they are placed, rather than a whole period later; never in a loop that starts
        nothing)."""
        at_once = self.demand.policy.at_once
        if self.starts.count or not await self.shared.lead(SPREAD_TURN_MS):
            return False
        free, total = await answering_nodes()
        if len(free) < 2:
            return False
        where = await self.shared.nodes()
        pooled = dict(Counter(where.values()))
        if self.slots.max_slots > 0:
            # Ray's autoscaler at work: a node carrying no table is its to remove, and a ready
            # actor there (one whose table ended, actors/reuse.py) holds a slot, which keeps
            # the node from ever being idle. So those move to nodes that carry tables.
            holding = with_tables(free, total, pooled)
            moves = evictions(pooled, free, holding) + plan(pooled, holding)
        else:
            moves = plan(pooled, free)
        started = 0
        for src, dst in moves[:at_once]:
            name = next((n for n, node in where.items() if node == src), None)
            if name is None:
                return False
            del where[name]
            if not await self.shared.claim(name):
                continue  # taken for a table meanwhile
            handle = await self.shared.actors.lookup(name)
            if handle is not None and not await self.shared.stop(name, handle):
                continue  # it holds a table: not the pool's to move
            log.info("pool spread: %s stopped on node %s, one started on %s", name, src, dst)
            self.starts.start(dst)
            started += 1
        return started > 0 and len(moves) > started

    async def close(self) -> None:
        await self.tasks.close()
        for waiter in self._waiters:
            waiter.cancel()
