"""How a gateway finds, opens and calls table actors: its rooms, built together from one
`DirectorySettings`, each named for what it does.

- `ray_names.RayActors`: table actors by name (the one place that makes a name).
- `table_records.TableRecords`: tables by invite code, their records in Redis, the handles held.
- `table_calls.TableCalls`: a call to a table, through its restarts and across cells.
- `rescue.Rescue`: a table whose node is lost, moved to a live node without waiting for Ray.
- `waking.Waking`: a parked table (actors/parking.py) taken over by a ready actor when asked for.
- `pool.Pool`: ready actors started ahead (~0.6 s a start), so that opening a table is quick.
- `opening.Opening`: a pooled actor given a table.
- `readiness.Readiness`: whether this gateway reaches table actors (`/readyz`).
- `cell_sweep.CellSweep`: with cells, the cell's registry record kept and lost cells' tables
  moved here.

Redis outlives Ray (a cluster replaced, runs stopped hard), so every record naming an actor is
checked against Ray where it is used, and one naming an actor Ray does not know is dropped or
repaired there and then. With cells (actors/cells.py) a gateway uses its Ray only for tables of
its home cell; without (`cell` ""), nothing of this changes: same keys, same records.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, TypeVar

from actors.cell_sweep import CellSweep
from actors.cells import Registry, RemoteCells
from actors.opening import Opening
from actors.pool import NoRoom as NoRoom
from actors.pool import Pool
from actors.pool_demand import PoolPolicy
from actors.pool_floor import Floor, ScheduleError, Window, parse_schedule
from actors.protocol import TableCall
from actors.ray_calls import LastAnswer
from actors.ray_names import Handle, RayActors
from actors.readiness import Readiness
from actors.rescue import Rescue
from actors.slots import Slots
from actors.snapshot import DEFAULT_IDLE, DEFAULT_REPLAY_TTL_S
from actors.table_calls import RESTART_WAIT_S as RESTART_WAIT_S
from actors.table_calls import TableCalls
from actors.table_records import Parked, TableRecords
from actors.table_records import TableGone as TableGone
from actors.waking import Waking
from cluster.redis_client import AsyncRedis, RedisSettings, settings_of
from cluster.settings import Settings

A = TypeVar("A")

log = logging.getLogger("quatro.directory")


@dataclass(frozen=True)
class DirectorySettings:
    """`pool`: the ready actors kept and started (actors/pool_demand.py); `pool_wait_s`: how
    long a creation waits for one when none is ready; `slot_reserve` and `max_slots`: the slot
    gate (actors/slots.py); `idle`: how long a table lives once over, in its lobby, with
    nobody connected, and once its people all went from it for good (actors/idle.py); `cell`:
    this gateway's home cell ("" without cells)."""

    namespace: str
    store: str | RedisSettings  # a bare URL: a Redis with no companion settings
    pool: PoolPolicy = field(default_factory=PoolPolicy)
    pool_wait_s: float = 30.0
    pool_floor: tuple[Window, ...] = ()  # the operator's schedule (actors/pool_floor.py)
    slot_reserve: int = 4
    max_slots: int = 0
    idle: tuple[float, ...] = DEFAULT_IDLE
    replay_ttl_s: int = DEFAULT_REPLAY_TTL_S
    cell: str = ""
    rescue: bool = True  # tables of a lost node moved at once (actors/rescue.py)

    @classmethod
    def of(cls, settings: Settings) -> DirectorySettings:
        return cls(
            namespace=settings.ray_namespace,
            store=settings.store(),
            pool=PoolPolicy(
                minimum=settings.pool_min,
                maximum=settings.pool_max,
                at_once=settings.pool_starts,
                quiet_s=settings.pool_quiet_s,
                start_gap_s=settings.pool_start_gap_s,
                hold_s=settings.pool_hold_s,
                hold_most=settings.pool_hold_max,
            ),
            pool_wait_s=settings.pool_wait_s,
            pool_floor=_schedule(settings.pool_floor),
            slot_reserve=settings.slot_reserve,
            max_slots=settings.max_table_slots,
            idle=(
                settings.over_idle_s,
                settings.lobby_idle_s,
                settings.abandoned_idle_s,
                settings.left_idle_s,
                settings.park_after_s,
            ),
            replay_ttl_s=settings.replay_ttl_s,
            cell=settings.cell,
            rescue=settings.node_rescue,
        )


