"""Quotas and caps against a real gateway with small limits: sessions, table creations and
table lookups per client IP (token buckets in Redis; the client IP read from X-Forwarded-For
because the test's 127.0.0.1 is a trusted proxy there), open lobbies per player, WebSocket
sockets per IP and per gateway, and a REST call to a table actor that is too slow (503)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from cluster.settings import Settings
from tests.cluster.client import REST_TIMEOUT_S, Player, table_with
from tests.cluster.test_resilience import actor_pid
from tests.conftest import Gateway, Stack

WAIT_S = 10.0
_hosts = itertools.count(random.randrange(1, 200) * 256)


def new_ip() -> str:
    """A documentation address of its own for each use: buckets are per IP and live in Redis."""
    n = next(_hosts)
    return f"2001:db8::{n // 256:x}:{n % 256:x}"


# New sessions at the production default (issue 47: a class's burst, then one a minute),
# which the suite's stack lifts.
SESSIONS = Settings.model_fields["session_burst"].default
TIGHT = {
    "QUATRO_TRUSTED_PROXIES": "127.0.0.1/32",
    "QUATRO_SESSION_RATE": str(Settings.model_fields["session_rate"].default),
    "QUATRO_SESSION_BURST": str(SESSIONS),
}


@pytest.fixture(scope="module")
def tight(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    logs: Path = tmp_path_factory.mktemp("tight")
    gw = stack.gateway(
        logs,
        **TIGHT,
        QUATRO_TABLE_RATE="0.01",
        QUATRO_TABLE_BURST="4",
        QUATRO_LOOKUP_RATE="0.01",
        QUATRO_LOOKUP_BURST="5",
        QUATRO_MAX_OPEN_LOBBIES="1",
        QUATRO_MAX_CONNS_PER_IP="2",
        QUATRO_MAX_CONNS="3",
        QUATRO_POOL_SIZE="1",
    )
    try:
        gw.wait_ready()
        yield gw
    finally:
        gw.stop()


@pytest.fixture(scope="module")
def slow(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway that gives table actors one second to answer."""
    logs: Path = tmp_path_factory.mktemp("slow")
    gw = stack.gateway(logs, QUATRO_ACTOR_TIMEOUT="1", QUATRO_TABLE_WAIT="1", QUATRO_POOL_SIZE="0")
    try:
        gw.wait_ready()
        yield gw
    finally:
        gw.stop()


async def post(base: str, path: str, ip: str, token: str = "", **kw: Any) -> httpx.Response:
    headers = {"X-Forwarded-For": ip}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient(base_url=base, timeout=REST_TIMEOUT_S) as c:
        return await c.post(path, headers=headers, **kw)


def refused(r: httpx.Response, code: str) -> None:
    assert r.status_code == 429, r.text
    assert r.json()["error"]["code"] == code
    assert int(r.headers["retry-after"]) >= 1


async def test_sessions_are_rate_limited_per_client_ip(tight: Gateway) -> None:
    """The default: what a class of 30 needs at once (a session or a passkey's two calls
    each), then one a minute (issue 47: every session makes a profile)."""
    assert (SESSIONS, Settings.model_fields["session_rate"].default) == (60.0, 1 / 60)
    ip = new_ip()
    for i in range(int(SESSIONS)):
        r = await post(tight.url, "/api/sessions", ip, json={"name": f"S{i}"})
        assert r.status_code == 201, r.text
    limited = await post(tight.url, "/api/sessions", ip, json={"name": "S3"})
    refused(limited, "rate_limited")
    assert 30 <= int(limited.headers["retry-after"]) <= 60, "the next in a minute at most"
    # A client cannot escape by writing its own X-Forwarded-For entry: only the one our
    # trusted proxy appended (the rightmost) counts.
    r = await post(tight.url, "/api/sessions", f"{new_ip()}, {ip}", json={"name": "S4"})
    refused(r, "rate_limited")
    r = await post(tight.url, "/api/sessions", new_ip(), json={"name": "Other"})
    assert r.status_code == 201


