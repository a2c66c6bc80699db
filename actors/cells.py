"""Cells: several Ray clusters behind one fleet of gateways, sharing one Redis (docs/scaling.md).

A table's record names its cell (`cell` in `keys.table(code)`; no field: no cells, as before).
A gateway is a Ray driver of one cell, its *home*: it uses Ray only for tables of that cell.
What needs Ray for a table of another cell (its data plane's `Endpoint`, a REST call with no
hub here, a creation) is asked of a gateway of that cell over the internal port (`RemoteCells`,
gateway/cells.py); play itself goes straight to the table over its link.

The registry: every gateway publishes its cell's free and total slots and its internal address
as `keys.cell(name)`, expiring `REGISTRY_TTL_MS` after the last renewal, and renews it only
while its Ray answers; a cell whose record expired is gone, and no record outlives its TTL.

A cell lost: a gateway that finds a table of a cell with no registry record (and no link to
reach it) moves the table with `MOVE`, a compare-and-set on the record's cell: of two gateways
racing, one wins and the other follows it. The winner starts the table's actor in its own Ray
under the same name; it restores itself from its snapshot. An old incarnation that still runs
(a partition, not a death) is fenced: `actors/store_scripts.py`'s SAVE refuses a save once the
record names another cell, and that incarnation ends itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from actors import keys, legacy_keys
from actors.protocol import TableCall
from actors.store_scripts import REWRITE
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline, Script

CELL_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
REGISTRY_TTL_MS = 5000  # a cell not heard of for this long takes no table and may be moved from
PUBLISH_S = 1.0  # how often a gateway renews its cell's record

A = TypeVar("A")


class CellUnreachable(Exception):
    """No gateway of the table's cell answered (or it refused): try again, or move the table."""


class ForeignTable(Exception):
    """The table's record names another cell than this gateway's home: not for this Ray."""

    def __init__(self, code: str, cell: str) -> None:
        super().__init__(f"table {code} is of cell {cell!r}")
        self.code = code
        self.cell = cell


def check_name(cell: str) -> str:
    """The cell name, checked: it goes into Redis keys and Ray never sees it. Raises ValueError."""
    if cell and not CELL_NAME.match(cell):
        raise ValueError(f"a cell name is [a-z0-9-], at most 32 characters: {cell!r}")
    return cell


def cell_of(record: dict[str, Any]) -> str:
    """The cell a table record names ("" for a record of a deployment without cells)."""
    return str(record.get("cell", ""))


@dataclass(frozen=True, slots=True)
class CellInfo:
    """A cell as its registry record says, while the record lives."""

    name: str
    free: int
    total: int
    reserve: int
    internal: str  # host:port of one of its gateways' internal server

    @property
    def room(self) -> int:
        """New tables the cell takes: its free slots above its reserve."""
        return self.free - self.reserve


def place(cells: dict[str, CellInfo], home: str) -> str:
    """The cell a new table goes to: most room above its reserve; between equals, `home` (a
    creation it does itself, without a hop). `home` too when no cell has room (it answers
    `no_room` as one cluster does) or when its own record is not there yet."""
    mine = cells.get(home)
    if mine is None:
        return home
    best = mine
    for info in sorted(cells.values(), key=lambda c: c.name):
        if info.room > best.room:
            best = info
    return best.name if best.room > 0 else home


# KEYS[1]: the table's record; ARGV[1]: the cell it must still name ('' for none), ARGV[2]: the
# cell it moves to. 1 when moved, 0 when the record names another cell by now (someone moved it
# first: follow them) or is gone. Its TTL is kept, and it counts one more move (`moves`: the
# epoch by which actors/store.py fences an incarnation the table moved away from, even back to
# its cell). The cells' sets of tables are of other slots: the winner moves the code between
# them afterwards (a code missing from a set is found by its table's next lookup; one left in
# a set is removed by whoever finds it stale).
MOVE = Script(
    "cells.move",
    REWRITE
    + """
local rec = record(KEYS[1])
if not rec then return 0 end
local cell = rec['cell'] or ''
if cell ~= ARGV[1] then return 0 end
rec['cell'] = ARGV[2]
rec['moves'] = (tonumber(rec['moves']) or 0) + 1
rewrite(KEYS[1], rec)
return 1
""",
)
# A cell's record renewed and its name in the set of cells: two keys of two slots, no order
# between them needed (the record expires by itself; a name in the set is only a name).
PUBLISH = Pipeline("cells.publish")
# Every cell's record, one GET each: single keys of several slots.
RECORDS = Pipeline("cells.records")


