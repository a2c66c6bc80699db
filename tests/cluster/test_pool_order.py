"""When a burst outruns the pool, creations are served in the order they arrived, Play now's and
private tables' alike (issue 48). Quick play used to open at most two tables at a time per
gateway (a guard from before the pool bounded its starts), so a third Play-now table joined the
pool's queue only once one of the first two was open: behind every private table asked for
meanwhile. In the burst of `python -m loadtests.burst` its players waited longest of all.

A gateway of its own with an empty pool that starts one actor at a time: every creation waits
its turn, and the turns are the test."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import httpx

from tests.conftest import Stack, own_database, stop_own_pool

OWN_DB = 8  # tests/README.md
SIZES = (4, 6, 8)  # three Play-now tables: one opener each, no table of theirs to share
PRIVATE = 3


def gauge(text: str, name: str) -> float:
    found = re.search(rf"^{name} ([0-9.e+-]+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def asked_of_the_pool(text: str) -> float:
    """Creations waiting in the pool's queue or served from it so far."""
    return gauge(text, "quatro_pool_waiting") + gauge(text, "quatro_pool_served_total")


async def test_play_now_and_private_tables_are_opened_in_the_order_they_were_asked(
    stack: Stack, tmp_path: Path
) -> None:
    url, store = own_database(stack, OWN_DB)
    gw = stack.gateway(
        tmp_path,
        REDIS_URL=url,
        QUATRO_POOL_MIN="0",
        QUATRO_POOL_MAX="0",
        QUATRO_POOL_STARTS="1",
        QUATRO_POOL_QUIET="0",
        QUATRO_POOL_START_GAP="0",
        # Six actors started one after the other, on cores the suite's other lane shares.
        QUATRO_POOL_WAIT="120",
        QUATRO_ACTOR_TIMEOUT="120",
        QUATRO_TABLE_RATE="1000",
        QUATRO_TABLE_BURST="1000",
    )
    gw.wait_ready()
    codes: list[str] = []
    done: dict[str, float] = {}
    try:
        async with httpx.AsyncClient(base_url=gw.url, timeout=200) as c:
            tokens = []
            for i in range(len(SIZES) + PRIVATE):
                r = await c.post("/api/sessions", json={"name": f"O{i}"})
                tokens.append({"Authorization": f"Bearer {r.json()['token']}"})

            async def ask(who: str, path: str, body: dict[str, int], auth: dict[str, str]) -> None:
                r = await c.post(path, json=body, headers=auth)
                assert r.status_code in (200, 201), (who, r.text)
                codes.append(str(r.json()["code"]))
                done[who] = time.monotonic()

            loop = asyncio.get_running_loop()

            async def metrics() -> str:
                return (await c.get("/metrics")).text

            # Three players press Play now together: three tables, all waiting for an actor at
            # once (the first start takes a worker process's second or more; their requests
            # reach the pool within milliseconds).
            pending = [
                asyncio.ensure_future(ask(f"quick{n}", "/api/quickplay", {"players": n}, auth))
                for n, auth in zip(SIZES, tokens, strict=False)
            ]
            deadline = loop.time() + 30
            while gauge(await metrics(), "quatro_pool_waiting") < len(SIZES):
                assert loop.time() < deadline, "Play now's tables did not all join the queue"
                await asyncio.sleep(0.05)
            # Then private tables, one after the other, each asked once the one before reached
            # the pool (waiting, or served already): the order asked.
            asked = len(SIZES)
            for i, auth in enumerate(tokens[len(SIZES) :]):
                pending.append(
                    asyncio.ensure_future(ask(f"private{i}", "/api/tables", {"players": 4}, auth))
                )
                asked += 1
                deadline = loop.time() + 30
                while asked_of_the_pool(await metrics()) < asked:
                    assert loop.time() < deadline, f"private{i} never reached the pool"
                    await asyncio.sleep(0.05)
            await asyncio.gather(*pending)
        order = sorted(done, key=done.__getitem__)
        assert set(order[: len(SIZES)]) == {f"quick{n}" for n in SIZES}, order
        assert order[len(SIZES) :] == [f"private{i}" for i in range(PRIVATE)], order
    finally:
        gw.stop()
        stop_own_pool(stack, store, codes)
