"""The data plane between gateways and table actors: nothing is served before a hello with the
cluster's secret; a peer that stops answering without closing is caught by heartbeats; a table
restarted on another node is reached again at its new address, with nothing lost."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any, TypeVar

import httpx
import redis

from actors import keys
from actors.codec import (
    decode,
    encode,
)
from actors.protocol import (
    Act,
    Address,
    Answer,
    Call,
    Endpoint,
    Hello,
    Joined,
    Message,
    Probe,
    Refused,
    TableCall,
    Views,
    ViewSet,
    Welcome,
)
from actors.ray_calls import answered, send
from cluster.procs import RayWorkerNode
from tests.cluster.client import Player, table_with
from tests.cluster.test_resilience import open_round
from tests.conftest import Stack

A = TypeVar("A")


def table_actor(stack: Stack, code: str) -> Any:
    record = json.loads(redis.Redis.from_url(stack.redis.url).get(keys.table(code)) or "{}")
    return stack.driver().get_actor(record["actor"], namespace=stack.namespace)


def ray_get(stack: Stack, ref: Any, timeout: float = 60) -> Any:
    return stack.driver().get(ref, timeout=timeout)


def ask_now(stack: Stack, handle: Any, call: TableCall[A], timeout: float = 60) -> A:
    """`actors.ray_calls.ask` from this test's thread: a blocking get, with a deadline."""
    return answered(call, ray_get(stack, send(handle, call), timeout))


async def exchange(where: Address, lines: list[bytes], limit: float = 10) -> list[Message]:
    """Send raw lines to a table actor's data-plane port; every message it sends back until it
    closes (or `limit`)."""
    reader, writer = await asyncio.open_connection(where.host, where.port)
    got: list[Message] = []
    try:
        for line in lines:
            writer.write(line)
        await writer.drain()
        async with asyncio.timeout(limit):
            while line := await reader.readline():
                got.append(decode(line))
    except TimeoutError:
        got.append(Refused("<still open>"))
    finally:
        writer.close()
    return got


