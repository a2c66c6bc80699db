"""A gateway's part in its cell's life (actors/cells.py): it renews the cell's registry record
every `PUBLISH_S` while its Ray answers, and now and then moves here a few tables of cells that
are gone, which nobody asked for since (a table with only bots, or whose players all left):
until then their actor runs nowhere, and their bots and clocks wait.
"""

from __future__ import annotations

import asyncio
import logging

from actors.cells import PUBLISH_S, Registry, cell_of
from actors.protocol import Summary
from actors.slots import table_slots
from actors.table_calls import TableCalls
from actors.table_records import TableGone, TableRecords
from actors.tasks import Tasks

log = logging.getLogger("quatro.directory")

SLOTS_READ_S = 2.0  # a reading of Ray's slots slower than this does not renew the cell's record
SWEEP_EVERY = 2  # registry renewals between two sweeps of lost cells' tables
SWEEP_TABLES = 4  # tables of one lost cell a sweep moves at most
# A cell is swept only once it has been gone this long as seen from here: a cell whose gateways
# restart (a deploy) lets its record lapse for a few seconds, and a sweep then would move every
# one of its healthy tables (their old incarnations fenced: nothing lost, but every player's
# link dropped). A table asked for moves sooner, and only when its link is silent too.
SWEEP_GRACE_S = 15.0


class CellSweep:
    def __init__(self, registry: Registry, records: TableRecords, calls: TableCalls) -> None:
        self.registry = registry
        self.records = records
        self.calls = calls
        self._slots_read: asyncio.Task[tuple[float, float]] | None = None
        self._gone_since: dict[str, float] = {}  # lost cell -> loop time first seen gone
        self._sweeping: asyncio.Task[None] | None = None
        self.tasks = Tasks("cell", report=False)  # the owner of the renewals and sweeps

    def start(self) -> None:
        """Renew the cell's record, and sweep, for as long as the gateway runs."""
        self.tasks.spawn(self._publish_forever(), "cell registry")

    async def _publish_forever(self) -> None:
        passes = 0
        cell = self.registry.home
        while True:
            try:
                await self.registry.publish(*await self._read_slots())
            except Exception as exc:  # Ray or Redis out of reach: the record expires, as it must
                log.warning("cell %s: registry record not renewed (%s)", cell, exc)
            else:
                passes += 1
                # A task of its own: a sweep waits for actors to start (seconds each), and the
                # renewals must go on meanwhile, or this cell's record would lapse and other
                # cells sweep it in turn. One sweep at a time.
                sweeping = self._sweeping is not None and not self._sweeping.done()
                if passes % SWEEP_EVERY == 0 and not sweeping:
                    self._sweeping = self.tasks.spawn(self._sweep_logged(), "sweep")
            await asyncio.sleep(PUBLISH_S)

    async def _sweep_logged(self) -> None:
        try:
            await self._sweep()
        except Exception:
            log.exception("cell %s: the sweep of lost cells failed", self.registry.home)

    async def _sweep(self) -> None:
        """A few tables of each lost cell, one after another, so that a lost cell's thousands
        do not ask this cell's Ray for thousands of workers at once; other cells' gateways
        sweep too, and `MOVE` gives each table to one of them."""
        now = asyncio.get_running_loop().time()
        gone = await self.registry.gone()
        self._gone_since = {c: self._gone_since.get(c, now) for c in gone}
        for cell in gone:
            if now - self._gone_since[cell] < SWEEP_GRACE_S:
                continue
            for code in await self.registry.tables_of(cell, SWEEP_TABLES):
                record = await self.records.record(code)
                if record is None or cell_of(record) != cell:
                    await self.registry.forget(cell, code)  # stopped, or moved by someone else
                    continue
                try:
                    await self.calls.ask(code, Summary())  # moved and started here on the way
                except TableGone:
                    await self.registry.forget(cell, code)
                except Exception as exc:
                    log.warning("table %s of lost cell %s not moved yet (%s)", code, cell, exc)

    async def _read_slots(self) -> tuple[float, float]:
        """Ray's free and total slots, within SLOTS_READ_S (TimeoutError past it). A reading
        that hangs (the head lost) is not started again while it runs: a thread each second
        would use up the executor that Ray lookups share."""
        if self._slots_read is None or self._slots_read.done():
            self._slots_read = self.tasks.spawn(asyncio.to_thread(table_slots), "slots")
        async with asyncio.timeout(SLOTS_READ_S):
            return await asyncio.shield(self._slots_read)

    async def close(self) -> None:
        await self.tasks.close()
