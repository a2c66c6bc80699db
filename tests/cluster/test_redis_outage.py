"""Redis out of reach, seen at the edge: REST answers 503 `unavailable` as JSON with
Retry-After (not a plain-text 500), `hello` gets an `unavailable` error and close 1013 (try again
later, not 1011), a live game goes on, and everything works again once Redis is back."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets

from tests.cluster.client import Player, table_with
from tests.conftest import Stack

WAIT_S = 30.0


@pytest.mark.destructive
async def test_redis_down_is_503_over_rest_and_1013_on_hello(stack: Stack) -> None:
    code, people = await table_with(stack.a.url, 4, 2, time_scale=0.2)
    host, other = people
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    stack.redis.stop()
    try:
        async with httpx.AsyncClient(base_url=stack.b.url, timeout=WAIT_S) as c:
            r = await c.post("/api/sessions", json={"name": "Late"})
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "unavailable"
            assert int(r.headers["retry-after"]) >= 1
            r = await c.post("/api/tables", json={"players": 4}, headers=host.auth)
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "unavailable"
        async with websockets.connect(stack.b.ws) as ws:
            await ws.send(json.dumps({"type": "hello", "id": "h", "token": "t", "table": code}))
            async with asyncio.timeout(WAIT_S):
                frame = json.loads(await ws.recv())
                assert frame["type"] == "error"
                assert frame["code"] == "unavailable"
                assert frame["id"] == "h"
                await ws.wait_closed()
            assert ws.close_code == 1013
        # The live game goes on without Redis.
        await host.ok("ready")
        await other.wait_event(lambda e: e["type"] == "ready" and e["seat"] == 0)
    finally:
        stack.redis.start()
    async with asyncio.timeout(WAIT_S):
        while True:
            try:
                fresh = await Player(stack.b.url, "Back").register()
                break
            except AssertionError:  # still reconnecting to the restarted Redis
                await asyncio.sleep(0.2)
    assert fresh.token
    for p in people:
        assert not p.problems
        await p.close()
