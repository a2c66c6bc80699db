"""Restores never strand a table: a restarted actor runs its clock with nobody calling, an older
snapshot is migrated, an unreadable one closes the table cleanly and says why, the records that
find a table are written anew by every save, and a table whose actor Ray forgot comes back."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import redis

from actors import keys
from tests.cluster.client import Player, table_with
from tests.cluster.test_resilience import actor_pid, open_round
from tests.conftest import Stack


def store(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(stack.redis.url, decode_responses=True)


def snapshot(stack: Stack, code: str) -> dict[str, Any]:
    return dict(json.loads(store(stack).get(keys.snapshot(code)) or "{}"))


def actor_name(stack: Stack, code: str) -> str:
    return str(json.loads(store(stack).get(keys.table(code)) or "{}")["actor"])


async def until(check: Any, limit: float, what: str) -> Any:
    """Poll `check()` (a plain function reading Redis) until it is truthy, within `limit`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not (result := check()):
        if loop.time() > deadline:
            raise AssertionError(f"not within {limit} s: {what}")
        await asyncio.sleep(0.05)
    return result


async def test_a_restarted_table_plays_on_with_nobody_connected(stack: Stack) -> None:
    # Smart bots play on their own; the host leaves, then the actor dies. Half-speed clocks: at
    # 0.05 the bots could finish the whole match before the kill, and an over table is silent.
    code, (host,) = await table_with(stack.a.url, 4, 1, bot_policy="smart", time_scale=0.5)
    await quick_bots(host, code)
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    await host.wait_event(lambda e: e["type"] == "signing")
    await host.close()
    await until(
        lambda: not snapshot(stack, code)["table"]["state"]["seats"][0]["connected"],
        15,
        "the host's departure is saved",
    )
    # Nobody calls the table now: its own clock must bring the bots back to play. (On a full
    # cluster this once waited behind new tables queued in Ray: tests/cluster/test_full.py.)
    await kill_and_see_the_bots_play_on(stack, code)


async def quick_bots(host: Player, code: str) -> None:
    """Sharp bots: at a human pace (normal) a new deal may stay still for 10-20 s of this clock
    before the bots' first swaps, and the restarted table must show play within its limit."""
    r = await host.rest("PATCH", f"/api/tables/{code}/settings", json={"bot_level": "sharp"})
    assert r.status_code == 200, r.text


async def kill_and_see_the_bots_play_on(stack: Stack, code: str) -> float:
    """Kill the table's actor process; its next incarnation must play on (a few events more in
    its snapshot) with nobody calling it. Returns how long that took; a failure says what Ray
    made of it."""
    pid = actor_pid(stack, code)
    seq = snapshot(stack, code)["seq"]
    loop = asyncio.get_running_loop()
    killed = loop.time()
    os.kill(pid, signal.SIGKILL)
    try:
        await until(lambda: snapshot(stack, code)["seq"] > seq + 5, 45, "the bots play on")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; {ray_view(stack, code)}") from None
    return loop.time() - killed


def ray_view(stack: Stack, code: str) -> str:
    """What Ray says of a table's actor and of the free slots, for a failure's message (the
    control store's own table: the test cluster runs no dashboard for Ray's state API)."""
    from ray._private import state

    ray = stack.driver()
    name = actor_name(stack, code)
    actors = list(state.actors().values())
    mine = [(a["State"], a.get("NumRestarts")) for a in actors if a.get("Name") == name]
    pending = sum(1 for a in actors if a["State"] == "PENDING_CREATION")
    free = ray.available_resources().get("table_slot", 0)
    total = ray.cluster_resources().get("table_slot", 0)
    table = snapshot(stack, code).get("table", {}).get("state", {})
    return (
        f"actor {mine}, table slots free {free} of {total}, actors pending creation {pending}, "
        f"table in phase {table.get('phase')} of round {table.get('round')}"
    )


