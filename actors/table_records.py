"""Tables by invite code: their records in Redis (code -> actor name, `keys.table`), so that any
gateway finds any table's actor with Ray, and the handles this gateway holds.

Redis outlives Ray (a cluster replaced, runs stopped hard), so a record naming an actor Ray does
not know is repaired where it is read: the table is restored from its snapshot under the same
name or, with none, its records are deleted. Nothing waits for a record that only this gateway
could repair. With cells (actors/cells.py), a record of another cell is never Ray's to judge
here: `ForeignTable`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncGenerator
from typing import Any

from actors import keys, legacy_keys
from actors.cells import ForeignTable, cell_of
from actors.protocol import Adopt
from actors.ray_calls import ask
from actors.ray_names import Actors, Handle
from actors.snapshot import record_json
from actors.store import KEY_TTL_S
from actors.store_scripts import DELETE_IF_SAME
from cluster.redis_client import AsyncRedis, scan
from cluster.redis_ops import Pipeline

log = logging.getLogger("quatro.directory")

# An unambiguous alphabet for invite codes: no 0/O, 1/I/L.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
CODE_TRIES = 20  # codes drawn before giving up (31**6 of them: never)
RECORD_TTL_S = 24 * 3600  # a table's saves renew it

# A table's record under its name or the name before hash tags (an older release's table), and
# whether a tombstone says it is lost: single keys of several slots, read together.
LOOK = Pipeline("records.look")


class TableGone(Exception):
    """The table's actor is stopped for good (or never existed)."""


