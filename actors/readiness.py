"""Whether this gateway can call a table actor right now: the part of `/readyz` that Ray's own
check cannot see. A gateway whose Ray driver is connected but whose calls cannot reach a worker
(no route to the workers' ports, an object store that cannot take a reply) fails here, where a
look at the cluster's resources would have said ready.

An answer from any table in the last few seconds is proof enough (a busy gateway never adds a
call for its probe); otherwise the actors at the head of the shared pool are pinged, and if none
answers, a table's actor (one this gateway serves, else any other). Dead pooled names are
dropped on the way, so that no gateway stays unready on a record it can repair; records naming
an actor Ray does not know are passed over: a gateway's readiness does not restore tables.
"""

from __future__ import annotations

import asyncio
import contextlib
from asyncio import FIRST_COMPLETED
from collections.abc import Sequence

from actors.pool import Pool
from actors.protocol import Probe
from actors.ray_calls import LastAnswer, ask
from actors.ray_names import Actors, Handle
from actors.table_records import TableRecords
from actors.tasks import Tasks

SCAN_ROUNDS = 5  # SCAN calls a readiness probe may make looking for a live table
PROBE_NAMES = 8  # actor names a readiness probe may look up before it gives up on records
PROBE_TRIES = 8  # pooled actors a readiness probe pings at once (the first answer will do)
ANSWER_FRESH_S = 10.0  # a table actor's answer this recent proves this gateway can reach tables

Target = tuple[str | None, Handle]  # a pooled actor's name (None: a table's), and the actor


class Readiness:
    def __init__(
        self,
        pool: Pool,
        records: TableRecords,
        actors: Actors,
        last_answer: LastAnswer,
        probe_pool: bool = True,
    ) -> None:
        """`probe_pool` False: a gateway with no pool (QUATRO_POOL_SIZE=0): the Ray check
        stands alone."""
        self.pool = pool
        self.records = records
        self.actors = actors
        self.last_answer = last_answer
        self.probe_pool = probe_pool
        self._probe: asyncio.Task[str] | None = None
        self.tasks = Tasks("readiness", report=False)  # the owner of the probe

    async def reach_tables(self, wait_s: float) -> str:
        """`"ok"` when this gateway can call a table actor right now, else why not. One probe
        at a time: `/readyz` answers anyone, and a flood of it must not become a flood of Ray
        calls and Redis scans."""
        if self._probe is None or self._probe.done():
            self._probe = self.tasks.spawn(self._reach_tables(wait_s), "probe")
        return await asyncio.shield(self._probe)

    async def _reach_tables(self, wait_s: float) -> str:
        if self.last_answer.within(ANSWER_FRESH_S) or not self.probe_pool:
            return "ok"
        loop = asyncio.get_running_loop()
        targets = await self._probe_targets()
        if not targets:
            self.pool.refill_soon()
            return "down: no table actor started yet"
        deadline = loop.time() + wait_s
        why = await self._first_answer(targets, wait_s / 2 if targets[0][0] else wait_s)
        if why == "ok" or targets[0][0] is None:
            return why
        # Every pooled actor asked failed or kept silent: that may be their node, lost, not
        # this gateway (table actors SPREAD, so the refills after a node joined put many of
        # the pool's actors on it). Any table's actor that answers proves the workers
        # reachable; several at once, as that node may hold tables too.
        others: list[Target] = [(None, h) for h in await self._table_actors(PROBE_TRIES)]
        if not others:
            return why
        again = await self._first_answer(others, max(0.1, deadline - loop.time()))
        return "ok" if again == "ok" else why

    async def _first_answer(self, targets: Sequence[Target], wait_s: float) -> str:
        """`"ok"` as soon as one of `targets` answers a `Probe`, else why not."""
        # All at once, the first answer wins: a lost node may hold several of the shared pool's
        # actors (every gateway's refill places them anywhere), and a call to one hangs until
        # Ray declares the node dead (~15 s). Asked one after another, three such names at the
        # pool's head made a gateway unready while other actors answered.
        probes = {asyncio.ensure_future(ask(h, Probe())): name for name, h in targets}
        silent: list[str | None] = []  # failed, or still pending when the time ran out
        why = "down: no answer from a table actor"
        pending = set(probes)
        try:
            async with asyncio.timeout(wait_s):
                while pending:
                    done, pending = await asyncio.wait(pending, return_when=FIRST_COMPLETED)
                    for task in done:
                        error = task.exception()
                        if error is None:
                            self.last_answer.heard()
                            return "ok"
                        why = f"down: {type(error).__name__}"
                        silent.append(probes[task])
        except TimeoutError:
            silent += [probes[task] for task in pending]
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*probes, return_exceptions=True)
            # Those that did not answer go to the far end, so that neither the next probe nor
            # a creation asks them first again.
            for name in silent:
                if name is not None:
                    await self.pool.shared.to_tail(name)
        return why

    async def _probe_targets(self) -> list[Target]:
        """The first PROBE_TRIES live actors among the first PROBE_NAMES of the pool, with their
        names; with the pool used up (every slot of a full cluster taken), any live table: one
        this gateway serves, else any other (no name). A full cluster must not make every
        gateway unready and lock out players coming back to their tables. None: no actor to
        ask (a refill starts one)."""
        found: list[Target] = []
        for name in await self.pool.shared.head(PROBE_NAMES):
            handle = await self.actors.lookup(name)
            if handle is None:
                await self.pool.shared.drop(name)
            elif len(found) < PROBE_TRIES:
                found.append((name, handle))
        if found:
            return found
        # Used up: refill, in case nothing else does (the last refill found a full cluster, and
        # no creation came since to ask again).
        self.pool.refill_soon()
        return [(None, h) for h in await self._table_actors(PROBE_TRIES)]

    async def _table_actors(self, most: int) -> list[Handle]:
        """Up to `most` tables' actors: those this gateway serves first, then others from a
        bounded scan of the records (a probe every few seconds must not walk a Redis full of
        sessions)."""
        found = self.records.held()[: most // 2]
        looked = 0
        async with contextlib.aclosing(self.records.actor_names(SCAN_ROUNDS)) as names:
            async for name in names:
                looked += 1
                handle = await self.actors.lookup(name)
                if handle is not None:
                    found.append(handle)
                if len(found) >= most or looked >= PROBE_NAMES:
                    break
        return found

    async def close(self) -> None:
        await self.tasks.close()
