"""Cells without Ray, against a real redis-server: the move of a table is a compare-and-set (of
gateways racing, one wins), an incarnation left in the old cell is fenced (its saves refused,
its stop leaves the new one's records), each cell has its own pool, a cell's registry record
is never trusted past its TTL, and nothing changes without cells."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis

from actors import keys
from actors.cells import CellInfo, Registry, place
from actors.pool import Pool
from actors.pool_demand import PoolPolicy
from actors.protocol import Outcome, Reply
from actors.ray_calls import LastAnswer
from actors.slots import Slots
from actors.snapshot import record_json
from actors.store import TableMoved
from actors.table_core import TableCore
from tests.actors.test_table_core import CODE, NAME, Clock, act, saved


def record(url: str, code: str = CODE) -> dict[str, Any]:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        return dict(json.loads(r.get(keys.table(code)) or "{}"))
    finally:
        r.close()


def ok(reply: Reply) -> bool:
    return isinstance(reply, Outcome) and reply.ok


def registry(url: str, cell: str, ttl_ms: int = 5000) -> Registry:
    client = aioredis.Redis.from_url(url, decode_responses=True)
    return Registry(client, cell, f"127.0.0.1:1{len(cell)}", 2, ttl_ms)


async def test_of_two_gateways_moving_a_table_one_wins(redis_url: str) -> None:
    b, c = registry(redis_url, "b"), registry(redis_url, "c")
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    codes = [f"MV{i:04d}" for i in range(50)]
    for code in codes:
        r.set(keys.table(code), record_json(f"table-{code}", 4, "a"), ex=3600)
        r.sadd(keys.cell_tables("a"), code)
    for code in codes:
        won = await asyncio.gather(b.move(code, "a"), c.move(code, "a"))
        assert sorted(won) == [False, True], (code, won)
        rec = json.loads(r.get(keys.table(code)) or "{}")
        assert rec["cell"] == ("b" if won[0] else "c")
        assert rec["actor"] == f"table-{code}"  # the same actor name, restored in the new cell
        assert rec["moves"] == 1  # one move, counted once, whoever won
        assert 0 < int(r.ttl(keys.table(code))) <= 3600  # its TTL kept
        assert r.sismember(keys.cell_tables(rec["cell"]), code)  # the winner's to sweep now
    assert r.scard(keys.cell_tables("a")) == 0
    # A record that names another cell by now (moved already) is not moved again.
    assert not await b.move(codes[0], "a")
    assert not await b.move("NOSUCH", "a")
    r.close()
    await b.redis.aclose()
    await c.redis.aclose()


async def test_an_incarnation_left_in_the_old_cell_is_fenced(redis_url: str) -> None:
    clock = Clock()
    moved: list[str] = []
    old = TableCore(NAME, redis_url, now=clock, cell="a", on_moved=lambda: moved.append("a"))
    assert (await old.open(CODE, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))).ok
    assert ok(await old.serve(act("p0", "add_bot", seat=1)))
    assert record(redis_url)["cell"] == "a"
    seq = saved(redis_url)["seq"]
    # Cell a is judged lost (a partition: this incarnation still runs) and b takes the table.
    b = registry(redis_url, "b")
    assert await b.move(CODE, "a")
    new = TableCore(NAME, redis_url, now=clock, cell="b")  # restores itself from the snapshot
    assert new.table is not None
    assert new.feed.seq == seq
    # The old incarnation's next change is refused: not saved, not published, not answered.
    published = old.feed.published
    with pytest.raises(TableMoved):
        await old.serve(act("p0", "add_bot", seat=2))
    assert moved == ["a"]
    assert old.store.fenced
    assert old.feed.published == published
    assert saved(redis_url)["seq"] == seq
    assert record(redis_url)["cell"] == "b"
    # The new one plays on and saves.
    assert ok(await new.serve(act("p0", "add_bot", seat=2)))
    assert saved(redis_url)["seq"] > seq
    after = saved(redis_url)["seq"]
    # The old one stopping (its idle stop) leaves the new one's records alone.
    await old.stop()
    assert record(redis_url)["cell"] == "b"
    assert saved(redis_url)["seq"] == after
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    assert int(r.ttl(keys.snapshot(CODE))) > 3600
    r.close()
    await new.stop()
    assert record(redis_url) == {}  # its own stop does retire the table
    await b.redis.aclose()


async def test_an_incarnation_left_behind_is_fenced_when_the_table_comes_back_to_its_cell(
    redis_url: str,
) -> None:
    """a -> b -> a while the first incarnation in a still runs (cut off, then back): the record
    names cell a again, and only its count of moves tells that incarnation from the one the
    second move started. Without it the stale one would save its older table over the new."""
    clock = Clock()
    stale = TableCore(NAME, redis_url, now=clock, cell="a", on_moved=lambda: None)
    assert (await stale.open(CODE, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))).ok
    assert ok(await stale.serve(act("p0", "add_bot", seat=1)))
    b, a = registry(redis_url, "b"), registry(redis_url, "a")
    assert await b.move(CODE, "a")
    in_b = TableCore(NAME, redis_url, now=clock, cell="b")
    assert ok(await in_b.serve(act("p0", "add_bot", seat=2)))
    assert await a.move(CODE, "b")  # cell b lost in turn: back to a
    assert record(redis_url)["cell"] == "a"
    assert record(redis_url)["moves"] == 2
    back = TableCore(NAME, redis_url, now=clock, cell="a")
    assert back.store.moves == 2
    seq = saved(redis_url)["seq"]
    assert back.feed.seq == seq  # the table as b left it
    with pytest.raises(TableMoved):
        await stale.serve(act("p0", "add_bot", seat=3))
    assert saved(redis_url)["seq"] == seq
    assert ok(await back.serve(act("p0", "add_bot", seat=3)))
    assert saved(redis_url)["seq"] > seq
    assert record(redis_url)["moves"] == 2  # its saves keep the count
    after = saved(redis_url)["seq"]
    await stale.stop()  # nor does its stop take the records from the one in play
    assert record(redis_url)["cell"] == "a"
    assert saved(redis_url)["seq"] == after
    await b.redis.aclose()
    await a.redis.aclose()


async def test_without_cells_records_and_pool_keys_are_as_before(redis_url: str) -> None:
    # A live deployment upgraded without a cell keeps its Redis: byte for byte the same.
    assert record_json("table-x", 4) == '{"table_id": "table-x", "actor": "table-x", "players": 4}'
    assert keys.pool() == keys.POOL == "quatro:pool"
    assert keys.pool_targets() == keys.POOL_TARGETS == "quatro:pool:targets"
    core = TableCore(NAME, redis_url, now=Clock())
    assert (await core.open(CODE, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))).ok
    assert "cell" not in record(redis_url)
    await core.stop()


async def test_each_cell_has_its_own_pool(redis_url: str) -> None:
    assert len({keys.pool("a"), keys.pool("b"), keys.pool()}) == 3
    assert len({keys.pool_targets("a"), keys.pool_targets("b"), keys.pool_targets()}) == 3
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    await r.rpush(keys.pool("a"), "table-of-a")
    looked: list[str] = []

    class CellB:
        """Cell b's Ray, which knows no actor of cell a (`actors.ray_names.Actors`)."""

        def start(self, name: str, node: str = "") -> Any:
            raise AssertionError("no actor may start here")

        async def lookup(self, name: str) -> None:
            looked.append(name)
            return None

        def kill(self, handle: Any) -> None:
            raise AssertionError("no actor may be stopped here")

    slots = Slots(0, read=lambda: (0.0, 0.0))
    pool = Pool(r, slots, CellB(), LastAnswer(), PoolPolicy(0, 0, 1), cell="b")
    assert pool.shared.key == keys.pool("b")
    assert await pool.shared.live() == 0
    # Cell b's gateway never sees, nor drops as dead, a pooled actor of cell a.
    assert looked == []
    assert await r.lrange(keys.pool("a"), 0, -1) == ["table-of-a"]
    await pool.close()
    await r.aclose()