class Registry:
    """The cells' records in Redis, as one gateway of `home` publishes and reads them."""

    def __init__(
        self,
        redis: AsyncRedis,
        home: str,
        internal: str,
        reserve: int,
        ttl_ms: int = REGISTRY_TTL_MS,
    ) -> None:
        self.redis = redis
        self.ttl_ms = ttl_ms
        self.home = check_name(home)
        self.internal = internal
        self.reserve = reserve

    async def publish(self, free: float, total: float) -> None:
        """Renew this cell's record (call it only while this gateway's Ray answers)."""
        record = {
            "free": int(free),
            "total": int(total),
            "reserve": self.reserve,
            "internal": self.internal,
        }
        pipe = PUBLISH.on(self.redis)
        pipe.set(keys.cell(self.home), json.dumps(record), px=self.ttl_ms)
        pipe.sadd(keys.CELLS, self.home)
        await PUBLISH.run(pipe)

    async def cells(self) -> dict[str, CellInfo]:
        """Every cell whose record lives now."""
        names = sorted(str(n) for n in await self.redis.smembers(keys.CELLS))
        if not names:
            return {}
        pipe = RECORDS.on(self.redis)
        for name in names:
            pipe.get(keys.cell(name))
        raws = await RECORDS.run(pipe)
        found = {}
        for name, raw in zip(names, raws, strict=True):
            if raw is not None:
                found[name] = _info(name, raw)
        return found

    async def get(self, name: str) -> CellInfo | None:
        """The cell's record, None once it expired (the cell is gone, or was never there)."""
        raw = await self.redis.get(keys.cell(name)) if name else None
        return None if raw is None else _info(name, raw)

    async def move(self, code: str, from_cell: str) -> bool:
        """Move the table from `from_cell` to this gateway's home: True for the one winner."""
        moved = False
        for record in (keys.table(code), legacy_keys.table(code)):
            if await self.redis.exists(record):
                moved = bool(await MOVE.run(self.redis, [record], [from_cell, self.home]))
                break
        if moved:
            await self.redis.srem(keys.cell_tables(from_cell), code)
            await self.redis.sadd(keys.cell_tables(self.home), code)
        return moved

    async def gone(self) -> list[str]:
        """The cells ever announced whose record expired (not this one)."""
        names = sorted(str(n) for n in await self.redis.smembers(keys.CELLS))
        live = await self.cells()
        return [n for n in names if n not in live and n != self.home]

    async def tables_of(self, cell: str, count: int) -> list[str]:
        """Up to `count` codes of the tables `cell` ran, at random (several gateways sweeping
        one lost cell each pick their own)."""
        found = await self.redis.srandmember(keys.cell_tables(cell), count)
        return [str(c) for c in found or []]

    async def forget(self, cell: str, code: str) -> None:
        """`code` no longer belongs in `cell`'s set (its table stopped, or moved)."""
        await self.redis.srem(keys.cell_tables(cell), code)

    async def opened(self, code: str) -> None:
        """A table this cell opened."""
        await self.redis.sadd(keys.cell_tables(self.home), code)


def _info(name: str, raw: str | bytes) -> CellInfo:
    rec = json.loads(raw)
    return CellInfo(
        name, int(rec["free"]), int(rec["total"]), int(rec["reserve"]), str(rec["internal"])
    )


class RemoteCells(Protocol):
    """How a gateway asks a gateway of another cell (gateway/cells.py: the internal port)."""

    async def ask(self, cell: CellInfo, code: str, call: TableCall[A]) -> A:
        """`call` answered by the table there (`TableCalls.ask_here`); raises TableGone,
        ForeignTable (the table is not of that cell any more) or CellUnreachable."""
        ...

    async def create(
        self, cell: CellInfo, players: int, config: dict[str, Any], host: str, name: str
    ) -> str:
        """`Directory.create` there; raises NoRoom or CellUnreachable."""
        ...
