"""The data plane between gateways and table actors: nothing is served before a hello with the
cluster's secret; a peer that stops answering without closing is caught by heartbeats; a table
restarted on another node is reached again at its new address, with nothing lost."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from actors.codec import (
    decode,
    encode,
)
from actors.link_messages import Answer, Call, Hello, Message, Refused, Welcome
from actors.protocol import Act, Address, Endpoint, Joined, Probe, Views, ViewSet
from tests.cluster.client import Player, table_with
from tests.cluster.nodes import ask_now, playing_on_a_new_node, table_actor
from tests.cluster.test_resilience import open_round
from tests.conftest import Stack


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


async def swap_until_acked(player: Player, dealt: dict[str, Any], limit: float) -> None:
    """`player` swaps their first card for the centre's first until the table acks it (within
    `limit` s): while its actor is away the answer is `unavailable` (or `cooldown`)."""
    async with asyncio.timeout(limit):
        while True:
            answer = await player.request(
                "swap", card=dealt["hand"][0]["id"], slot=0, expect=dealt["center"][0]["id"]
            )
            if answer["type"] == "ack":
                return
            assert answer["code"] in ("unavailable", "cooldown"), answer
            await asyncio.sleep(0.2)


@pytest.mark.destructive
async def test_a_table_restarted_on_another_node_is_reached_at_its_new_address(
    stack: Stack,
) -> None:
    on = await playing_on_a_new_node(stack)
    code, people, handle, rounds, table_before = on.code, on.people, on.handle, on.rounds, on.before
    host, other = people
    try:
        before = ask_now(stack, handle, Endpoint())
        on.node.stop()  # the node and every process on it: the actor dies with it
        # Ray restarts it on the head, from its snapshot; the gateways find it there.
        mine = rounds[1]
        await swap_until_acked(other, mine, 90)
        seen = await host.wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 1)
        assert seen["placed"]["id"] == mine["hand"][0]["id"]
        after = ask_now(stack, handle, Endpoint())
        assert after is not None
        assert before is not None
        assert after.incarnation != before.incarnation
        assert (after.host, after.port) != (before.host, before.port)
        assert ask_now(stack, handle, Probe()).node != on.node_id
        # Nothing lost: the host's hand, the scores and the round are what they were.
        table = (await host.connect(code, stack.b.url))["table"]
        assert table["hand"] == table_before["hand"] == rounds[0]["hand"]
        assert table["scores"] == table_before["scores"]
        assert (table["round"], table["phase"]) == (table_before["round"], "playing")
        for p in people:
            assert not p.problems
    finally:
        await on.close()
        on.node.stop()