async def test_nothing_is_served_before_a_hello_with_the_cluster_secret(stack: Stack) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1)
    handle = table_actor(stack, code)
    where = ask_now(stack, handle, Endpoint())
    assert where is not None
    assert where.host == "127.0.0.1"  # embedded: every Ray node, and so every table, on loopback
    before = ask_now(stack, handle, Probe()).links_refused
    views = encode(Call(1, Views(((0, host.player_id),))))
    inc = where.incarnation

    # A wrong secret: told nothing more than "refused", and the call that follows never answered.
    assert await exchange(where, [encode(Hello("guess", "gw-x", code, inc)), views]) == [
        Refused("refused")
    ]
    # A call with no hello, a stray HTTP request, an empty hello: refused, never served.
    assert await exchange(where, [views]) == [Refused("no hello")]
    http = await exchange(where, [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"])
    assert len(http) == 1
    assert isinstance(http[0], Refused)
    assert await exchange(where, [b"{}\n"]) == [Refused("no hello (BadMessage)")]
    # Before its hello a peer cannot make the table hold more than a small line.
    assert await exchange(where, [b"x" * 200_000]) == [Refused("no hello (ValueError)")]

    assert stack.head.token_path is not None
    secret = stack.head.token_path.read_text().strip()
    # The right secret for another table, or for an earlier incarnation: refused as well.
    assert await exchange(where, [encode(Hello(secret, "gw-x", "ZZZZZZ", inc)), views]) == [
        Refused("not this table")
    ]
    assert await exchange(where, [encode(Hello(secret, "gw-x", code, "0" * 16)), views]) == [
        Refused("another incarnation")
    ]
    refused = ask_now(stack, handle, Probe()).links_refused
    assert refused - before == 7

    # With the secret: welcomed, and the call answered with the host's own seat.
    got = await exchange(where, [encode(Hello(secret, "gw-x", code, inc)), views], limit=3)
    assert got[0] == Welcome(inc)
    assert isinstance(got[1], Answer)
    assert isinstance(got[1].reply, ViewSet)
    seated = got[1].reply.joined[0]
    assert isinstance(seated, Joined)
    assert seated.view["code"] == code
    # A player id the actor does not know at that seat gets no view (R30 holds here too).
    stranger = encode(Call(2, Views(((0, "p-stranger"),))))
    got = await exchange(where, [encode(Hello(secret, "gw-x", code, inc)), stranger], limit=3)
    assert isinstance(got[1], Answer)
    nobody = got[1].reply
    assert isinstance(nobody, ViewSet)
    assert nobody.joined == {}
    assert nobody.holders == {}
    # A command under another gateway's name acts only for the player it names, never a seat.
    act = encode(Call(3, Act.of("x:1", "gw-x", "p-stranger", "ready", {})))
    got = await exchange(where, [encode(Hello(secret, "gw-x", code, inc)), act], limit=3)
    assert isinstance(got[1], Answer)
    assert getattr(got[1].reply, "error", None) is not None
    await host.close()


async def _faults(url: str, why: str) -> float:
    async with httpx.AsyncClient(timeout=10) as c:
        text = (await c.get(f"{url}/metrics")).text
    for line in text.splitlines():
        if line.startswith(f'quatro_link_faults_total{{why="{why}"}}'):
            return float(line.split()[-1])
    return 0.0


async def test_a_table_actor_that_falls_silent_is_caught_by_heartbeats(
    stack: Stack, tmp_path: Path
) -> None:
    gw = stack.gateway(tmp_path, QUATRO_LINK_HEARTBEAT="0.2", QUATRO_LINK_DEAD_AFTER="1.0")
    gw.wait_ready()
    try:
        code, people = await table_with(gw.url, 4, 2, deals=2, time_scale=0.2)
        rounds = await open_round(code, people)
        pid = ask_now(stack, table_actor(stack, code), Probe()).pid
        before = await _faults(gw.url, "silent")
        # SIGSTOP: the process holds its sockets open and answers nothing, as behind a partition.
        os.kill(pid, signal.SIGSTOP)
        try:
            async with asyncio.timeout(20):
                while await _faults(gw.url, "silent") <= before:  # noqa: ASYNC110 - polled
                    await asyncio.sleep(0.1)
        finally:
            os.kill(pid, signal.SIGCONT)
        # Back: the players carry on over a new connection, nothing lost.
        host, other = people
        mine = rounds[1]
        card, slot = mine["hand"][0]["id"], 0
        await other.ok("swap", card=card, slot=slot, expect=mine["center"][slot]["id"])
        await host.wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 1)
        for p in people:
            assert not p.problems
            await p.close()
    finally:
        gw.stop()


async def _node_of(stack: Stack, manager_port: int) -> str:
    """The id of the node whose raylet listens on `manager_port`, once the head knows it."""
    async with asyncio.timeout(60):
        while True:
            for n in stack.driver().nodes():
                if n["Alive"] and int(n["NodeManagerPort"]) == manager_port:
                    return str(n["NodeID"])
            await asyncio.sleep(0.5)


async def table_on_node(stack: Stack, node_id: str) -> tuple[str, list[Player], Any]:
    """A new 4-seat table (2 players) whose actor runs on `node_id`. Tables spread over the
    nodes (SPREAD): a few new ones are enough to land on it."""
    for _ in range(8):
        code, people = await table_with(stack.a.url, 4, 2, deals=2, time_scale=0.2)
        handle = table_actor(stack, code)
        if ask_now(stack, handle, Probe()).node == node_id:
            return code, people, handle
        for p in people:
            await p.close()
    raise AssertionError("no table landed on the new node in 8 tries")


async def test_a_table_restarted_on_another_node_is_reached_at_its_new_address(
    stack: Stack,
) -> None:
    node = RayWorkerNode(stack.head, table_slots=8, num_cpus=1, object_store_mb=80).start()
    people: list[Player] = []
    try:
        node_id = await _node_of(stack, node.manager_port)
        code, people, handle = await table_on_node(stack, node_id)
        rounds = await open_round(code, people)
        host, other = people
        await other.connect(code, stack.b.url)  # one player per gateway
        table_before = (await host.connect(code, stack.a.url))["table"]
        before = ask_now(stack, handle, Endpoint())
        node.stop()  # the node and every process on it: the actor dies with it
        # Ray restarts it on the head, from its snapshot; the gateways find it there.
        mine = rounds[1]
        async with asyncio.timeout(90):
            while True:
                answer = await other.request(
                    "swap", card=mine["hand"][0]["id"], slot=0, expect=mine["center"][0]["id"]
                )
                if answer["type"] == "ack":
                    break
                assert answer["code"] in ("unavailable", "cooldown"), answer
                await asyncio.sleep(0.5)
        seen = await host.wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 1)
        assert seen["placed"]["id"] == mine["hand"][0]["id"]
        after = ask_now(stack, handle, Endpoint())
        assert after is not None
        assert before is not None
        assert after.incarnation != before.incarnation
        assert (after.host, after.port) != (before.host, before.port)
        assert ask_now(stack, handle, Probe()).node != node_id
        # Nothing lost: the host's hand, the scores and the round are what they were.
        table = (await host.connect(code, stack.b.url))["table"]
        assert table["hand"] == table_before["hand"] == rounds[0]["hand"]
        assert table["scores"] == table_before["scores"]
        assert (table["round"], table["phase"]) == (table_before["round"], "playing")
        for p in people:
            assert not p.problems
    finally:
        for p in people:
            with contextlib.suppress(Exception):
                await p.close()
        node.stop()
