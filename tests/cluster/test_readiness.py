"""`/readyz` says ready only while this gateway can call a table actor: Ray and Redis answering
is not enough (a gateway whose calls cannot reach a worker would take players it cannot seat)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import redis

from actors import keys
from actors.directory import Directory, DirectorySettings
from actors.pool_demand import PoolPolicy
from actors.protocol import Probe
from actors.table_actor import record_json
from cluster.procs import RedisServer
from cluster.redis_client import async_redis
from tests.cluster.nodes import ask_now
from tests.conftest import Stack


async def _ready_until(url: str, want: int, within: float) -> dict[str, Any]:
    """Poll `/readyz` until it answers `want`; the last body."""
    deadline = time.monotonic() + within
    async with httpx.AsyncClient(base_url=url, timeout=10) as c:
        while True:
            r = await c.get("/readyz")
            if r.status_code == want or time.monotonic() > deadline:
                assert r.status_code == want, r.text
                return dict(r.json())
            await asyncio.sleep(0.5)


async def test_ready_means_a_table_actor_answers(stack: Stack, tmp_path: Path) -> None:
    # A Redis of its own: when its pooled actors stay silent, the probe asks any live table's
    # actor, and the stack's other tables (those of earlier tests) must not answer for them.
    own = RedisServer()
    own.start()
    gw = stack.gateway(tmp_path, QUATRO_POOL_SIZE="1", REDIS_URL=own.url)
    try:
        gw.wait_ready()
        body = await _ready_until(gw.url, 200, 30)
        assert body == {"ready": True, "redis": "ok", "ray": "ok", "tables": "ok"}
        # Ready may come from another live table while the pool refills (a test before this one
        # may have left the cluster full, then the pool used up): wait for a pooled actor.
        pool = redis.Redis.from_url(own.url, decode_responses=True)
        deadline = time.monotonic() + 30
        while pool.lindex(keys.POOL, 0) is None:
            assert time.monotonic() < deadline, "the pool was not refilled"
            await asyncio.sleep(0.2)
        # Every pooled actor (the pool is shared by the stack's gateways) holds its sockets
        # and answers nothing: from here this gateway can reach no table actor. One hung actor
        # among live ones is not enough: the probe then asks the next (test_stale_records).
        ray = stack.driver()
        pids = [
            ask_now(stack, ray.get_actor(n, namespace=stack.namespace), Probe()).pid
            for n in pool.lrange(keys.POOL, 0, -1)
        ]
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            # Once the pool's last answer is older than the freshness window, the probe pings.
            body = await _ready_until(gw.url, 503, 40)
            assert body["tables"] == "down: no answer from a table actor", body
            assert body["redis"] == "ok", body
            assert body["ray"] == "ok", body
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
        body = await _ready_until(gw.url, 200, 30)
        assert body["tables"] == "ok"
    finally:
        gw.stop()
        # Its pooled actors are named only in that Redis: stopped here, or they would hold
        # their table slots for the rest of the session.
        ray = stack.driver()
        leftover = redis.Redis.from_url(own.url, decode_responses=True)
        for name in leftover.lrange(keys.POOL, 0, -1):
            with contextlib.suppress(ValueError):
                ray.kill(ray.get_actor(str(name), namespace=stack.namespace), no_restart=True)
        leftover.close()
        own.cleanup()


async def test_with_no_pool_left_any_live_table_proves_the_workers_reachable(
    stack: Stack,
) -> None:
    """A full cluster has no pooled actor left: readiness must then fall back on a live table
    (a gateway made unready by a full cluster would lock players out of their own tables). A
    Redis of its own keeps the stack's pool and tables out of the picture."""
    own = RedisServer()
    own.start()
    ray = stack.driver()
    client = async_redis(own.url, 90.0)  # blpop below waits up to 60 s
    spawned: list[Any] = []
    try:

        def directory(start: bool = True) -> Directory:
            """`start=False`: a directory whose pool may start no actor (a full cluster: its
            slot gate keeps more slots in reserve than any cluster has), so that the only
            actor a probe can find is the table's."""
            reserve = 4 if start else 10**9
            settings = DirectorySettings(
                stack.namespace, own.url, PoolPolicy(minimum=1), slot_reserve=reserve
            )
            return Directory(client, settings)

        d = directory()
        assert await d.reach_tables(wait_s=3) == "down: no table actor started yet"
        # That probe started the pool's refill: the pooled actor, once it answers.
        popped = await client.blpop([keys.POOL], timeout=60)  # the pool is used up...
        assert popped is not None
        name = str(popped[1])
        actor = ray.get_actor(name, namespace=stack.namespace)
        spawned.append(actor)
        # That directory's refill would start the next pooled actor, which any probe would then
        # find: stop it, and clear what it had already started.
        await d.close()
        for extra in await client.lrange(keys.POOL, 0, -1):
            with contextlib.suppress(ValueError):
                spawned.append(ray.get_actor(str(extra), namespace=stack.namespace))
        await client.delete(keys.POOL)
        # ...and that actor now serves a table, found through its directory record.
        await client.set(keys.table("FULL22"), record_json(name, 4))
        assert await directory(start=False).reach_tables(wait_s=3) == "ok"
        pid = ask_now(stack, actor, Probe()).pid
        os.kill(pid, signal.SIGSTOP)
        try:
            assert await directory(start=False).reach_tables(wait_s=3) == (
                "down: no answer from a table actor"
            )
        finally:
            os.kill(pid, signal.SIGCONT)
    finally:
        for actor in spawned:
            ray.kill(actor, no_restart=True)
        await client.aclose()
        own.cleanup()
