"""A third gateway with short liveness and idle settings: a silent connection is closed and
its seat marked disconnected (R24), an abandoned lobby stops and its keys expire, SIGTERM
closes sockets with 1001 and the table lives on."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import socket
from collections.abc import Iterator

import pytest
import redis

from actors import keys
from tests.cluster.client import Player, table_with
from tests.conftest import Gateway, Stack


@pytest.fixture(scope="module")
def gateway_c(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = stack.gateway(
        tmp_path_factory.mktemp("gateway-c"),
        QUATRO_PING_INTERVAL="0.5",
        QUATRO_SILENCE="2",
        QUATRO_LOBBY_IDLE="3",
        QUATRO_OVER_IDLE="1",
        QUATRO_POOL_SIZE="0",
    )
    try:
        gw.wait_ready()
        yield gw
    finally:
        gw.stop()


class SilentClient:
    """A WebSocket client by hand that says hello, reads the welcome, then never reads again
    (so never answers a ping)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        assert b" 101 " in head.split(b"\r\n")[0]

    def send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        if len(data) < 126:
            header += bytes([0x80 | len(data)])
        else:
            header += bytes([0x80 | 126]) + len(data).to_bytes(2, "big")
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def read_exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            assert chunk, "the gateway closed the connection"
            data += chunk
        return data

    def read_frame(self) -> bytes:
        """The next text frame's payload. The gateway's pings read on the way are passed over,
        unanswered: on a loaded machine one can come before the welcome (its 4 random bytes
        were once read as the welcome)."""
        while True:
            first = self.read_exactly(2)
            size = first[1] & 0x7F
            if size == 126:
                size = int.from_bytes(self.read_exactly(2), "big")
            elif size == 127:
                size = int.from_bytes(self.read_exactly(8), "big")
            data = self.read_exactly(size)
            if first[0] & 0x0F == 0x1:
                return data

    def close(self) -> None:
        self.sock.close()


async def test_r24_a_silent_connection_is_closed_and_the_seat_disconnected(
    stack: Stack, gateway_c: Gateway
) -> None:
    code, (host, other) = await table_with(stack.a.url, 4, 2)
    await host.close()
    left = await other.wait_event(lambda e: e["type"] == "seat" and not e["connected"])
    silent = SilentClient(gateway_c.port)
    try:
        silent.send(json.dumps({"type": "hello", "token": host.token, "table": code}))
        assert json.loads(silent.read_frame())["type"] == "welcome"
        back = await other.wait_event(lambda e: e["type"] == "seat", after=left["seq"])
        assert back["seat"] == 0
        assert back["connected"] is True
        # No pong for 2 s (the test gateway's silence limit): the seat is disconnected again.
        gone = await other.wait_event(lambda e: e["type"] == "seat", after=back["seq"], limit=10)
        assert gone["seat"] == 0
        assert gone["connected"] is False
    finally:
        silent.close()
    await other.close()


async def test_an_abandoned_lobby_stops_and_its_keys_expire(
    stack: Stack, gateway_c: Gateway
) -> None:
    host = await Player(gateway_c.url, "Leaver").register()
    r = await host.rest("POST", "/api/tables", json={"players": 4})
    assert r.status_code == 201
    code = r.json()["code"]
    r = await host.rest("GET", f"/api/tables/{code}")
    assert r.status_code == 200
    store = redis.Redis.from_url(stack.redis.url)
    async with asyncio.timeout(20):
        while True:
            if (await host.rest("GET", f"/api/tables/{code}")).status_code == 404:
                break
            await asyncio.sleep(0.2)
    assert store.get(keys.table(code)) is None
    assert 0 < store.ttl(keys.snapshot(code)) <= 300


async def gone_within(player: Player, code: str, limit: float) -> None:
    async with asyncio.timeout(limit):
        while True:
            if (await player.rest("GET", f"/api/tables/{code}")).status_code == 404:
                return
            await asyncio.sleep(0.2)


async def test_a_match_nobody_is_connected_to_outlives_an_idle_lobby(
    stack: Stack, gateway_c: Gateway
) -> None:
    # A lobby stops after QUATRO_LOBBY_IDLE (3 s here; 10 minutes by default); a started match
    # whose players all dropped waits QUATRO_ABANDONED_IDLE (30 minutes by default).
    code, (host,) = await table_with(gateway_c.url, 4, 1, bot_policy="idle")
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    await host.close()
    other = await Player(gateway_c.url, "Waiter").register()
    r = await other.rest("POST", "/api/tables", json={"players": 4})
    assert r.status_code == 201
    await gone_within(other, r.json()["code"], 20)  # the lobby opened after the host left
    r = await host.rest("GET", f"/api/tables/{code}")
    assert r.status_code == 200, r.text
    assert r.json()["phase"] == "playing"  # R6: with nobody connected the round opened


async def test_sigterm_closes_sockets_going_away_and_the_table_lives_on(
    stack: Stack, gateway_c: Gateway
) -> None:
    code, (host, other) = await table_with(stack.a.url, 4, 2)
    await host.connect(code, gateway_c.url)
    assert gateway_c.proc is not None
    gateway_c.proc.send_signal(signal.SIGTERM)
    assert await host.wait_closed() == 1001
    welcome = await host.connect(code, stack.b.url)
    assert welcome["you"]["seat"] == 0
    await asyncio.to_thread(gateway_c.proc.wait, 15)
    for p in (host, other):
        await p.close()