async def test_an_older_snapshot_format_is_migrated(stack: Stack) -> None:
    code, people = await table_with(stack.a.url, 4, 2, deals=1, time_scale=0.2)
    rounds = await open_round(code, people)
    host = people[0]
    r = store(stack)
    snap = snapshot(stack, code)
    assert snap["format"] == 2
    # Format 1: no version, two idle limits, log entries without their holders.
    del snap["format"]
    snap["idle"] = snap["idle"][:2]
    r.set(keys.snapshot(code), json.dumps(snap))
    old_log = [json.dumps(json.loads(x)[:6]) for x in r.lrange(keys.log(code), 0, -1)]
    r.delete(keys.log(code))
    r.rpush(keys.log(code), *old_log)
    os.kill(actor_pid(stack, code), signal.SIGKILL)
    welcome = await host.connect(code, stack.b.url)
    assert welcome["table"]["hand"] == rounds[0]["hand"]
    mine = rounds[0]
    await host.ok("swap", card=mine["hand"][0]["id"], slot=0, expect=mine["center"][0]["id"])
    await people[1].wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 0)
    for p in people:
        await p.close()


def worker_logs(stack: Stack) -> str:
    logs = Path(stack.head.temp_dir)
    return "".join(f.read_text(errors="replace") for f in logs.rglob("worker-*.err") if f.is_file())


async def unreadable_table_closes_cleanly(stack: Stack, blob: str) -> None:
    code, people = await table_with(stack.a.url, 4, 2, deals=1, time_scale=0.2)
    host, other = people
    await open_round(code, people)
    store(stack).set(keys.snapshot(code), blob)
    os.kill(actor_pid(stack, code), signal.SIGKILL)
    # Connected players are told, quickly and clearly, instead of hanging then 1011.
    async with asyncio.timeout(15):
        closed = await host.wait_closed()
    assert closed == 4404
    assert any(f.get("code") == "table_lost" for f in host.unsolicited), host.order[-3:]
    assert await other.wait_closed() == 4404
    # Reconnecting players too; the records are gone; the log says why.
    fresh = Player(stack.b.url, "again")
    fresh.token, fresh.player_id = host.token, host.player_id
    assert not store(stack).exists(keys.table(code), keys.snapshot(code))
    r = await host.rest("GET", f"/api/tables/{code}")
    assert r.status_code == 404
    await until(lambda: "IS LOST" in worker_logs(stack), 10, "the log says why")


async def test_a_corrupt_snapshot_closes_the_table_with_table_lost(stack: Stack) -> None:
    await unreadable_table_closes_cleanly(stack, '{"table": {"now": 1, "state": [')


async def test_an_unknown_snapshot_format_closes_the_table_with_table_lost(stack: Stack) -> None:
    await unreadable_table_closes_cleanly(stack, json.dumps({"format": 99, "table": {}}))


async def test_every_save_writes_the_tables_records_anew(stack: Stack) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1)
    name = actor_name(stack, code)
    r = store(stack)
    r.delete(keys.table(code), keys.actor(name))  # as after a loss of Redis data
    res = await host.rest("DELETE", f"/api/tables/{code}/bots/1")
    assert res.status_code == 200, res.text
    assert json.loads(r.get(keys.table(code)) or "{}")["actor"] == name
    assert r.get(keys.actor(name)) == code


async def test_a_table_whose_actor_ray_forgot_comes_back_from_redis(stack: Stack) -> None:
    code, people = await table_with(stack.a.url, 4, 2, deals=1, time_scale=0.2)
    rounds = await open_round(code, people)
    ray = stack.driver()
    handle = ray.get_actor(actor_name(stack, code), namespace=stack.namespace)
    ray.kill(handle, no_restart=True)  # dead for good, as after a whole-cluster restart
    host = people[0]
    mine = rounds[0]
    await host.ok("swap", card=mine["hand"][0]["id"], slot=0, expect=mine["center"][0]["id"])
    seen = await people[1].wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 0)
    assert seen["placed"] == mine["hand"][0]
    welcome = await people[1].connect(code, stack.b.url)
    assert welcome["table"]["hand"] == rounds[1]["hand"]
    for p in people:
        await p.close()
