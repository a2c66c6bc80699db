"""Watching a table without a seat (issue 13, part 1): the public view and the events meant for
everyone or for watchers, never a hand or a sign before the reveal (R30), audited over every
frame a spectator receives in whole bot matches at 4, 6 and 8 seats; the count of watchers; the
host closing the table to them; and a crowd of them costing the table one call, not one each."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
import pytest
import websockets

from tests.cluster.client import Player, table_with
from tests.cluster.test_match import play_match
from tests.conftest import Stack

# The events that name a card: outside a reveal, a card is public only where everyone saw it.
PUBLIC_CARDS = {"swapped": ("placed", "taken")}


def audit(frames: list[dict[str, Any]], players: int) -> dict[str, int]:
    """Every frame a watcher got: no hand, no sign; cards only the centre's, the swaps' and the
    reveals'. Returns counts by type."""
    counts: dict[str, int] = {}
    for f in frames:
        kind = f["type"]
        counts[kind] = counts.get(kind, 0) + 1
        assert kind != "sign", f  # a team's sign travels to that team only
        if kind == "welcome":
            table = f["table"]
            assert table["hand"] == []
            assert table["sign"] is None
            assert table["choice"] is None
            assert f["you"]["seat"] is None
            assert f["you"]["watching"] is True
        if kind in ("round", "reshuffled"):
            assert f["hand"] == [], f
            assert len(f["center"]) == 4
        if kind == "reveal":
            assert len(f["hands"]) == players  # shown to all at the reveal (R23)
    return counts


@pytest.mark.parametrize("players", [4, 6, 8])
async def test_r30_a_spectator_sees_a_whole_match_and_never_a_hand_or_a_sign(
    stack: Stack, players: int
) -> None:
    code, (host, partner) = await table_with(
        stack.a.url, players, 2, time_scale=0.02, bot_policy="smart"
    )
    watcher = await Player(stack.b.url, "Watcher").register()  # on the other gateway
    try:
        welcome = await watcher.connect(code, watch=True)
        assert welcome["table"]["phase"] == "lobby"
        await watching(host, code, 1)
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success

        async def swap_once(round_event: dict[str, Any]) -> None:
            # The host calls at once, often before any bot swaps (always, on a fast machine):
            # one swap of the host's own each round, so the watcher has swaps to be audited on.
            hand, center = round_event["hand"], round_event["center"]
            answer = await host.request("swap", card=hand[0]["id"], slot=0, expect=center[0]["id"])
            refused = answer.get("code") in ("stale", "wrong_phase", "cooldown")
            assert answer["type"] == "ack" or refused, answer

        over = await play_match(host, partner, before_call=swap_once)
        seen = await watcher.wait_event(lambda e: e["type"] == "over")
        assert seen["scores"] == over["scores"]
        counts = audit(watcher.events, players)
        # The watcher saw the match as it went: each deal's centre, the swaps, every reveal.
        reveals = [e["scores"] for e in host.events if e["type"] == "reveal"]
        assert [e["scores"] for e in watcher.events if e["type"] == "reveal"] == reveals
        assert counts.get("round", 0) >= len(reveals)
        assert counts.get("swapped", 0) > 0
        assert counts["swapped"] == sum(1 for e in host.events if e["type"] == "swapped")
        # Watching plays for nobody.
        answer = await watcher.request("ready")
        assert answer["type"] == "error"
        assert answer["code"] == "no_seat"
        assert not watcher.problems
    finally:
        for p in (host, partner, watcher):
            await p.close()


async def test_a_spectator_watches_while_the_seated_never_get_the_watchers_copy(
    stack: Stack,
) -> None:
    code, (host, partner) = await table_with(stack.a.url, 4, 2, time_scale=0.05)
    watcher = await Player(stack.a.url, "Watcher").register()
    try:
        await watcher.connect(code, watch=True)
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        for p in (host, partner):
            await p.wait_event(lambda e: e["type"] == "signing")
            assert (await p.request("ready"))["type"] == "ack"
        dealt = await watcher.wait_event(lambda e: e["type"] == "round")
        assert dealt["hand"] == []
        mine = await host.wait_event(lambda e: e["type"] == "round")
        assert len(mine["hand"]) == 4
        assert mine["center"] == dealt["center"]
        # Exactly one `round` reached each seated player: their own. The watchers' copy comes
        # after the seats' in the table's order, and a pong after every event queued before it.
        for p in (host, partner):
            await p.ok("ping")
        assert [e for e in host.events if e["type"] == "round"] == [mine]
        assert all(len(e["hand"]) == 4 for e in partner.events if e["type"] == "round")
    finally:
        for p in (host, partner, watcher):
            await p.close()


