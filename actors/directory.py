"""How a gateway finds, creates and calls table actors.

Tables are found by invite code through Redis (code -> actor name), so any gateway replica finds
any table with `ray.get_actor`. New tables come from a small pool of actors started ahead of
time, since starting an actor process takes ~0.6 s (actors/pool.py).

Redis outlives Ray (a cluster replaced, runs stopped hard), so every record naming an actor is
checked against Ray where it is used, and one naming an actor Ray does not know is dropped or
repaired there and then: a dead pooled name is removed from the pool, a table record whose
actor is gone is restored from its snapshot or, without one, deleted. Nothing waits for a
record that only this gateway could repair.

With cells (actors/cells.py) a gateway uses its Ray only for tables of its home cell: a table of
another cell is asked of a gateway of that cell (`RemoteCells`), and moved here when that cell
is gone. Without cells (`cell` ""), nothing of this changes: same keys, same records.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import uuid
from asyncio import FIRST_COMPLETED
from collections.abc import Sequence
from typing import Any

import ray
import redis.asyncio as aioredis
from ray.actor import ActorHandle
from ray.exceptions import ActorDiedError, ActorUnavailableError, GetTimeoutError, RayActorError

from actors import keys
from actors.cells import (
    PUBLISH_S,
    CellInfo,
    CellUnreachable,
    ForeignTable,
    Registry,
    RemoteCells,
    cell_of,
    place,
)
from actors.pool import NoRoom as NoRoom
from actors.pool import Pool
from actors.slots import Slots, table_slots
from actors.table_actor import KEY_TTL_S, actor_class, record_json
from actors.tasks import Tasks

log = logging.getLogger("quatro.directory")

# An unambiguous alphabet for invite codes: no 0/O, 1/I/L.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
# How long a call waits for a crashed table actor to come back. A lost node is the slow case:
# Ray declares it dead only after its health checks have failed for ~15 s (3 s x 5, its
# defaults), then restarts its actors elsewhere, each a new worker process (seconds more on a
# loaded node): the soak saw 14-25 s, past the 20 s this was, and commands sent meanwhile were
# answered `unavailable` although the cluster had room (docs/reliability.md).
RESTART_WAIT_S = 40.0
SCAN_ROUNDS = 5  # SCAN calls a readiness probe may make looking for a live table
PROBE_NAMES = 8  # actor names a readiness probe may look up before it gives up on records
PROBE_TRIES = 8  # pooled actors a readiness probe pings at once (the first answer will do)
OPEN_TRIES = 3  # pooled actors a creation tries (one that already serves a table is dropped)
ANSWER_FRESH_S = 10.0  # a table actor's answer this recent proves this gateway can reach tables
DEFAULT_SLOT_RESERVE = 4
DEFAULT_POOL_MAX = 8
DEFAULT_POOL_STARTS = 2
DEFAULT_POOL_WAIT_S = 30.0
SLOTS_READ_S = 2.0  # a reading of Ray's slots slower than this does not renew the cell's record
LINK_CHECK_S = 1.0  # a table's last known link address answering within this: not lost
SWEEP_EVERY = 2  # registry renewals between two sweeps of lost cells' tables
SWEEP_TABLES = 4  # tables of one lost cell a sweep moves at most
# A cell is swept only once it has been gone this long as seen from here: a cell whose gateways
# restart (a deploy) lets its record lapse for a few seconds, and a sweep then would move every
# one of its healthy tables (their old incarnations fenced: nothing lost, but every player's
# link dropped). A table asked for moves sooner, and only when its link is silent too.
SWEEP_GRACE_S = 15.0

ActorGone = (RayActorError, ActorUnavailableError, ActorDiedError)


class TableGone(Exception):
    """The table's actor is stopped for good (or never existed)."""


