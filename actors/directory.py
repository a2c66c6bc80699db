"""How a gateway finds, creates and calls table actors.

Tables are found by invite code through Redis (code -> actor name), so any gateway replica finds
any table with `ray.get_actor`. New tables come from a small pool of actors started ahead of
time, since starting an actor process takes ~0.6 s.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from actors.slots import Slots
from actors.table_actor import actor_class, record_json

log = logging.getLogger("quatro.directory")

# An unambiguous alphabet for invite codes: no 0/O, 1/I/L.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
RESTART_WAIT_S = 20.0  # how long a call waits for a crashed table actor to come back
REFILL_AT_ONCE = 8  # actors the pool starts side by side
SCAN_ROUNDS = 5  # SCAN calls a readiness probe may make looking for a live table
ANSWER_FRESH_S = 10.0  # a table actor's answer this recent proves this gateway can reach tables
# A new table actor not placed and answering by then is killed (see actors.slots): a worker
# process starts in about a second, and far slower on a loaded node; a new Kubernetes worker
# pod (the autoscaler's answer to waiting tables) in a few minutes.
PLACE_WAIT_S = 30.0
PLACE_WAIT_GROWING_S = 300.0
DEFAULT_SLOT_RESERVE = 4

ActorGone = (RayActorError, ActorUnavailableError, ActorDiedError)


class TableGone(Exception):
    """The table's actor is stopped for good (or never existed)."""