async def test_a_cells_record_is_not_trusted_past_its_ttl(redis_url: str) -> None:
    a = registry(redis_url, "a", ttl_ms=400)
    b = registry(redis_url, "b", ttl_ms=60_000)
    await a.publish(50, 100)
    await b.publish(10, 100)
    cells = await b.cells()
    assert set(cells) == {"a", "b"}
    assert cells["a"] == CellInfo("a", 50, 100, 2, a.internal)
    assert place(cells, "b") == "a"  # more room: a new table goes there
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while await b.get("a") is not None:  # nobody renews a's record: it expires
        assert loop.time() < deadline, "cell a's record outlived its TTL"
        await asyncio.sleep(0.05)
    assert set(await b.cells()) == {"b"}
    assert place(await b.cells(), "b") == "b"
    await a.redis.aclose()
    await b.redis.aclose()


def test_placement_prefers_room_then_home() -> None:
    def cell(name: str, free: int) -> CellInfo:
        return CellInfo(name, free, 100, 4, "")

    assert place({"a": cell("a", 20), "b": cell("b", 20)}, "b") == "b"  # a tie: home
    assert place({"a": cell("a", 21), "b": cell("b", 20)}, "b") == "a"
    assert place({"a": cell("a", 4), "b": cell("b", 3)}, "b") == "b"  # none has room: home
    assert place({"a": cell("a", 30)}, "b") == "b"  # home not published yet: home
    assert place({"a": cell("a", 30), "b": cell("b", 3), "c": cell("c", 31)}, "b") == "c"