# KEYS: a table's record, then other records of it (its actor's); ARGV[1]: the table record as
# read. They go only if the table record is still the one judged stale (a table opened since
# under the same code, once another gateway dropped the stale one, keeps its records).
DROP_STALE_TABLE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', unpack(KEYS))
end
return 0
"""


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class Directory:
    def __init__(
        self,
        redis: aioredis.Redis,
        namespace: str,
        redis_url: str,
        pool_size: int,
        over_idle_s: float,
        lobby_idle_s: float,
        abandoned_idle_s: float,
        replay_ttl_s: int = 7 * 24 * 3600,
        slot_reserve: int = DEFAULT_SLOT_RESERVE,
        max_slots: int = 0,
        pool_max: int = DEFAULT_POOL_MAX,
        pool_starts: int = DEFAULT_POOL_STARTS,
        pool_wait_s: float = DEFAULT_POOL_WAIT_S,
        pool_quiet_s: float = 0.0,
        cell: str = "",
        registry: Registry | None = None,
        remote: RemoteCells | None = None,
        pool_start_gap_s: float = 0.0,
    ) -> None:
        """`pool_size`: the ready actors kept at the least (`pool_max` at most, with demand);
        `pool_starts`: new actors started side by side; `pool_wait_s`: how long a creation
        waits for one when none is ready. `cell`: this gateway's home cell, with `registry`
        and `remote` (how it asks gateways of other cells); "" and None without cells."""
        if cell and (registry is None or remote is None):
            raise ValueError("a cell needs its registry and a way to reach other cells")
        self.cell = cell
        self.registry = registry
        self.remote = remote
        # The last data-plane address each table answered `endpoint` with: a table whose cell
        # lost its registry record but whose link still answers (a partition between that cell
        # and Redis, not a death) is not moved.
        self._endpoints: dict[str, tuple[str, int]] = {}
        self._slots_read: asyncio.Task[tuple[float, float]] | None = None
        self._gone_since: dict[str, float] = {}  # lost cell -> loop time first seen gone
        self._sweeping: asyncio.Task[None] | None = None
        self.redis = redis
        self.namespace = namespace
        self.redis_url = redis_url
        self.pool_size = pool_size
        self.pool_wait_s = pool_wait_s
        self.idle = (over_idle_s, lobby_idle_s, abandoned_idle_s)
        self.replay_ttl_s = replay_ttl_s
        self._handles: dict[str, ActorHandle[Any]] = {}
        self._cls = actor_class()
        self.pool = Pool(
            redis,
            Slots(slot_reserve, max_slots),
            lambda name: self._spawn(name)[1],
            self.actor,
            self.heard_from_table,
            pool_size,
            pool_max,
            pool_starts,
            quiet_s=pool_quiet_s,
            cell=cell,
            start_gap_s=pool_start_gap_s,
        )
        self._answered_at = float("-inf")  # loop time of the last answer from any table actor
        self._probe: asyncio.Task[str] | None = None
        self.tasks = Tasks("directory", report=False)  # the owner of the probe
        self._drop_stale_table = redis.register_script(DROP_STALE_TABLE)

    # -- Ray's word on a name -----------------------------------------------------------------
    def _get_actor(self, name: str) -> ActorHandle[Any] | None:
        try:
            return ray.get_actor(name, namespace=self.namespace)
        except ValueError:  # Ray knows no live actor of that name
            return None

    async def actor(self, name: str) -> ActorHandle[Any] | None:
        """The live actor named `name`, None when Ray has none (a control-store call: off the
        event loop, which serves every player here)."""
        return await asyncio.to_thread(self._get_actor, name)

    # -- the pool -----------------------------------------------------------------------------
    def _spawn(self, name: str | None = None) -> tuple[str, ActorHandle[Any]]:
        """A new table actor (the pool's); given an existing table's actor name, the same actor
        again (it restores itself from Redis). Two gateways doing so at once get one actor."""
        name = name or f"{keys.ACTOR_PREFIX}{uuid.uuid4().hex[:12]}"
        handle = self._cls.options(
            name=name, namespace=self.namespace, lifetime="detached", get_if_exists=True
        ).remote(name, self.redis_url, self.cell)
        return name, handle

    def heard_from_table(self) -> None:
        """A table actor answered this gateway (a Ray call, or a line on the data plane)."""
        self._answered_at = asyncio.get_running_loop().time()

    async def reach_tables(self, wait_s: float) -> str:
        """See `_reach_tables`. One probe at a time: `/readyz` answers anyone, and a flood of
        it must not become a flood of Ray calls and Redis scans."""
        if self._probe is None or self._probe.done():
            self._probe = self.tasks.spawn(self._reach_tables(wait_s), "probe")
        return await asyncio.shield(self._probe)

    async def _reach_tables(self, wait_s: float) -> str:
        """`"ok"` when this gateway can call a table actor right now, else why not. An answer
        from any table in the last few seconds is proof enough (a busy gateway never adds a
        call for its probe); otherwise the actors at the head of the shared pool are pinged,
        and if none answers, a table's actor (one this gateway serves, else any other). A
        gateway whose Ray driver is connected but whose calls cannot reach a worker (no route
        to the workers' ports, an object store that cannot take a reply) fails here, where a
        look at the cluster's resources would have said ready."""
        loop = asyncio.get_running_loop()
        if loop.time() - self._answered_at < ANSWER_FRESH_S:
            return "ok"
        if self.pool_size <= 0:
            return "ok"  # no pool to probe (QUATRO_POOL_SIZE=0): the Ray check stands alone
        targets = await self._probe_targets()
        if not targets:
            self.refill_soon()
            return "down: no table actor started yet"
        deadline = loop.time() + wait_s
        why = await self._first_answer(targets, wait_s / 2 if targets[0][0] else wait_s)
        if why == "ok" or targets[0][0] is None:
            return why
        # Every pooled actor asked failed or kept silent: that may be their node, lost, not
        # this gateway (table actors SPREAD, so the refills after a node joined put many of
        # the pool's actors on it). Any table's actor that answers proves the workers
        # reachable; several at once, as that node may hold tables too.
        others = [(None, h) for h in await self._table_actors(PROBE_TRIES)]
        if not others:
            return why
        again = await self._first_answer(others, max(0.1, deadline - loop.time()))
        return "ok" if again == "ok" else why

    async def _first_answer(
        self, targets: Sequence[tuple[str | None, ActorHandle[Any]]], wait_s: float
    ) -> str:
        """`"ok"` as soon as one of `targets` answers a ping, else why not."""
        # All at once, the first answer wins: a lost node may hold several of the shared pool's
        # actors (every gateway's refill places them anywhere), and a call to one hangs until
        # Ray declares the node dead (~15 s). Asked one after another, three such names at the
        # pool's head made a gateway unready while other actors answered.
        pings = {asyncio.ensure_future(self._ping(h)): name for name, h in targets}
        silent: list[str | None] = []  # failed, or still pending when the time ran out
        why = "down: no answer from a table actor"
        pending = set(pings)
        try:
            async with asyncio.timeout(wait_s):
                while pending:
                    done, pending = await asyncio.wait(pending, return_when=FIRST_COMPLETED)
                    for task in done:
                        error = task.exception()
                        if error is None:
                            self.heard_from_table()
                            return "ok"
                        why = f"down: {type(error).__name__}"
                        silent.append(pings[task])
        except TimeoutError:
            silent += [pings[task] for task in pending]
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pings, return_exceptions=True)
            # Those that did not answer go to the far end, so that neither the next probe nor
            # a creation asks them first again.
            for name in silent:
                if name is not None:
                    await self.pool.to_tail(name)
        return why

    @staticmethod
    async def _ping(handle: ActorHandle[Any]) -> None:
        await handle.ping.remote()

    async def _probe_targets(self) -> list[tuple[str | None, ActorHandle[Any]]]:
        """The actors a readiness probe pings: the first PROBE_TRIES live ones among the first
        PROBE_NAMES of the pool (dead names are dropped, so that no gateway stays unready on a
        record it can repair), with their names; with the pool used up (every slot of a full
        cluster taken), any live table: one this gateway serves, else any other (no name). A
        full cluster must not make every gateway unready and lock out players coming back to
        their tables. None: no actor to ask (a refill starts one)."""
        found: list[tuple[str | None, ActorHandle[Any]]] = []
        names = [str(n) for n in await self.redis.lrange(self.pool.key, 0, PROBE_NAMES - 1)]
        for name in names:
            handle = await self.actor(name)
            if handle is None:
                await self.pool.drop(name)
            elif len(found) < PROBE_TRIES:
                found.append((name, handle))
        if found:
            return found
        # Used up: refill, in case nothing else does (the last refill found a full cluster, and
        # no creation came since to ask again).
        self.refill_soon()
        return [(None, h) for h in await self._table_actors(PROBE_TRIES)]

    async def _table_actors(self, most: int) -> list[ActorHandle[Any]]:
        """Up to `most` tables' actors: those this gateway serves first (a handle may outlive
        its table), then others looked for in a bounded part of the keyspace (a probe every
        few seconds must not walk a Redis full of sessions). Records naming an actor Ray does
        not know are passed over: a gateway's readiness does not restore tables."""
        found = list(dict.fromkeys(self._handles.values()))[: most // 2]
        cursor = 0
        looked = 0
        for _ in range(SCAN_ROUNDS):
            cursor, keys_found = await self.redis.scan(cursor, match=keys.table("*"), count=200)
            for key in keys_found:
                rec = await self.redis.get(key)
                if rec is None:
                    continue
                looked += 1
                handle = await self.actor(str(json.loads(rec)["actor"]))
                if handle is not None:
                    found.append(handle)
                if len(found) >= most or looked >= PROBE_NAMES:
                    return found
            if cursor == 0:
                break
        return found

    def refill_soon(self) -> None:
        self.pool.refill_soon()

    async def close(self) -> None:
        await self.pool.close()
        await self.tasks.close()

    # -- the cell registry --------------------------------------------------------------------
    def publish_cell(self) -> None:
        """Renew this cell's registry record every `PUBLISH_S`, for as long as the gateway runs
        (no cell: nothing)."""
        if self.registry is not None:
            self.tasks.spawn(self._publish_forever(self.registry), "cell registry")

    async def _publish_forever(self, registry: Registry) -> None:
        passes = 0
        while True:
            try:
                await registry.publish(*await self._read_slots())
            except Exception as exc:  # Ray or Redis out of reach: the record expires, as it must
                log.warning("cell %s: registry record not renewed (%s)", self.cell, exc)
            else:
                passes += 1
                # A task of its own: a sweep waits for actors to start (seconds each), and the
                # renewals must go on meanwhile, or this cell's record would lapse and other
                # cells sweep it in turn. One sweep at a time.
                sweeping = self._sweeping is not None and not self._sweeping.done()
                if passes % SWEEP_EVERY == 0 and not sweeping:
                    self._sweeping = self.tasks.spawn(self._sweep_logged(registry), "sweep")
            await asyncio.sleep(PUBLISH_S)

    async def _sweep_logged(self, registry: Registry) -> None:
        try:
            await self._sweep(registry)
        except Exception:
            log.exception("cell %s: the sweep of lost cells failed", self.cell)

    async def _sweep(self, registry: Registry) -> None:
        """Move a few tables of each lost cell here, those nobody asked for since (a table with
        only bots, or whose players all left): until then their actor runs nowhere, and their
        bots and clocks wait. A few per pass, one after another, so that a lost cell's
        thousands do not ask this cell's Ray for thousands of workers at once; other cells'
        gateways sweep too, and `MOVE` gives each table to one of them."""
        now = asyncio.get_running_loop().time()
        gone = await registry.gone()
        self._gone_since = {c: self._gone_since.get(c, now) for c in gone}
        for cell in gone:
            if now - self._gone_since[cell] < SWEEP_GRACE_S:
                continue
            for code in await registry.tables_of(cell, SWEEP_TABLES):
                record = await self.record(code)
                if record is None or cell_of(record) != cell:
                    await registry.forget(cell, code)  # stopped, or moved by someone else
                    continue
                try:
                    await self.call(code, "summary")  # moved and started here on the way
                except TableGone:
                    await registry.forget(cell, code)
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

    # -- tables -------------------------------------------------------------------------------
    async def create(self, players: int, config: dict[str, Any], host: str, name: str) -> str:
        """Open a table and seat its creator in seat 0 (the host, but at a public table, whose
        `config` says `public`, only its first player); return its code. With cells, the
        table goes to the cell with the most room (`actors.cells.place`), and a gateway of that
        cell opens it."""
        if self.registry is not None and self.remote is not None:
            cells = await self.registry.cells()
            target = place(cells, self.cell)
            if target != self.cell:
                try:
                    return await self.remote.create(cells[target], players, config, host, name)
                except CellUnreachable as exc:
                    log.warning("cell %s did not open a table (%s): opened here", target, exc)
        return await self.create_here(players, config, host, name)

    async def create_here(self, players: int, config: dict[str, Any], host: str, name: str) -> str:
        """`create` in this gateway's own cell."""
        for _ in range(OPEN_TRIES):
            actor_name, handle = await self.pool.take(self.pool_wait_s)
            for _ in range(20):
                code = new_code()
                record = record_json(actor_name, players, self.cell)
                if await self.redis.set(keys.table(code), record, nx=True, ex=24 * 3600):
                    break
            else:  # pragma: no cover - 31**6 codes
                raise RuntimeError("no free table code")
            try:
                reply = await handle.open.remote(
                    code, {"players": players, **config}, host, name, self.idle, self.replay_ttl_s
                )
            except ActorGone as exc:
                # Its node was lost while it waited in the pool (a worker replaced, a crash):
                # the creation takes the next one rather than answering `unavailable`.
                await self._drop_stale_table(keys=[keys.table(code)], args=[record])
                if not isinstance(exc, ActorDiedError) or restarting(exc):
                    await self.pool.requeue(actor_name)
                log.warning(
                    "pooled actor %s did not answer (%s): the next one",
                    actor_name,
                    type(exc).__name__,
                )
                continue
            if reply["ok"]:
                self._handles[code] = handle
                if self.registry is not None:
                    await self.registry.opened(code)
                return code
            await self._drop_stale_table(keys=[keys.table(code)], args=[record])
            if reply.get("error", {}).get("code") != "not_allowed":
                raise RuntimeError(f"table actor refused to open: {reply}")
            # A pooled name that already serves a table (pushed twice, or by hand): the pool
            # record was wrong, the actor is someone's table; take the next one.
            log.warning("pooled actor %s already serves a table: skipped", actor_name)
        raise RuntimeError("no pooled table actor would open a table")

    async def lost(self, code: str) -> bool:
        """Whether the table was lost (its saved state could not be read back)."""
        return bool(await self.redis.exists(keys.lost(code)))

    async def record(self, code: str) -> dict[str, Any] | None:
        raw = await self.redis.get(keys.table(code))
        return None if raw is None else dict(json.loads(raw))

    async def handle(self, code: str) -> ActorHandle[Any]:
        cached = self._handles.get(code)
        if cached is not None:
            return cached
        raw = await self.redis.get(keys.table(code))
        if raw is None:
            raise TableGone(code)
        record = json.loads(raw)
        if cell_of(record) != self.cell:
            # Never Ray's word here on another cell's table: this Ray not knowing its actor
            # says nothing, and restarting it here would run the table twice.
            raise ForeignTable(code, cell_of(record))
        actor_name = str(record["actor"])
        handle = await self.actor(actor_name)
        if handle is None:
            # Ray no longer knows the actor (the whole cluster restarted, or it died for
            # good) but Redis still holds the table: bring it back from its snapshot, or,
            # with none to restore, drop the record that would send everyone to nothing.
            if not await self.redis.exists(keys.snapshot(code)):
                await self._drop_stale_table(
                    keys=[keys.table(code), keys.actor(actor_name)], args=[raw]
                )
                log.warning("table %s: its actor is gone and nothing is saved: dropped", code)
                raise TableGone(code)
            log.warning("table %s: its actor is gone; starting it again from Redis", code)
            # The new incarnation learns its table from actor -> code: that record may be lost
            # or stale too (it is written with the snapshot, not with the code -> actor one).
            await self.redis.set(keys.actor(actor_name), code, ex=KEY_TTL_S)
            _, handle = self._spawn(actor_name)
        self._handles[code] = handle
        return handle

    def forget(self, code: str) -> None:
        self._handles.pop(code, None)

    async def call(self, code: str, method: str, *args: Any) -> Any:
        """Call a table actor, waiting through a restart. Ray never retries actor calls here
        (max_task_retries=0); commands are safe to call again because they carry an id. With
        cells, a table of another cell is asked of that cell's gateways, or moved here when its
        cell is gone (`_call_elsewhere`). Raises TableGone."""
        if self.registry is None:
            return await self.call_here(code, method, *args)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RESTART_WAIT_S
        delay = 0.05
        while True:
            record = await self.record(code)
            if record is None:
                raise TableGone(code)
            cell = cell_of(record)
            try:
                if cell == self.cell:
                    answer = await self.call_here(code, method, *args)
                else:
                    answer = await self._call_elsewhere(code, cell, method, args)
            except (ForeignTable, CellUnreachable) as exc:
                # Moved meanwhile (read the record again), or its cell did not answer (yet).
                if loop.time() > deadline:
                    raise
                log.info("table %s: %s; trying again", code, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)
                continue
            if method == "endpoint" and isinstance(answer, dict):
                self._endpoints[code] = (str(answer["host"]), int(answer["port"]))
            return answer

    async def _call_elsewhere(
        self, code: str, cell: str, method: str, args: tuple[Any, ...]
    ) -> Any:
        """Ask a gateway of the table's cell; with that cell gone (no registry record, and the
        table's last link address silent), move the table here. CellUnreachable: try again."""
        assert self.registry is not None
        assert self.remote is not None
        info: CellInfo | None = await self.registry.get(cell)
        if info is not None:
            return await self.remote.call(info, code, method, args)
        if await self._link_answers(code):
            raise CellUnreachable(f"cell {cell!r} has no registry record but its link answers")
        if await self.registry.move(code, cell):
            log.warning("table %s: cell %r is gone; moved to cell %r", code, cell, self.cell)
            self.forget(code)
        # Won or lost the race, the record says where the table is now: the caller reads it.
        raise ForeignTable(code, cell)

    async def _link_answers(self, code: str) -> bool:
        where = self._endpoints.get(code)
        if where is None:
            return False
        try:
            async with asyncio.timeout(LINK_CHECK_S):
                _, writer = await asyncio.open_connection(*where)
        except (OSError, TimeoutError):
            self._endpoints.pop(code, None)
            return False
        writer.close()
        return True

    async def call_here(self, code: str, method: str, *args: Any) -> Any:
        """`call` with this gateway's own Ray: ForeignTable when the table is of another cell
        (what another cell's gateway asks here must not bounce on)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RESTART_WAIT_S
        delay = 0.05
        while True:
            handle = await self.handle(code)
            try:
                answer = await getattr(handle, method).remote(*args)
            except ActorGone as exc:
                if isinstance(exc, ActorDiedError) and not restarting(exc):
                    self.forget(code)
                    if await self.record(code) is None:
                        raise TableGone(code) from exc
                if loop.time() > deadline:
                    raise
                log.info("table %s: actor unavailable (%s), retrying", code, type(exc).__name__)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)
            except GetTimeoutError:
                if loop.time() > deadline:
                    raise
            else:
                self.heard_from_table()
                return answer


def restarting(exc: Exception) -> bool:
    """Whether Ray says the actor is on its way back (not dead for good)."""
    return "restart" in str(exc).lower()