class Parked(Exception):
    """The table is parked (actors/parking.py): no actor holds it until one wakes it. `actor`
    and `moves`: what its record names and counts, which the wake must still find there;
    `moving`: the ready actor a wake under way is giving it ("" for none)."""

    def __init__(self, code: str, actor: str, moves: int, moving: str = "") -> None:
        super().__init__(code)
        self.code, self.actor, self.moves, self.moving = code, actor, moves, moving


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class TableRecords:
    def __init__(self, redis: AsyncRedis, actors: Actors, cell: str = "") -> None:
        """`cell`: this gateway's home cell ("" without cells)."""
        self.redis = redis
        self.actors = actors
        self.cell = cell
        self._handles: dict[str, Handle] = {}
        # code -> the actor name and the moves its record named when its handle was found:
        # what a move off a lost node must still find there (actors/rescue.py).
        self._found: dict[str, tuple[str, int]] = {}

    async def _raw(self, code: str) -> tuple[str, str | None]:
        """The table's record as stored, and the key it was found under: its own, or the name
        an older release saved it under (actors/legacy_keys.py) while a deployment moves over."""
        pipe = LOOK.on(self.redis)
        pipe.get(keys.table(code))
        pipe.get(legacy_keys.table(code))
        found, old = await LOOK.run(pipe)
        if found is None and old is not None:
            return legacy_keys.table(code), str(old)
        return keys.table(code), None if found is None else str(found)

    async def record(self, code: str) -> dict[str, Any] | None:
        _, raw = await self._raw(code)
        return None if raw is None else dict(json.loads(raw))

    async def lost(self, code: str) -> bool:
        """Whether the table was lost (its saved state could not be read back)."""
        pipe = LOOK.on(self.redis)
        pipe.exists(keys.lost(code))
        pipe.exists(legacy_keys.lost(code))
        return any(await LOOK.run(pipe))

    async def claim(self, actor: str, players: int, table_id: str = "") -> tuple[str, str]:
        """A new code for a table of `actor` (of id `table_id`, by default the actor's name),
        its record written: (code, record)."""
        for _ in range(CODE_TRIES):
            code = new_code()
            record = record_json(actor, players, self.cell, table_id=table_id)
            if await self.redis.set(keys.table(code), record, nx=True, ex=RECORD_TTL_S):
                if not await self.redis.exists(legacy_keys.table(code)):
                    return code, record
                # A table of an older release holds this code: not ours.
                await self.drop(code, record)
        raise RuntimeError("no free table code")  # pragma: no cover - 31**6 codes

    async def drop(self, code: str, record: str | bytes, *others: str, key: str = "") -> None:
        """Delete the table's record (`key`: where it was found, its own by default), and the
        keys `others`, if it still reads `record`."""
        key = key or keys.table(code)
        if await DELETE_IF_SAME.run(self.redis, [key], [record]):
            for other in others:
                await self.redis.delete(other)

    async def older_release(self, code: str, record: str) -> bool:
        """After `Open`: whether the actor that took the table is of the release before hash
        tags (a rolling upgrade: its worker not replaced yet), which saved its record under the
        old name. Then the record claimed here goes, so that gateways find the table by the
        record its actor keeps (and deletes when the table stops)."""
        if await self.redis.exists(keys.snapshot(code)):
            return False
        if not await self.redis.exists(legacy_keys.table(code)):
            return False
        await self.drop(code, record)
        return True

    async def left(self, code: str, actor: str, handle: Handle) -> bool:
        """The table's actor `actor` says it does not hold the table: whether the table is gone.
        It is not when the record names another actor now (moved: ask that one), nor when the
        record still names `actor` and its snapshot is there: the actor lost track of its table
        (restarted after Redis lost its own record, `keys.actor`) and takes it back from the
        snapshot, as a move's actor does (`Adopt`), if it is still table-less. Otherwise the
        table is gone (no record, or a stale one, which goes: its stop could not delete it)."""
        key, raw = await self._raw(code)
        if raw is None:
            return True
        found = json.loads(raw)
        if str(found.get("actor")) != actor or found.get("parked"):
            return False  # moved, or parked (its actor serves another table now): wake it
        if await self.redis.exists(keys.snapshot(code)) and await self._taken_back(
            code, actor, handle
        ):
            log.warning("table %s: its actor %s had lost it; taken back from Redis", code, actor)
            return False
        await self.drop(code, raw, key=key)
        return True

    async def _taken_back(self, code: str, actor: str, handle: Handle) -> bool:
        """`actor` restores the table `code` (`Adopt`). Its own record is written only where
        there is none (NX): an actor that got another table meanwhile keeps its record of that
        one, and refuses."""
        if not await self.redis.set(keys.actor(actor), code, ex=KEY_TTL_S, nx=True):
            return False
        try:
            adopted = await ask(handle, Adopt(code))
        except Exception:  # gone or unreachable: the caller's next try finds out
            adopted = None
        if adopted is None or not adopted.ok:
            # Not taken back: the record written for it goes, or a restart of this actor
            # would find a table whose record the caller now drops.
            await DELETE_IF_SAME.run(self.redis, [keys.actor(actor)], [code])
            return False
        return True

    def opened(self, code: str, handle: Handle, actor: str = "") -> None:
        self._handles[code] = handle
        if actor:
            self._found[code] = (actor, 0)  # a new table: moved no time yet

    def woken(self, code: str, handle: Handle, actor: str, moves: int) -> None:
        """The table woke in `actor`, its record counting `moves` (actors/waking.py)."""
        self._handles[code] = handle
        self._found[code] = (actor, moves)

    def forget(self, code: str) -> None:
        """Ask Ray again next time: the actor may have been started again."""
        self._handles.pop(code, None)
        self._found.pop(code, None)

    def found(self, code: str) -> tuple[str, int] | None:
        """The actor name and the moves the table's record named when its handle was found
        (None: not found through its record here)."""
        return self._found.get(code)

    def held(self) -> list[Handle]:
        """The actors of the tables this gateway holds handles of (a handle may outlive its
        table)."""
        return list(dict.fromkeys(self._handles.values()))

    async def handle(self, code: str) -> Handle:
        """The table's actor. Raises TableGone, ForeignTable, Parked."""
        cached = self._handles.get(code)
        if cached is not None:
            return cached
        key, raw = await self._raw(code)
        if raw is None:
            raise TableGone(code)
        record = json.loads(raw)
        if cell_of(record) != self.cell:
            # Never Ray's word here on another cell's table: this Ray not knowing its actor
            # says nothing, and restarting it here would run the table twice.
            raise ForeignTable(code, cell_of(record))
        actor = str(record["actor"])
        if record.get("parked"):
            moving = str(record.get("moving") or "")
            raise Parked(code, actor, int(record.get("moves", 0)), moving)
        handle = await self.actors.lookup(actor)
        if handle is None:
            handle = await self._restart(code, actor, raw, key)
        self._handles[code] = handle
        self._found[code] = (actor, int(record.get("moves", 0)))
        return handle

    async def _restart(self, code: str, actor: str, raw: str | bytes, key: str) -> Handle:
        """Ray no longer knows the actor (the whole cluster restarted, or it died for good)
        but Redis still holds the table: bring it back from its snapshot (under an older
        release's name too: the actor moves it), or, with none to restore, drop the record
        that would send everyone to nothing (TableGone)."""
        pipe = LOOK.on(self.redis)
        pipe.exists(keys.snapshot(code))
        pipe.exists(legacy_keys.snapshot(code))
        if not any(await LOOK.run(pipe)):
            await self.drop(code, raw, keys.actor(actor), key=key)
            log.warning("table %s: its actor is gone and nothing is saved: dropped", code)
            raise TableGone(code)
        log.warning("table %s: its actor is gone; starting it again from Redis", code)
        # The new incarnation learns its table from actor -> code: that record may be lost or
        # stale too (it is written with the snapshot, not with the code -> actor one).
        await self.redis.set(keys.actor(actor), code, ex=KEY_TTL_S)
        # Blocking calls to Ray's control store (actors/pool_starts.py): off the event loop.
        return await asyncio.to_thread(self.actors.start, actor)

    async def actor_names(self, rounds: int) -> AsyncGenerator[str, None]:
        """Actor names of table records, from at most `rounds` SCAN calls on each primary (a
        bounded part of a keyspace that may be full of sessions)."""
        async for key in scan(self.redis, keys.table("*"), rounds):
            raw = await self.redis.get(key)
            if raw is not None:
                yield str(json.loads(raw)["actor"])