async def watching(player: Player, code: str, count: int, limit: float = 15.0) -> None:
    """Wait until the table's summary counts `count` watchers."""
    async with asyncio.timeout(limit):
        # Polled: the count lives in another process.
        while (await player.rest("GET", f"/api/tables/{code}")).json()["watching"] != count:  # noqa: ASYNC110
            await asyncio.sleep(0.1)


async def refused_watch(player: Player, code: str) -> tuple[str, int | None]:
    """Ask to watch and expect a refusal: its error code and the close code."""
    url = player.base.replace("http", "ws") + "/ws"
    async with websockets.connect(url) as ws:
        hello = {"type": "hello", "id": "w", "token": player.token, "table": code, "watch": True}
        await ws.send(json.dumps(hello))
        async with asyncio.timeout(15):
            answer = json.loads(await ws.recv())
            with contextlib.suppress(websockets.ConnectionClosed):
                await ws.recv()
        return answer["code"], ws.close_code


async def counter(url: str, name: str) -> float:
    async with httpx.AsyncClient(timeout=10) as c:
        text = (await c.get(f"{url}/metrics")).text
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name))


async def test_a_crowd_of_watchers_costs_the_table_a_view_and_a_count_and_everyone_sees_it(
    stack: Stack,
) -> None:
    code, (host, partner) = await table_with(stack.a.url, 4, 2, time_scale=0.05)
    fan = await Player(stack.a.url, "Fan").register()
    crowd_a = [Player(stack.a.url, "Fan") for _ in range(30)]
    crowd_b = [Player(stack.b.url, "Fan") for _ in range(10)]
    for p in (*crowd_a, *crowd_b):
        p.token, p.player_id = fan.token, fan.player_id  # one person, many tabs
    try:
        before = await counter(stack.a.url, "quatro_watch_views_total")
        welcomes = await asyncio.gather(*(p.connect(code, watch=True) for p in crowd_a))
        fetched = await counter(stack.a.url, "quatro_watch_views_total") - before
        # Thirty arrivals at once on one gateway share the public views it asks for.
        assert fetched <= 3, fetched
        assert all(w["you"]["watching"] and w["table"]["hand"] == [] for w in welcomes)
        await asyncio.gather(*(p.connect(code, watch=True) for p in crowd_b))
        await watching(host, code, 40)
        # Players and watchers are told the count, once it settles, on both gateways.
        told = await host.wait_event(lambda e: e["type"] == "watching" and e["count"] == 40)
        assert set(told) == {"type", "count", "seq", "at"}
        await crowd_b[0].wait_event(lambda e: e["type"] == "watching" and e["count"] == 40)
        # A watcher arriving later starts from the count, and from the same public moment.
        late = Player(stack.b.url, "Late")
        late.token, late.player_id = fan.token, fan.player_id
        # (the view its gateway shares may be older: the count told since follows it).
        counted = (await late.connect(code, watch=True))["table"]["watching"]
        await late.until(lambda: [late.latest("watching") or {"count": counted}][0]["count"] == 40)
        crowd_b.append(late)
        await asyncio.gather(*(p.close() for p in crowd_a))
        await watching(host, code, 11)
        # Every watcher's stream was whole and in order.
        assert not [p.problems for p in (*crowd_a, *crowd_b) if p.problems]
    finally:
        for p in (host, partner, *crowd_a, *crowd_b):
            await p.close()


async def test_the_host_closes_the_table_to_watchers_mid_match_and_opens_it_again(
    stack: Stack,
) -> None:
    code, (host, partner) = await table_with(stack.a.url, 4, 2, time_scale=0.05)
    on_a = await Player(stack.a.url, "Fan A").register()
    on_b = await Player(stack.b.url, "Fan B").register()
    try:
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        await on_a.connect(code, watch=True)
        await on_b.connect(code, watch=True)
        await watching(host, code, 2)
        # Only the host decides.
        refused = await partner.rest(
            "PATCH", f"/api/tables/{code}/settings", json={"watchers": False}
        )
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "not_host"
        closed = await host.rest("PATCH", f"/api/tables/{code}/settings", json={"watchers": False})
        assert closed.is_success, closed.text
        # Every watcher, on either gateway, is closed with its own code; the seated stay.
        assert await on_a.wait_closed() == 4412
        assert await on_b.wait_closed() == 4412
        said = await partner.wait_event(lambda e: e["type"] == "settings")
        assert said["watchers"] is False
        await watching(host, code, 0)
        # Nobody gets back in, on either gateway, until the host opens the table again.
        for p in (on_a, on_b):
            assert await refused_watch(p, code) == ("watching_off", 4412)
        assert (await host.ok("ping"))["type"] == "pong"
        opened = await host.rest("PATCH", f"/api/tables/{code}/settings", json={"watchers": True})
        assert opened.is_success
        assert (await on_b.connect(code, watch=True))["table"]["settings"]["watchers"] is True
        await watching(host, code, 1)
    finally:
        for p in (host, partner, on_a, on_b):
            await p.close()