def _schedule(text: str) -> tuple[Window, ...]:
    """`QUATRO_POOL_FLOOR` read; one that cannot be read is said in the log and ignored: a
    typo must not keep a gateway from serving."""
    try:
        return parse_schedule(text)
    except ScheduleError as exc:
        log.warning("QUATRO_POOL_FLOOR ignored: %s", exc)
        return ()


class Directory:
    def __init__(
        self,
        redis: AsyncRedis,
        settings: DirectorySettings,
        registry: Registry | None = None,
        remote: RemoteCells | None = None,
    ) -> None:
        """`registry` and `remote` (how it asks gateways of other cells): with a cell only."""
        if settings.cell and (registry is None or remote is None):
            raise ValueError("a cell needs its registry and a way to reach other cells")
        cell = settings.cell
        self.last_answer = LastAnswer()  # from any table actor: /readyz's proof
        actors = RayActors(settings.namespace, settings_of(settings.store), cell)
        self.records = TableRecords(redis, actors, cell)
        slots = Slots(settings.slot_reserve, settings.max_slots)
        floor = Floor(redis, cell, settings.pool_floor)
        self.pool = Pool(redis, slots, actors, self.last_answer, settings.pool, cell, floor)
        self.rescue = Rescue(redis, actors, self.pool) if settings.rescue else None
        self.waking = Waking(redis, actors, self.pool, self.records, settings.pool_wait_s, cell)
        self.calls = TableCalls(
            self.records, self.last_answer, registry, remote, self.rescue, self.waking
        )
        self.opening = Opening(
            self.records,
            self.pool,
            settings.pool_wait_s,
            settings.idle,
            settings.replay_ttl_s,
            registry,
            remote,
        )
        probe_pool = settings.pool.minimum > 0
        self.readiness = Readiness(self.pool, self.records, actors, self.last_answer, probe_pool)
        self.sweep = None if registry is None else CellSweep(registry, self.records, self.calls)

    # -- what the gateway asks ----------------------------------------------------------------
    async def ask(self, code: str, call: TableCall[A]) -> A:
        """`call` answered by the table of `code` (`TableCalls.ask`). Raises TableGone."""
        return await self.calls.ask(code, call)

    async def create(self, players: int, config: dict[str, Any], host: str, name: str) -> str:
        """A new table's code (`Opening.create`). Raises NoRoom."""
        return await self.opening.create(players, config, host, name)

    async def record(self, code: str) -> dict[str, Any] | None:
        return await self.records.record(code)

    async def lost(self, code: str) -> bool:
        return await self.records.lost(code)

    async def handle(self, code: str) -> Handle:
        """The table's actor (a parked table woken first: actors/waking.py)."""
        while True:
            try:
                return await self.records.handle(code)
            except Parked as parked:
                await self.calls.wake(parked)

    def forget(self, code: str) -> None:
        self.records.forget(code)

    async def reach_tables(self, wait_s: float) -> str:
        return await self.readiness.reach_tables(wait_s)

    def refill_soon(self) -> None:
        self.pool.refill_soon()

    def count_parked(self) -> None:
        """Count the parked tables now and then, for the gauges."""
        self.waking.start()

    def publish_cell(self) -> None:
        """Keep this cell's registry record (no cell: nothing)."""
        if self.sweep is not None:
            self.sweep.start()

    async def close(self) -> None:
        if self.rescue is not None:  # first: a move under way uses the pool
            await self.rescue.close()
        await self.waking.close()
        await self.pool.close()
        await self.readiness.close()
        if self.sweep is not None:
            await self.sweep.close()
