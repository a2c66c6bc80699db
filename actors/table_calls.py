"""Calls to a table by its code, through its actor's restarts, and across cells.

Ray never retries a table actor's call here (`max_task_retries=0`); the call is asked again
instead, through `ask` (actors/ray_calls.py), until the actor is back or `RESTART_WAIT_S` is
spent: commands are safe to send again because they carry an id. An actor whose node is lost
is not waited for: its table is moved to a live node (actors/rescue.py). With cells, a table of
another cell is asked of a gateway of that cell (`RemoteCells`), and moved here when that cell
is gone.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TypeVar

from ray.exceptions import GetTimeoutError

from actors.cells import CellInfo, CellUnreachable, ForeignTable, Registry, RemoteCells, cell_of
from actors.protocol import Address, TableCall, TableNotHere, addressed
from actors.ray_calls import ActorGone, LastAnswer, ask, dead_for_good
from actors.ray_names import Handle
from actors.rescue import UNREACHABLE_S, Rescue
from actors.table_records import Parked, TableGone, TableRecords
from actors.waking import Waking

log = logging.getLogger("quatro.directory")

A = TypeVar("A")

# How long a call waits for a crashed table actor to come back. A lost node was the slow case
# (Ray's verdict, then a restart: the soak saw 14-76 s); its tables are moved now
# (actors/rescue.py), and this covers what is left: Ray's own restarts on a loaded node, and a
# move whose first new actor was lost too (docs/reliability.md).
RESTART_WAIT_S = 40.0
LINK_CHECK_S = 1.0  # a table's last known link address answering within this: not lost


class _Moved(Exception):
    """The table moved off its actor's lost node while a call to it waited."""


class Patience:
    """The wait of one call: `RESTART_WAIT_S` in all, pauses doubling from 50 ms to 0.5 s."""

    def __init__(self, wait_s: float = RESTART_WAIT_S) -> None:
        self._until = asyncio.get_running_loop().time() + wait_s
        self._delay = 0.05

    @property
    def spent(self) -> bool:
        return asyncio.get_running_loop().time() > self._until

    async def pause(self) -> None:
        await asyncio.sleep(self._delay)
        self._delay = min(self._delay * 2, 0.5)