class NoRoom(Exception):
    """Every table slot of the cluster is taken (past the reserve kept for restarts)."""


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
    ) -> None:
        self.redis = redis
        self.namespace = namespace
        self.redis_url = redis_url
        self.pool_size = pool_size
        self.idle = (over_idle_s, lobby_idle_s, abandoned_idle_s)
        self.replay_ttl_s = replay_ttl_s
        self._handles: dict[str, ActorHandle[Any]] = {}
        self._refill: asyncio.Task[None] | None = None
        self._cls = actor_class()
        self._slots = Slots(slot_reserve, max_slots)
        self._answered_at = float("-inf")  # loop time of the last answer from any table actor
        self._probe: asyncio.Task[str] | None = None

    # -- the pool -----------------------------------------------------------------------------
    def _spawn(self, name: str | None = None) -> tuple[str, ActorHandle[Any]]:
        """A new table actor; given an existing table's actor name, the same actor again (it
        restores itself from Redis). Two gateways doing so at once get one actor."""
        name = name or f"{keys.ACTOR_PREFIX}{uuid.uuid4().hex[:12]}"
        handle = self._cls.options(
            name=name, namespace=self.namespace, lifetime="detached", get_if_exists=True
        ).remote(name, self.redis_url)
        return name, handle

    async def fill_pool(self) -> None:
        """Start actors until the pool holds `pool_size` ready ones (a best effort). The
        missing ones start together: Ray starts worker processes side by side, so a burst of
        new tables refills faster than one actor after another (`python -m
        loadtests.actor_start` measures both)."""
        while (missing := self.pool_size - await self.redis.llen(keys.POOL)) > 0:
            room = await self._slots.room(min(missing, REFILL_AT_ONCE))
            if room == 0:
                return  # a full cluster: the next new table asks again
            started = await asyncio.gather(*(self._add_to_pool() for _ in range(room)))
            if not all(started):
                return

    async def _add_to_pool(self) -> bool:
        name, handle = self._spawn()
        if not await self._placed(name, handle):
            return False
        await self.redis.rpush(keys.POOL, name)
        return True

    async def _placed(self, name: str, handle: ActorHandle[Any]) -> bool:
        """Whether a new actor is placed and answers in time (PLACE_WAIT_S). One that is not is
        killed (cancelled waiting, too): left in Ray's queue, it could take the next free slot
        from a crashed table's restart."""
        try:
            async with asyncio.timeout(
                PLACE_WAIT_GROWING_S if self._slots.can_grow else PLACE_WAIT_S
            ):
                await handle.ping.remote()
        except BaseException as exc:
            with contextlib.suppress(Exception):  # the control store out of reach: nothing to do
                ray.kill(handle, no_restart=True)
            log.warning("new table actor %s not placed: killed (%s)", name, type(exc).__name__)
            if isinstance(exc, TimeoutError):
                return False
            raise
        self.heard_from_table()
        return True

    def heard_from_table(self) -> None:
        """A table actor answered this gateway (a Ray call, or a line on the data plane)."""
        self._answered_at = asyncio.get_running_loop().time()

    async def reach_tables(self, wait_s: float) -> str:
        """See `_reach_tables`. One probe at a time: `/readyz` answers anyone, and a flood of
        it must not become a flood of Ray calls and Redis scans."""
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._reach_tables(wait_s))
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
        name = await self.redis.lindex(keys.POOL, 0)
        # With the pool used up (every slot of a full cluster taken), any live table will do:
        # one this gateway serves, else any other. A full cluster must not make every gateway
        # unready and lock out players coming back to their tables.
        served = next(iter(self._handles.values()), None)
        if name is None and served is None:
            name = await self._any_table_actor()
        if name is None and served is None:
            self.refill_soon()
            return "down: no table actor started yet"
        try:
            async with asyncio.timeout(wait_s):
                handle: Any = served
                if name is not None:
                    handle = await asyncio.to_thread(
                        ray.get_actor, str(name), namespace=self.namespace
                    )
                await handle.ping.remote()
        except ValueError:
            return "down: the pooled actor is gone"  # taken and stopped since; the next probe
        except TimeoutError:
            return "down: no answer from a table actor"
        except ActorGone as exc:
            return f"down: {type(exc).__name__}"
        self.heard_from_table()
        return "ok"

    async def _any_table_actor(self) -> str | None:
        """Some live table's actor, looked for in a bounded part of the keyspace (a probe
        every few seconds must not walk a Redis full of sessions)."""
        cursor = 0
        for _ in range(SCAN_ROUNDS):
            cursor, found = await self.redis.scan(cursor, match=keys.table("*"), count=200)
            for key in found:
                rec = await self.redis.get(key)
                if rec is not None:
                    return str(json.loads(rec)["actor"])
            if cursor == 0:
                break
        return None

    def refill_soon(self) -> None:
        if self.pool_size > 0 and (self._refill is None or self._refill.done()):
            self._refill = asyncio.get_running_loop().create_task(self._refill_logged())

    async def _refill_logged(self) -> None:
        try:
            await self.fill_pool()
        except Exception:
            log.exception("could not refill the table pool")

    async def close(self) -> None:
        for task in (self._refill, self._probe):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _take_from_pool(self) -> tuple[str, ActorHandle[Any]]:
        while name := await self.redis.lpop(keys.POOL):
            try:
                handle = ray.get_actor(str(name), namespace=self.namespace)
            except ValueError:
                continue
            return str(name), handle
        if await self._slots.room(1) == 0:
            raise NoRoom
        fresh, handle = self._spawn()
        if not await self._placed(fresh, handle):
            raise NoRoom
        return fresh, handle

    # -- tables -------------------------------------------------------------------------------
    async def create(self, players: int, config: dict[str, Any], host: str, name: str) -> str:
        """Open a table and seat its creator in seat 0 (the host, but at a public table, whose
        `config` says `public`, only its first player); return its code."""
        actor_name, handle = await self._take_from_pool()
        self.refill_soon()
        for _ in range(20):
            code = new_code()
            record = record_json(actor_name, players)
            if await self.redis.set(keys.table(code), record, nx=True, ex=24 * 3600):
                break
        else:  # pragma: no cover - 31**6 codes
            raise RuntimeError("no free table code")
        reply = await handle.open.remote(
            code, {"players": players, **config}, host, name, self.idle, self.replay_ttl_s
        )
        if not reply["ok"]:
            raise RuntimeError(f"table actor refused to open: {reply}")
        self._handles[code] = handle
        return code

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
        rec = await self.record(code)
        if rec is None:
            raise TableGone(code)
        try:
            handle = ray.get_actor(rec["actor"], namespace=self.namespace)
        except ValueError as exc:
            # Ray no longer knows the actor (the whole cluster restarted, or it died for
            # good) but Redis still holds the table: bring it back from its snapshot.
            if not await self.redis.exists(keys.snapshot(code)):
                raise TableGone(code) from exc
            log.warning("table %s: its actor is gone; starting it again from Redis", code)
            _, handle = self._spawn(str(rec["actor"]))
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
