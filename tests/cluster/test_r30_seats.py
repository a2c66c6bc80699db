"""R30 when seats change hands, over the wire through both gateways: a connection keeps nothing
of a seat its player no longer holds. The seat may be freed by its player, freed by the host,
given to a bot or taken by someone else; the connection that held it is closed with 4410 at
once, and no private event of that seat or its team reaches it afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import json

import websockets

from engine import EMOJIS
from tests.cluster.client import WAIT_S, Frame, Player
from tests.conftest import Stack

SEAT_CHANGED = 4410


def socket_of(p: Player) -> Player:
    """Another connection of the same player (same session), read separately."""
    twin = Player(p.base, p.name)
    twin.token, twin.player_id = p.token, p.player_id
    return twin


def private_frames(p: Player) -> list[Frame]:
    """Frames that carry a hand or a team's sign."""
    out = []
    for f in p.order:
        kind = f.get("type")
        private = kind == "welcome" and (f["table"]["hand"] or f["table"]["sign"])
        if kind in ("round", "reshuffled", "sign") or private:
            out.append(f)
    return out


async def hello_close_code(p: Player, code: str) -> int | None:
    """Say hello on a fresh socket and return the close code the server ends it with."""
    url = p.base.replace("http", "ws") + "/ws"
    async with asyncio.timeout(WAIT_S), websockets.connect(url) as ws:
        await ws.send(json.dumps({"type": "hello", "token": p.token, "table": code}))
        with contextlib.suppress(websockets.ConnectionClosed):
            async for _ in ws:
                pass
        return ws.close_code


async def new_table(base: str, players: int) -> tuple[str, Player]:
    host = await Player(base, "Host").register()
    scenario = {"seed": 3, "time_scale": 0.05, "bot_policy": "idle"}
    r = await host.rest("POST", "/api/tables", json={"players": players, "scenario": scenario})
    assert r.status_code == 201, r.text
    return r.json()["code"], host


async def play_first_round(code: str, host: Player, seated: list[Player]) -> None:
    """Start, sign and say ready; wait until every seated connection holds its hand."""
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200, code
    for i, p in enumerate(seated):
        await p.wait_event(lambda e: e["type"] == "signing")
        await p.request("sign", emoji=EMOJIS[i])
        await p.ok("ready")
    for p in seated:
        await p.wait_event(lambda e: e["type"] == "round")


async def test_r30_a_player_who_moves_seat_gets_nothing_of_the_seat_left(stack: Stack) -> None:
    code, host = await new_table(stack.a.url, 4)
    x = await Player(stack.a.url, "Xena").register()
    assert (await x.rest("POST", f"/api/tables/{code}/seats/3")).status_code == 200
    old = socket_of(x)
    welcome = await old.connect(code, stack.b.url)  # the other gateway than the REST calls
    assert welcome["you"]["seat"] == 3
    assert (await x.rest("DELETE", f"/api/tables/{code}/seats/3")).status_code == 200
    assert await old.wait_closed() == SEAT_CHANGED
    assert (await x.rest("POST", f"/api/tables/{code}/seats/2")).status_code == 200
    for seat in (1, 3):
        r = await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
        assert r.status_code == 200
    await host.connect(code)
    moved = await x.connect(code, stack.b.url)  # the player's new hello: their new seat
    assert moved["you"]["seat"] == 2
    await play_first_round(code, host, [host, x])
    assert private_frames(old) == []
    # The new connection got its own seat's hand, and its own team's sign only.
    mine = x.latest("round")
    assert mine is not None
    assert len(mine["hand"]) == 4
    signs = [f["emoji"] for f in x.events if f["type"] == "sign"]
    assert signs
    assert set(signs) == {EMOJIS[0]}  # the host's, seat 0: the same team as seat 2


async def test_r30_a_player_freed_by_the_host_is_closed_and_sees_no_bot_hand(
    stack: Stack,
) -> None:
    code, host = await new_table(stack.a.url, 4)
    y = await Player(stack.b.url, "Yann").register()
    assert (await y.rest("POST", f"/api/tables/{code}/seats/2")).status_code == 200
    await y.connect(code)
    await host.connect(code, stack.b.url)
    assert (await host.rest("DELETE", f"/api/tables/{code}/seats/2")).status_code == 200
    assert await y.wait_closed() == SEAT_CHANGED
    for seat in (1, 2, 3):
        r = await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
        assert r.status_code == 200
    await play_first_round(code, host, [host])
    assert private_frames(y) == []
    # Saying hello again: the player holds no seat here any more.
    assert await hello_close_code(y, code) == 4403


async def test_r30_a_seat_given_to_another_player_closes_the_old_connection(stack: Stack) -> None:
    code, _ = await new_table(stack.b.url, 6)
    a = await Player(stack.a.url, "Ana").register()
    b = await Player(stack.a.url, "Bo").register()
    assert (await a.rest("POST", f"/api/tables/{code}/seats/4")).status_code == 200
    await a.connect(code, stack.b.url)
    assert (await a.rest("DELETE", f"/api/tables/{code}/seats/4")).status_code == 200
    assert await a.wait_closed() == SEAT_CHANGED
    assert (await b.rest("POST", f"/api/tables/{code}/seats/4")).status_code == 200
    await b.connect(code)
    assert b.seat == 4
