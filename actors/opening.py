"""Opening a table: a pooled actor (actors/pool.py) given a new code and its creator.

With cells, a new table goes to the cell with the most room (`actors.cells.place`), and a
gateway of that cell opens it.
"""

from __future__ import annotations

import logging
from typing import Any

from actors.cells import CellUnreachable, Registry, RemoteCells, place
from actors.pool import Pool
from actors.protocol import Open
from actors.ray_calls import ActorGone, ask, dead_for_good
from actors.ray_names import new_table_id
from actors.table_records import TableRecords
from engine.errors import ErrorCode

log = logging.getLogger("quatro.directory")

OPEN_TRIES = 3  # pooled actors a creation tries (one that already serves a table is dropped)


class Opening:
    def __init__(
        self,
        records: TableRecords,
        pool: Pool,
        wait_s: float,
        idle: tuple[float, ...],
        replay_ttl_s: int,
        registry: Registry | None = None,
        remote: RemoteCells | None = None,
    ) -> None:
        """`wait_s`: how long a creation waits for a pooled actor when none is ready; `idle`:
        how long a table lives once over, in its lobby, with nobody connected, and once its people
        all went from it for good (actors/idle.py)."""
        self.records = records
        self.pool = pool
        self.wait_s = wait_s
        self.idle = idle
        self.replay_ttl_s = replay_ttl_s
        self.registry = registry
        self.remote = remote

    async def create(self, players: int, config: dict[str, Any], host: str, name: str) -> str:
        """Open a table and seat its creator in seat 0 (the host, but at a public table, whose
        `config` says `public`, only its first player); return its code. `config` may name
        the `bot_level` the table starts at."""
        if self.registry is not None and self.remote is not None:
            cells = await self.registry.cells()
            target = place(cells, self.records.cell)
            if target != self.records.cell:
                try:
                    return await self.remote.create(cells[target], players, config, host, name)
                except CellUnreachable as exc:
                    log.warning("cell %s did not open a table (%s): opened here", target, exc)
        return await self.create_here(players, config, host, name)

    async def create_here(self, players: int, config: dict[str, Any], host: str, name: str) -> str:
        """`create` in this gateway's own cell. Raises NoRoom, TimeoutError (no pooled actor in
        time)."""
        for _ in range(OPEN_TRIES):
            actor, handle = await self.pool.take(self.wait_s)
            table_id = new_table_id()
            code, record = await self.records.claim(actor, players, table_id)
            rest = dict(config)
            level = str(rest.pop("bot_level", ""))  # in `Open` itself: see its comment
            call = Open(
                code,
                {"players": players, **rest},
                host,
                name,
                self.idle,
                self.replay_ttl_s,
                table_id,
                level,
            )
            try:
                opened = await ask(handle, call)
            except ActorGone as exc:
                # Its node was lost while it waited in the pool (a worker replaced, a crash):
                # the creation takes the next one rather than answering `unavailable`.
                await self.records.drop(code, record)
                if not dead_for_good(exc):
                    await self.pool.requeue(actor)
                log.warning(
                    "pooled actor %s did not answer (%s): the next one", actor, type(exc).__name__
                )
                continue
            if opened.ok:
                # A pooled actor of the release before hash tags keeps its own record.
                await self.records.older_release(code, record)
                self.records.opened(code, handle, actor)
                if self.registry is not None:
                    await self.registry.opened(code)
                return code
            await self.records.drop(code, record)
            if opened.error is None or opened.error.code != ErrorCode.NOT_ALLOWED:
                raise RuntimeError(f"table actor refused to open: {opened.error}")
            # A pooled name that already serves a table (pushed twice, or by hand): the pool
            # record was wrong, the actor is someone's table; take the next one.
            log.warning("pooled actor %s already serves a table: skipped", actor)
        raise RuntimeError("no pooled table actor would open a table")
