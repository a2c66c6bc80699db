"""Quick play by level (issue 36), the seat queue's script against a real redis-server: players of
near levels share a table, far ones do not until the table's band has widened with its wait,
and any level is taken in the last quarter of the fill wait, before bots fill in. The band the
script applies is engine.ratings.band, checked at many waits. The wait is written into the
table's entry (as if it had opened that long ago): nothing sleeps."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from actors import keys
from cluster.procs import RedisServer
from cluster.redis_client import async_redis
from engine.ratings import ANY_LEVEL, band
from gateway.quickplay import QuickQueue

FILL_MS = 60_000
OFFER_MS = 50_000


@pytest.fixture
def redis_url() -> Iterator[str]:
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.cleanup()


@contextlib.asynccontextmanager
async def queue_at(url: str) -> AsyncIterator[QuickQueue]:
    client = async_redis(url)
    try:
        yield QuickQueue(client)
    finally:
        await client.aclose()


async def seat(q: QuickQueue, level: int, players: int = 4) -> tuple[str, int]:
    return await q.seat(players, uuid.uuid4().hex, OFFER_MS, "", level, FILL_MS)


async def opened_ago(q: QuickQueue, token: str, ms: int, players: int = 4) -> None:
    """Make the table of `token` look as if it had opened `ms` ago."""
    raw = await q.redis.hget(keys.quick(players), token)
    level, nxt, until, _ = str(raw).split()
    now = int(time.time() * 1000)
    await q.redis.hset(keys.quick(players), token, f"{level} {nxt} {until} {now - ms}")


async def test_near_levels_share_a_table_and_far_ones_open_their_own(redis_url: str) -> None:
    async with queue_at(redis_url) as queue:
        first, s0 = await seat(queue, 1000)
        assert s0 == 0, "the first opens the table"
        near, s1 = await seat(queue, 1080)
        assert (near, s1) == (first, 1)
        far, s2 = await seat(queue, 1700)
        assert s2 == 0
        assert far != first, "a veteran sent to a newcomers' table at once"
        # The nearest table in level wins when two would take the caller.
        closer, s3 = await seat(queue, 1690)
        assert (closer, s3) == (far, 1)


async def test_the_band_widens_with_the_wait_as_the_engine_says(redis_url: str) -> None:
    async with queue_at(redis_url) as queue:
        for waited in (0, 5_000, 15_000, 30_000, 44_000):
            await queue.redis.delete(keys.quick(4))
            token, _ = await seat(queue, 1000)
            await opened_ago(queue, token, waited)
            reach = band(waited, FILL_MS)
            # The script reads its clock a few ms later: its band is a point or two wider.
            outside, s = await seat(queue, 1000 + reach + 5)
            assert s == 0, f"taken past the band after {waited} ms"
            assert outside != token
            await queue.redis.hdel(keys.quick(4), outside)
            inside, s = await seat(queue, 1000 - reach)
            assert (inside, s) == (token, 1), f"refused within the band after {waited} ms"


async def test_any_level_is_taken_before_the_bots_fill_in(redis_url: str) -> None:
    async with queue_at(redis_url) as queue:
        token, _ = await seat(queue, 1000)
        await opened_ago(queue, token, int(FILL_MS * 0.75))
        assert band(int(FILL_MS * 0.75), FILL_MS) == ANY_LEVEL
        assert await seat(queue, 3000) == (token, 1)


async def test_a_full_or_unusable_table_is_never_offered_again(redis_url: str) -> None:
    async with queue_at(redis_url) as queue:
        token, _ = await seat(queue, 1000)
        for s in (1, 2, 3):
            assert await seat(queue, 1000) == (token, s)
        fresh, s = await seat(queue, 1000)
        assert s == 0
        assert fresh != token
        assert not await queue.redis.hexists(keys.quick(4), token)
        again, s = await queue.seat(4, uuid.uuid4().hex, OFFER_MS, fresh, 1000, FILL_MS)
        assert s == 0
        assert again != fresh