async def test_every_replica_shares_the_buckets(
    stack: Stack, tight: Gateway, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Two gateways, one bucket: a client cannot get twice the quota by switching replica."""
    other = stack.gateway(tmp_path_factory.mktemp("tight2"), QUATRO_POOL_SIZE="0", **TIGHT)
    try:
        other.wait_ready()
        ip = new_ip()
        for i in range(int(SESSIONS)):
            gw = (tight, other)[i % 2]
            r = await post(gw.url, "/api/sessions", ip, json={"name": f"R{i}"})
            assert r.status_code == 201, r.text
        refused(await post(other.url, "/api/sessions", ip, json={"name": "R3"}), "rate_limited")
    finally:
        other.stop()


async def test_open_lobbies_per_player_and_table_creation_rate(tight: Gateway) -> None:
    ip = new_ip()
    r = await post(tight.url, "/api/sessions", ip, json={"name": "Host"})
    token = r.json()["token"]
    body = {"players": 4, "scenario": {"bot_policy": "idle"}}
    r = await post(tight.url, "/api/tables", ip, token, json=body)
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    refused(await post(tight.url, "/api/tables", ip, token, json=body), "too_many_lobbies")
    # Once that table has started it is no longer an open lobby.
    for seat in (1, 2, 3):
        r = await post(tight.url, f"/api/tables/{code}/bots", ip, token, json={"seat": seat})
        assert r.status_code == 200, r.text
    assert (await post(tight.url, f"/api/tables/{code}/start", ip, token)).status_code == 200
    r = await post(tight.url, "/api/tables", ip, token, json=body)
    assert r.status_code == 201, r.text
    # The per-IP creation quota (4) is spent: 429 rate_limited, whoever asks from that IP.
    refused(await post(tight.url, "/api/tables", ip, token, json=body), "too_many_lobbies")
    refused(await post(tight.url, "/api/tables", ip, token, json=body), "rate_limited")


async def test_table_lookups_are_rate_limited_so_codes_cannot_be_scanned(tight: Gateway) -> None:
    ip = new_ip()
    async with httpx.AsyncClient(base_url=tight.url) as c:
        for _ in range(5):
            r = await c.get("/api/tables/ZZZZZZ", headers={"X-Forwarded-For": ip})
            assert r.status_code == 404
        refused(await c.get("/api/tables/ZZZZZZ", headers={"X-Forwarded-For": ip}), "rate_limited")


async def closed_with(ws: ClientConnection) -> tuple[int | None, str | None]:
    async with asyncio.timeout(WAIT_S):
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
    return ws.close_code, ws.close_reason


async def test_socket_caps_per_ip_and_per_gateway_close_1013(tight: Gateway) -> None:
    x, y, z = new_ip(), new_ip(), new_ip()
    sockets: list[ClientConnection] = []

    async def open_from(ip: str) -> ClientConnection:
        ws = await websockets.connect(tight.ws, additional_headers={"X-Forwarded-For": ip})
        sockets.append(ws)
        return ws

    try:
        for ip in (x, x, y):
            ws = await open_from(ip)
            await ws.send(json.dumps({"type": "ping", "id": "p"}))
            assert json.loads(await ws.recv())["code"] == "wrong_phase"  # open, awaiting hello
        assert await closed_with(await open_from(x)) == (
            1013,
            "too many connections from your address",
        )
        assert await closed_with(await open_from(z)) == (1013, "this gateway is full, retry later")
        await sockets[0].close()
        await sockets[0].wait_closed()

        async def admitted() -> None:
            while True:
                ws = await open_from(z)
                await ws.send(json.dumps({"type": "ping", "id": "p"}))
                try:
                    if json.loads(await ws.recv())["code"] == "wrong_phase":
                        return
                except websockets.ConnectionClosed:
                    await asyncio.sleep(0.05)  # the freed slot is released as its socket ends

        async with asyncio.timeout(WAIT_S):
            await admitted()
    finally:
        for ws in sockets:
            await ws.close()


async def test_a_hung_table_actor_is_503_unavailable_not_a_hang(
    stack: Stack, slow: Gateway
) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1)
    await host.close()
    guest = await Player(slow.url, "Guest").register()
    pid = actor_pid(stack, code)
    os.kill(pid, signal.SIGSTOP)  # the table's process hangs: no answer, no crash
    try:
        for method, path in (
            ("GET", f"/api/tables/{code}"),
            ("POST", f"/api/tables/{code}/seats/2"),
        ):
            r = await guest.rest(method, path)
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "unavailable"
            assert int(r.headers["retry-after"]) >= 1
    finally:
        os.kill(pid, signal.SIGCONT)
    assert (await guest.rest("GET", f"/api/tables/{code}")).status_code == 200


async def test_a_flood_of_play_now_from_one_address_opens_no_more_tables_than_its_quota(
    tight: Gateway,
) -> None:
    """Quick play opens a table only for the caller who gets seat 0 of a new one, and that takes
    a token of the per-IP `table` quota (4 here): players from one address fill the tables they
    opened, then the next one that would open a table is refused, and so is every later one."""
    ip = new_ip()
    seats: list[tuple[str, int]] = []
    refusals: list[httpx.Response] = []
    for i in range(24):  # 4 tables of 4 seats, a few left in another lobby, and the refusals
        r = await post(tight.url, "/api/sessions", new_ip(), json={"name": f"F{i}"})
        assert r.status_code == 201, r.text
        r = await post(tight.url, "/api/quickplay", ip, r.json()["token"], json={"players": 4})
        if r.status_code == 200:
            assert not refusals, "seated after a refusal: a table was opened past the quota"
            seats.append((r.json()["code"], r.json()["seat"]))
        else:
            refused(r, "rate_limited")
            refusals.append(r)
            if len(refusals) == 3:
                break
    assert len(refusals) == 3
    assert len(set(seats)) == len(seats)
    opened = {code for code, seat in seats if seat == 0}
    assert len(opened) == 4, seats
