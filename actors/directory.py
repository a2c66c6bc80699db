"""How a gateway finds, creates and calls table actors.

Tables are found by invite code through Redis (code -> actor name), so any gateway replica finds
any table with `ray.get_actor`. New tables come from a small pool of actors started ahead of
time, since starting an actor process takes ~0.6 s (actors/pool.py).

Redis outlives Ray (a cluster replaced, runs stopped hard), so every record naming an actor is
checked against Ray where it is used, and one naming an actor Ray does not know is dropped or
repaired there and then: a dead pooled name is removed from the pool, a table record whose
actor is gone is restored from its snapshot or, without one, deleted. Nothing waits for a
record that only this gateway could repair.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import uuid
from typing import Any

import ray
import redis.asyncio as aioredis
from ray.actor import ActorHandle
from ray.exceptions import ActorDiedError, ActorUnavailableError, GetTimeoutError, RayActorError

from actors import keys
from actors.pool import NoRoom as NoRoom
from actors.pool import Pool
from actors.slots import Slots
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
PROBE_TRIES = 3  # actors a readiness probe pings, each within a third of its time, when one
# does not answer (its node lost)
OPEN_TRIES = 3  # pooled actors a creation tries (one that already serves a table is dropped)
ANSWER_FRESH_S = 10.0  # a table actor's answer this recent proves this gateway can reach tables
DEFAULT_SLOT_RESERVE = 4
DEFAULT_POOL_MAX = 8
DEFAULT_POOL_STARTS = 2
DEFAULT_POOL_WAIT_S = 30.0

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
    ) -> None:
        """`pool_size`: the ready actors kept at the least (`pool_max` at most, with demand);
        `pool_starts`: new actors started side by side; `pool_wait_s`: how long a creation
        waits for one when none is ready."""
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
            pool_quiet_s,
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
        ).remote(name, self.redis_url)
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
        call for its probe); otherwise the actor at the head of the shared pool is pinged. A
        gateway whose Ray driver is connected but whose calls cannot reach a worker (no route
        to the workers' ports, an object store that cannot take a reply) fails here, where a
        look at the cluster's resources would have said ready."""
        loop = asyncio.get_running_loop()
        if loop.time() - self._answered_at < ANSWER_FRESH_S:
            return "ok"
        if self.pool_size <= 0:
            return "ok"  # no pool to probe (QUATRO_POOL_SIZE=0): the Ray check stands alone
        why = "down: no answer from a table actor"
        try:
            async with asyncio.timeout(wait_s):
                for _ in range(PROBE_TRIES):
                    name, handle = await self._probe_target()
                    if handle is None:
                        self.refill_soon()
                        return "down: no table actor started yet"
                    try:
                        async with asyncio.timeout(wait_s / PROBE_TRIES):
                            await handle.ping.remote()
                    except (*ActorGone, TimeoutError) as exc:
                        # Its node lost (a call hangs until Ray declares it dead, ~15 s, then
                        # fails while the actor restarts elsewhere): not a reason to leave
                        # traffic while other actors answer. A pooled one goes to the far
                        # end, so that neither this probe nor a creation asks it first again.
                        if not isinstance(exc, TimeoutError):
                            why = f"down: {type(exc).__name__}"
                        if name is not None:
                            await self.pool.to_tail(name)
                        continue
                    self.heard_from_table()
                    return "ok"
        except TimeoutError:
            pass
        return why

    async def _probe_target(self) -> tuple[str | None, ActorHandle[Any] | None]:
        """The actor a readiness probe pings: the pool's first live one (dead names before it
        are dropped, so that no gateway stays unready on a record it can repair), with its
        name; with the pool used up (every slot of a full cluster taken), any live table: one
        this gateway serves, else any other (no name). A full cluster must not make every
        gateway unready and lock out players coming back to their tables. No handle: no actor
        to ask (a refill starts one)."""
        for _ in range(PROBE_NAMES):
            name = await self.redis.lindex(keys.POOL, 0)
            if name is None:
                # Used up: refill, in case nothing else does (the last refill found a full
                # cluster, and no creation came since to ask again).
                self.refill_soon()
                break
            handle = await self.actor(str(name))
            if handle is not None:
                return str(name), handle
            await self.pool.drop(str(name))
        served = next(iter(self._handles.values()), None)
        if served is not None:
            return None, served
        return None, await self._any_table_actor()

    async def _any_table_actor(self) -> ActorHandle[Any] | None:
        """Some live table's actor, looked for in a bounded part of the keyspace (a probe
        every few seconds must not walk a Redis full of sessions). Records naming an actor
        Ray does not know are passed over: a gateway's readiness does not restore tables."""
        cursor = 0
        looked = 0
        for _ in range(SCAN_ROUNDS):
            cursor, found = await self.redis.scan(cursor, match=keys.table("*"), count=200)
            for key in found:
                rec = await self.redis.get(key)
                if rec is None:
                    continue
                handle = await self.actor(str(json.loads(rec)["actor"]))
                if handle is not None:
                    return handle
                looked += 1
                if looked >= PROBE_NAMES:
                    return None
            if cursor == 0:
                break
        return None

    def refill_soon(self) -> None:
        self.pool.refill_soon()

    async def close(self) -> None:
        await self.pool.close()
        await self.tasks.close()

    # -- tables -------------------------------------------------------------------------------
    async def create(self, players: int, config: dict[str, Any], host: str, name: str) -> str:
        """Open a table and seat its creator in seat 0 (the host, but at a public table, whose
        `config` says `public`, only its first player); return its code."""
        for _ in range(OPEN_TRIES):
            actor_name, handle = await self.pool.take(self.pool_wait_s)
            for _ in range(20):
                code = new_code()
                record = record_json(actor_name, players)
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
        actor_name = str(json.loads(raw)["actor"])
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
        (max_task_retries=0); commands are safe to call again because they carry an id."""
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