class TableCalls:
    def __init__(
        self,
        records: TableRecords,
        last_answer: LastAnswer,
        registry: Registry | None = None,
        remote: RemoteCells | None = None,
        rescue: Rescue | None = None,
        waking: Waking | None = None,
    ) -> None:
        """`registry` and `remote`: the cells' records, and how a gateway of another cell is
        asked (None without cells); `rescue`: how a table of a lost node is moved (None: it
        waits for Ray); `waking`: how a parked table wakes (None: a parked one is gone)."""
        self.records = records
        self.last_answer = last_answer
        self.registry = registry
        self.remote = remote
        self.rescue = rescue
        self.waking = waking
        # The last data-plane address each table answered `Endpoint` with: a table whose cell
        # lost its registry record but whose link still answers (a partition between that cell
        # and Redis, not a death) is not moved.
        self._endpoints: dict[str, Address] = {}

    async def ask(self, code: str, call: TableCall[A]) -> A:
        """`call` answered by the table of `code`, wherever it runs. Raises TableGone."""
        if self.registry is None:
            return await self.ask_here(code, call)
        patience = Patience()
        while True:
            record = await self.records.record(code)
            if record is None:
                raise TableGone(code)
            cell = cell_of(record)
            try:
                if cell == self.records.cell:
                    answer = await self.ask_here(code, call)
                else:
                    answer = await self._ask_elsewhere(code, cell, call)
            except (ForeignTable, CellUnreachable) as exc:
                # Moved meanwhile (read the record again), or its cell did not answer (yet).
                if patience.spent:
                    raise
                log.info("table %s: %s; trying again", code, exc)
                await patience.pause()
                continue
            if isinstance(answer, Address):
                self._endpoints[code] = answer
            return answer

    async def ask_here(self, code: str, call: TableCall[A]) -> A:
        """`ask` with this gateway's own Ray: ForeignTable when the table is of another cell
        (what another cell's gateway asks here must not bounce on)."""
        patience = Patience()
        call = addressed(call, code)
        while True:
            try:
                handle = await self.records.handle(code)
            except Parked as parked:
                await self.wake(parked, patience)
                continue
            found = self.records.found(code)
            try:
                answer = await self._watched(code, handle, call)
            except _Moved:
                continue  # the record names a new incarnation: ask it
            except TableNotHere as exc:
                # The actor serves another table now, or none: the table stopped (its record
                # went first), moved into another actor (ask that one), or was taken back.
                self.records.forget(code)
                if await self.records.left(code, found[0] if found else "", handle):
                    raise TableGone(code) from exc
                if patience.spent:
                    raise TableGone(code) from exc
            except ActorGone as exc:
                if dead_for_good(exc):
                    self.records.forget(code)
                    if await self.records.record(code) is None:
                        raise TableGone(code) from exc
                # Ray's own word that the actor is unreachable: its node is judged at once.
                if await self._rescued(code, handle):
                    continue
                if patience.spent:
                    raise
                log.info("table %s: actor unavailable (%s), retrying", code, type(exc).__name__)
                await patience.pause()
            except GetTimeoutError:
                if patience.spent:
                    raise
            else:
                self.last_answer.heard()
                return answer

    async def wake(self, parked: Parked, patience: Patience | None = None) -> None:
        """Wake the parked table (actors/waking.py); a wake that failed is tried again, within
        the call's patience. Raises TableGone without a way to wake it."""
        if self.waking is None:
            raise TableGone(parked.code)
        try:
            await self.waking.wake(parked)
        except Exception as exc:
            if patience is None or patience.spent:
                raise
            log.warning("table %s: not woken (%r); trying again", parked.code, exc)
            await patience.pause()

    async def _watched(self, code: str, handle: Handle, call: TableCall[A]) -> A:
        """`ask`, but a call left unanswered for `UNREACHABLE_S` has its actor's node judged,
        and is dropped (raising _Moved) once the table moved: a call to a machine that vanished
        may wait for Ray's verdict, not for an error."""
        if self.rescue is None:
            return await ask(handle, call)
        asking = asyncio.ensure_future(ask(handle, call))
        try:
            while True:
                done, _ = await asyncio.wait({asking}, timeout=UNREACHABLE_S)
                if done:
                    return asking.result()
                if await self._rescued(code, handle):
                    raise _Moved(code)
        finally:
            if not asking.done():
                asking.cancel()

    async def _rescued(self, code: str, handle: Handle) -> bool:
        """Whether the table was moved off its actor's lost node (by here or another gateway):
        then its handle is forgotten, and the caller asks the new incarnation."""
        found = self.records.found(code)
        if self.rescue is None or found is None:
            return False
        try:
            place = await self.rescue.lost(handle)
            if place is None:
                return False
            name, moves = found
            moved = await self.rescue.move(code, name, moves, handle, place)
        except Exception:
            log.exception("table %s: judging or moving it off its node failed", code)
            return False
        if moved:
            self.records.forget(code)
        return moved

    async def _ask_elsewhere(self, code: str, cell: str, call: TableCall[A]) -> A:
        """Ask a gateway of the table's cell; with that cell gone (no registry record, and the
        table's last link address silent), move the table here. CellUnreachable: try again."""
        assert self.registry is not None
        assert self.remote is not None
        info: CellInfo | None = await self.registry.get(cell)
        if info is not None:
            return await self.remote.ask(info, code, call)
        if await self._link_answers(code):
            raise CellUnreachable(f"cell {cell!r} has no registry record but its link answers")
        if await self.registry.move(code, cell):
            log.warning(
                "table %s: cell %r is gone; moved to cell %r", code, cell, self.records.cell
            )
            self.records.forget(code)
        # Won or lost the race, the record says where the table is now: the caller reads it.
        raise ForeignTable(code, cell)

    async def _link_answers(self, code: str) -> bool:
        where = self._endpoints.get(code)
        if where is None:
            return False
        try:
            async with asyncio.timeout(LINK_CHECK_S):
                _, writer = await asyncio.open_connection(where.host, where.port)
        except (OSError, TimeoutError):
            self._endpoints.pop(code, None)
            return False
        writer.close()
        return True
