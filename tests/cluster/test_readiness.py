"""`/readyz` says ready only while this gateway can call a table actor: Ray and Redis answering
is not enough (a gateway whose calls cannot reach a worker would take players it cannot seat)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import redis

from actors import keys
from tests.cluster.test_data_plane import ray_get
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
    gw = stack.gateway(tmp_path, QUATRO_POOL_SIZE="1")
    gw.wait_ready()
    try:
        body = await _ready_until(gw.url, 200, 30)
        assert body == {"ready": True, "redis": "ok", "ray": "ok", "tables": "ok"}
        name = redis.Redis.from_url(stack.redis.url).lindex(keys.POOL, 0)
        assert name is not None
        ray = stack.driver()
        actor = ray.get_actor(
            name.decode() if isinstance(name, bytes) else name, namespace=stack.namespace
        )
        pid = int(ray_get(stack, actor.ping.remote())["pid"])
        os.kill(pid, signal.SIGSTOP)  # the actor's process holds its sockets and answers nothing
        try:
            # Once the pool's last answer is older than the freshness window, the probe pings.
            body = await _ready_until(gw.url, 503, 40)
            assert body["tables"] == "down: no answer from a table actor", body
            assert body["redis"] == "ok", body
            assert body["ray"] == "ok", body
        finally:
            os.kill(pid, signal.SIGCONT)
        body = await _ready_until(gw.url, 200, 30)
        assert body["tables"] == "ok"
    finally:
        gw.stop()
