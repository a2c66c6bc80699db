"""The move of a table off a lost node (actors/rescue.py), without Ray, against a real
redis-server: the compare-and-set (of gateways racing, one wins), the fence (an incarnation
that was only cut off can never save over the new one), and the probe that tells a lost process
from one that is merely frozen."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import sys

import pytest
import redis
import redis.asyncio as aioredis

from actors import keys
from actors.placement import answers
from actors.rescue import HAND_OVER, MOVE_HERE
from actors.snapshot import record_json
from actors.store import TableMoved
from actors.table_core import TableCore
from tests.actors.test_cells import ok, record
from tests.actors.test_table_core import CODE, NAME, Clock, act, saved


async def test_of_two_gateways_moving_a_table_off_a_lost_node_one_wins(redis_url: str) -> None:
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        codes = [f"RS{i:04d}" for i in range(50)]
        for code in codes:
            r.set(keys.table(code), record_json(f"table-{code}", 4), ex=3600)
        for code in codes:
            name = f"table-{code}"
            won = await asyncio.gather(
                MOVE_HERE.run(client, [keys.table(code)], [name, 0, ""]),
                MOVE_HERE.run(client, [keys.table(code)], [name, 0, ""]),
            )
            assert sorted(won) == [0, 1], (code, won)
            rec = json.loads(r.get(keys.table(code)) or "{}")
            assert rec["actor"] == name  # the same name: the table keeps its identity
            assert rec["moves"] == 1
            assert 0 < int(r.ttl(keys.table(code))) <= 3600  # its TTL kept
        # Found with a count or a name the record no longer has: someone moved it first.
        assert await MOVE_HERE.run(client, [keys.table(codes[0])], ["table-RS0000", 0, ""]) == 0
        assert await MOVE_HERE.run(client, [keys.table(codes[0])], ["another", 1, ""]) == 0
        assert await MOVE_HERE.run(client, [keys.table(codes[0])], ["table-RS0000", 1, ""]) == 2
        assert await MOVE_HERE.run(client, [keys.table("NOSUCH")], ["x", 0, ""]) == 0
    finally:
        r.close()
        await client.aclose()


async def test_an_incarnation_cut_off_on_a_lost_node_is_fenced(redis_url: str) -> None:
    """The node was not dead but cut off: its incarnation still runs when the table is started
    again elsewhere under the same name. Its next change is refused, and its stop leaves the
    new incarnation's records."""
    clock = Clock()
    ended: list[str] = []
    old = TableCore(NAME, redis_url, now=clock, on_moved=lambda: ended.append("old"))
    assert (await old.open(CODE, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))).ok
    assert ok(await old.serve(act("p0", "add_bot", seat=1)))
    seq = saved(redis_url)["seq"]
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    assert await MOVE_HERE.run(client, [keys.table(CODE)], [NAME, 0, ""]) == 1
    new = TableCore(NAME, redis_url, now=clock)  # restores itself from the snapshot
    assert new.table is not None
    assert new.feed.seq == seq
    assert new.store.moves == 1
    published = old.feed.published
    with pytest.raises(TableMoved):
        await old.serve(act("p0", "add_bot", seat=2))
    assert ended == ["old"]
    assert old.feed.published == published  # not published, not answered
    assert saved(redis_url)["seq"] == seq
    assert ok(await new.serve(act("p0", "add_bot", seat=2)))
    assert saved(redis_url)["seq"] > seq
    assert record(redis_url)["moves"] == 1  # the new one's saves keep the count
    after = saved(redis_url)["seq"]
    await old.stop()
    assert record(redis_url)["actor"] == NAME
    assert saved(redis_url)["seq"] == after
    await new.stop()
    assert record(redis_url) == {}
    await client.aclose()


async def test_a_pooled_actor_takes_the_table_over_and_keeps_its_id(redis_url: str) -> None:
    """The move into a ready actor: `moving` names it, it adopts the table from the snapshot
    (the same id, the count of the move), `HAND_OVER` names it the table's actor; a restart of
    the old actor meanwhile finds the table is not its own, and the old incarnation is fenced."""
    clock = Clock()
    old = TableCore(NAME, redis_url, now=clock, on_moved=lambda: None)
    assert (await old.open(CODE, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))).ok
    assert ok(await old.serve(act("p0", "add_bot", seat=1)))
    seq = saved(redis_url)["seq"]
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    pooled = TableCore("T-pooled", redis_url, now=clock)
    assert pooled.table is None
    await client.set(keys.actor("T-pooled"), CODE)
    assert await MOVE_HERE.run(client, [keys.table(CODE)], [NAME, 0, "T-pooled"]) == 1
    # Ray restarting the old actor now: the table is being handed to another, not its own.
    restarted = TableCore(NAME, redis_url, now=clock)
    assert restarted.table is None
    assert restarted.store.superseded
    adopted = pooled.adopt(CODE)
    assert adopted.ok, adopted
    assert pooled.feed.seq == seq
    assert pooled.table_id == NAME  # its replay and its matches keep their names
    assert pooled.store.moves == 1
    assert pooled.adopt(CODE).ok  # asked twice (a retry): the same answer
    assert not pooled.adopt("OTHER").ok
    assert await HAND_OVER.run(client, [keys.table(CODE)], ["T-pooled", 1, "0"]) == 1
    rec = record(redis_url)
    assert (rec["actor"], rec["table_id"], rec["moves"]) == ("T-pooled", NAME, 1)
    assert "moving" not in rec
    with pytest.raises(TableMoved):
        await old.serve(act("p0", "add_bot", seat=2))
    assert ok(await pooled.serve(act("p0", "add_bot", seat=2)))
    rec = record(redis_url)
    assert (rec["actor"], rec["table_id"], rec["moves"]) == ("T-pooled", NAME, 1)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    assert r.get(keys.actor(NAME)) == CODE  # the replay is still found by its id
    last = json.loads(r.lindex(keys.replay(CODE, NAME), -1) or "[]")
    assert last[0] == saved(redis_url)["seq"]  # the new incarnation appends to the same replay
    r.close()
    # Once handed over, a second hand-over of another move is refused.
    assert await HAND_OVER.run(client, [keys.table(CODE)], ["T-pooled", 2, "0"]) == 0
    await old.stop()
    await pooled.stop()
    assert record(redis_url) == {}
    await client.aclose()


async def test_the_probe_tells_a_lost_process_from_a_frozen_one() -> None:
    """A frozen process (SIGSTOP, or one too busy to accept) still has its connections accepted
    by the kernel: never judged lost. A killed one refuses at once."""
    listener = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import socket, sys, time\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(16)\n"
        "print(s.getsockname()[1], flush=True)\n"
        "time.sleep(120)\n",
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert listener.stdout is not None
        port = int(await listener.stdout.readline())
        assert await answers(("127.0.0.1", port))
        listener.send_signal(signal.SIGSTOP)
        assert await answers(("127.0.0.1", port))  # frozen: still there
        listener.send_signal(signal.SIGCONT)
        listener.kill()
        await listener.wait()
        assert not await answers(("127.0.0.1", port))  # killed: refused
    finally:
        if listener.returncode is None:
            listener.kill()
            await listener.wait()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert not await answers(("127.0.0.1", free))
    assert not await answers(None)
