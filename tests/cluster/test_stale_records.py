"""Records that name a Ray actor repair themselves (issue 20, part 1). Redis outlives Ray: after a
cluster is replaced, or runs stopped hard, it still names actors that no longer exist. Each test
makes one such record stale by hand and checks that the gateways drop or repair it where they
use it, at once, instead of failing on it (a `/readyz` stuck at 503 takes a gateway out of
traffic, and then nothing ever uses, so repairs, the record: a total outage)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from actors import keys
from actors.directory import Directory, DirectorySettings
from actors.pool_demand import PoolPolicy
from actors.protocol import Probe
from actors.ray_names import new_name
from actors.table_actor import actor_class, record_json
from actors.table_records import new_code
from cluster.procs import RayWorkerNode, RedisServer
from cluster.redis_client import async_redis
from tests.cluster.client import Player, table_with
from tests.cluster.nodes import actor_on, ask_now, kill_node, node_of
from tests.cluster.test_resilience import actor_pid
from tests.cluster.test_restore import until
from tests.conftest import Gateway, Stack

FRESH_S = 10.0  # actors.directory.ANSWER_FRESH_S: until then /readyz trusts a recent answer


def store(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(stack.redis.url, decode_responses=True)


def ghost() -> str:
    """A table actor name that no actor has."""
    return new_name()


def alive(stack: Stack, name: str) -> bool:
    ray = stack.driver()
    try:
        ray.get_actor(name, namespace=stack.namespace)
    except ValueError:
        return False
    return True


def process_gone(pid: int) -> bool:
    """Whether process `pid` has exited (a zombie not yet reaped counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def seated_connected(r: redis.Redis, code: str) -> bool:
    snap = json.loads(r.get(keys.snapshot(code)) or "{}")
    return bool(snap["table"]["state"]["seats"][0]["connected"])


async def readyz(url: str) -> tuple[int, dict[str, Any]]:
    async with httpx.AsyncClient(base_url=url, timeout=10) as c:
        r = await c.get("/readyz")
        return r.status_code, dict(r.json())


async def ready_throughout(gateways: list[Gateway], done: Any, limit: float) -> list[str]:
    """Poll every gateway's `/readyz` until `done()` holds (within `limit`); every answer on the
    way must be 200. The answers seen, for the failure message."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    seen: list[str] = []
    while True:
        for gw in gateways:
            status, body = await readyz(gw.url)
            seen.append(f"{gw.port}:{status}:{body.get('tables')}")
            assert status == 200, seen[-6:]
        if done():
            return seen
        assert loop.time() < deadline, f"not within {limit} s; {seen[-6:]}"
        await asyncio.sleep(0.5)


async def create(base: str, name: str = "maker") -> tuple[Player, str]:
    p = await Player(base, name).register()
    r = await p.rest("POST", "/api/tables", json={"players": 4})
    assert r.status_code == 201, r.text
    return p, str(r.json()["code"])


def forget_table(stack: Stack, code: str) -> None:
    """Stop a table this test opened for good, its records with it (a lobby holds a slot)."""
    r = store(stack)
    raw = r.get(keys.table(code))
    if raw is None:
        return
    name = str(json.loads(raw)["actor"])
    r.delete(keys.table(code), keys.actor(name), keys.snapshot(code), keys.log(code))
    ray = stack.driver()
    with contextlib.suppress(ValueError):  # gone already
        ray.kill(ray.get_actor(name, namespace=stack.namespace), no_restart=True)


async def test_a_dead_name_at_the_head_of_the_pool_is_dropped_and_readiness_holds(
    stack: Stack, tmp_path: Path
) -> None:
    # A gateway of its own that serves no table: past FRESH_S its probe pings the pool's head.
    gw = stack.gateway(tmp_path)
    gw.wait_ready()
    r = store(stack)
    name = ghost()
    try:
        r.lpush(keys.POOL, name)
        started = time.monotonic()
        # Before: 503 "down: the pooled actor is gone" once the last answer was FRESH_S old,
        # and for ever after, on every gateway probing the pool.
        await ready_throughout([gw], lambda: r.lpos(keys.POOL, name) is None, FRESH_S + 15)
        dropped_after = time.monotonic() - started
        await ready_throughout([stack.a, stack.b], lambda: True, 5)
        _, code = await create(gw.url)
        forget_table(stack, code)
        print(f"stale pool head: dropped after {dropped_after:.1f} s")
    finally:
        r.lrem(keys.POOL, 0, name)
        gw.stop()


async def test_the_refill_counts_only_live_pooled_actors(stack: Stack, tmp_path: Path) -> None:
    gw = stack.gateway(tmp_path, QUATRO_POOL_SIZE="2")
    gw.wait_ready()
    r = store(stack)
    ghosts = [ghost() for _ in range(3)]
    opened: list[str] = []
    try:
        r.rpush(keys.POOL, *ghosts)  # behind the live ones: the pool looks full to LLEN
        for i in range(2):
            _, code = await create(gw.url, f"m{i}")
            opened.append(code)

        def refilled() -> bool:
            names = [str(n) for n in r.lrange(keys.POOL, 0, -1)]
            return not set(ghosts) & set(names) and sum(alive(stack, n) for n in names) >= 2

        # Before: the two live actors were taken, LLEN stayed at 3 and the pool held ghosts only.
        await ready_throughout([gw], refilled, 30)
    finally:
        for name in ghosts:
            r.lrem(keys.POOL, 0, name)
        for code in opened:
            forget_table(stack, code)
        gw.stop()


async def test_a_table_record_naming_a_gone_actor_without_snapshot_is_deleted(
    stack: Stack,
) -> None:
    r = store(stack)
    p = await Player(stack.a.url, "seated").register()
    code, name = new_code(), ghost()
    r.set(keys.table(code), record_json(name, 4))
    r.set(keys.actor(name), code)
    r.hset(keys.player_tables(p.player_id), code, 1)
    started = time.monotonic()
    got = await p.rest("GET", f"/api/tables/{code}")
    took = time.monotonic() - started
    assert got.status_code == 404, got.text
    assert got.json()["error"]["code"] == "unknown_table"
    assert took < 3, took  # not a 503 after the actor timeout
    assert not r.exists(keys.table(code)), "the stale record is still there"
    assert not r.exists(keys.actor(name))
    # The player's seat record no longer sends them there.
    mine = await p.rest("GET", "/api/sessions/tables")
    assert mine.status_code == 200, mine.text
    assert mine.json()["tables"] == [], mine.text
    assert not r.hexists(keys.player_tables(p.player_id), code)
    # Asked again, and of the other gateway: nothing there either.
    assert (await p.rest("GET", f"/api/tables/{code}")).status_code == 404
    elsewhere = Player(stack.b.url, "seated")
    elsewhere.token = p.token
    assert (await elsewhere.rest("GET", f"/api/tables/{code}")).status_code == 404


async def test_a_gone_tables_lost_actor_record_is_written_again_before_its_restore(
    stack: Stack,
) -> None:
    """The code → actor record and a snapshot say the table can come back; its actor → code
    record (how a restarted actor learns which table it serves) was lost. The actor started
    again under that name must restore that table, not come up empty."""
    code, (host,) = await table_with(stack.a.url, 4, 1)
    r = store(stack)
    name = str(json.loads(r.get(keys.table(code)) or "{}")["actor"])
    ray = stack.driver()
    try:
        await host.close()
        # The departure saved, the actor killed and gone from Ray: until then a save of its
        # own could write the record again.
        await until(lambda: not seated_connected(r, code), 15, "the host's departure is saved")
        pid = actor_pid(stack, code)
        ray.kill(ray.get_actor(name, namespace=stack.namespace), no_restart=True)
        await until(lambda: not alive(stack, name), 15, "the actor is gone from Ray")
        await until(lambda: process_gone(pid), 15, "the actor's process is gone")
        r.delete(keys.actor(name))
        guest = Player(stack.b.url, "P0")
        guest.token, guest.player_id = host.token, host.player_id
        got = await guest.rest("GET", f"/api/tables/{code}")
        # Before: the new actor found no table to restore: 404 and a table-less actor left behind.
        assert got.status_code == 200, got.text
        assert got.json()["players"] == 4
        assert r.get(keys.actor(name)) == code
        welcome = await guest.connect(code)
        assert welcome["you"]["seat"] == 0
        await guest.close()
    finally:
        forget_table(stack, code)


async def test_a_quick_play_seat_at_a_gone_table_is_dropped_and_another_found(
    stack: Stack,
) -> None:
    r = store(stack)
    p = await Player(stack.a.url, "quick").register()
    code, name = new_code(), ghost()
    r.set(keys.table(code), record_json(name, 6))
    seat = {"code": code, "table_id": name, "seat": 2, "players": 6}
    r.set(keys.quick_seat(p.player_id), json.dumps(seat))
    started = time.monotonic()
    got = await p.rest("POST", "/api/quickplay", json={"players": 6})
    took = time.monotonic() - started
    try:
        assert got.status_code == 200, got.text
        assert got.json()["code"] != code
        assert took < 15, took
        assert not r.exists(keys.table(code)), "the stale table record is still there"
        mine = json.loads(r.get(keys.quick_seat(p.player_id)) or "{}")
        assert mine["code"] == got.json()["code"]
    finally:
        if got.status_code == 200:
            forget_table(stack, got.json()["code"])
        r.delete(keys.quick(6))  # the next quick-play test opens a table of its own


async def test_a_quick_play_table_to_fill_whose_actor_is_gone_is_passed_over(
    stack: Stack,
) -> None:
    """The size's hash hands out seats of a token whose table's actor is gone: the caller
    is seated elsewhere, and the next caller is not sent there again."""
    r = store(stack)
    code, name = new_code(), ghost()
    token = uuid.uuid4().hex
    r.set(keys.table(code), record_json(name, 6))
    r.set(keys.quick_table(token), code)
    until_ms = int(time.time() * 1000) + 60_000
    r.hset(keys.quick(6), token, f"1000 1 {until_ms} {until_ms - 60_000}")
    codes = []
    try:
        for i in range(2):
            p = await Player(stack.b.url, f"q{i}").register()
            got = await p.rest("POST", "/api/quickplay", json={"players": 6})
            assert got.status_code == 200, got.text
            codes.append(got.json()["code"])
        assert code not in codes
        assert not r.hexists(keys.quick(6), token), "the unusable table is offered again"
        assert not r.exists(keys.table(code)), "the stale table record is still there"
    finally:
        for c in set(codes):
            forget_table(stack, c)
        r.delete(keys.quick(6))


async def test_a_pooled_name_whose_actor_already_serves_a_table_is_passed_over(
    stack: Stack,
) -> None:
    """The pool names a live actor that serves a table (pushed twice, or by hand): a creation
    must not fail on it, nor take that table over."""
    code, (host,) = await table_with(stack.a.url, 4, 1)
    r = store(stack)
    name = str(json.loads(r.get(keys.table(code)) or "{}")["actor"])
    opened: list[str] = []
    try:
        r.lpush(keys.POOL, name)
        for i in range(2):  # one gateway after the other: whichever pops it passes it over
            gw = stack.a if i == 0 else stack.b
            p = await Player(gw.url, f"n{i}").register()
            got = await p.rest("POST", "/api/tables", json={"players": 4})
            assert got.status_code == 201, got.text  # before: 500, "refused to open"
            opened.append(got.json()["code"])
            assert json.loads(r.get(keys.table(opened[-1])) or "{}")["actor"] != name
        assert r.lpos(keys.POOL, name) is None
        summary = (await host.rest("GET", f"/api/tables/{code}")).json()
        assert summary["seats"][0]["name"] == "P0", summary  # still the host's table
    finally:
        r.lrem(keys.POOL, 0, name)
        await host.close()
        for c in [code, *opened]:
            forget_table(stack, c)


@pytest.mark.destructive
async def test_a_pooled_actor_whose_node_is_lost_fails_no_creation_nor_readiness(
    stack: Stack, tmp_path: Path
) -> None:
    """The pool names live actors whose node then dies (a worker replaced, a machine lost):
    until Ray declares the node dead and restarts them elsewhere (2-3 s), a call to one hangs,
    then fails. A creation must take the next actor, and a readiness probe must not wait on
    one: every gateway probing the shared pool would leave traffic at once."""
    node = RayWorkerNode(stack.head, table_slots=4, num_cpus=1, object_store_mb=80).start()
    ray = stack.driver()
    first, second = ghost(), ghost()  # names of actors on that node, for a creation, a probe
    r = store(stack)
    gw = stack.gateway(tmp_path)  # serves no table: its probe pings the pool's head
    opened: list[str] = []
    try:
        node_id = await node_of(stack, node.manager_port)
        for name in (first, second):
            actor_on(stack, name, node_id)
        gw.wait_ready()
        r.lpush(keys.POOL, first)  # at the head: the next creation takes it
        kill_node(node)
        lost_at = time.monotonic()
        creating = asyncio.create_task(create(gw.url))
        await until(lambda: r.lpos(keys.POOL, first) is None, 10, "the creation takes it")
        r.lpush(keys.POOL, second)  # at the head: the probes ask it first
        # Every probe answers 200 from the loss until well past the gateway's last answer
        # (FRESH_S) and the creation's end. Before: 503, "down: no answer from a table actor".
        await ready_throughout(
            [gw, stack.a, stack.b],
            lambda: creating.done() and time.monotonic() - lost_at > FRESH_S + 5,
            FRESH_S + 60,
        )
        _, code = await creating  # before: 503 `unavailable`
        opened.append(code)
        assert json.loads(r.get(keys.table(code)) or "{}")["actor"] not in (first, second)
        print(f"a creation across a lost pooled actor: {time.monotonic() - lost_at:.1f} s")
    finally:
        for name in (first, second):
            r.lrem(keys.POOL, 0, name)
            with contextlib.suppress(Exception):
                ray.kill(ray.get_actor(name, namespace=stack.namespace), no_restart=True)
        for c in opened:
            forget_table(stack, c)
        gw.stop()
        node.stop()


@pytest.mark.destructive
async def test_a_pool_of_only_lost_actors_leaves_the_probe_to_a_live_table(stack: Stack) -> None:
    """Table actors SPREAD, so the refills after a node joined can put the whole head of the
    shared pool on it; when it is lost, every pooled ping fails, yet this gateway reaches the
    workers, and a live table's actor proves it. A Redis of its own: the pool holds only those
    names."""
    own = RedisServer()
    own.start()
    client = async_redis(own.url, 30.0)
    ray = stack.driver()
    lost, live = [ghost(), ghost()], ghost()
    names = [live]
    directory: Directory | None = None
    node: RayWorkerNode | None = None
    try:
        # Placed before the node exists: not on it.
        handle = (
            actor_class()
            .options(name=live, namespace=stack.namespace, lifetime="detached")
            .remote(live, own.url)
        )
        ask_now(stack, handle, Probe())
        node = RayWorkerNode(stack.head, table_slots=4, num_cpus=1, object_store_mb=80).start()
        node_id = await node_of(stack, node.manager_port)
        for name in lost:
            names.append(name)
            actor_on(stack, name, node_id, own.url)
        await client.rpush(keys.POOL, *lost)
        await client.set(keys.table("LOST22"), record_json(live, 4))
        # A pool that may start no actor (its slot reserve is more than any cluster has).
        settings = DirectorySettings(
            stack.namespace, own.url, PoolPolicy(minimum=1), slot_reserve=10**9
        )
        directory = Directory(client, settings)
        kill_node(node)
        # Before: "down: ActorUnavailableError" (or no answer), with every pooled ping failed.
        assert await directory.reach_tables(wait_s=3) == "ok"
    finally:
        if directory is not None:
            await directory.close()
        for name in names:
            with contextlib.suppress(Exception):
                ray.kill(ray.get_actor(name, namespace=stack.namespace), no_restart=True)
        await client.aclose()
        own.cleanup()
        if node is not None:
            node.stop()
