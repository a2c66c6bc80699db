"""The gateway's edge against a real gateway: body limits (413 before the rest is read), the
WebSocket's hostile frames (deep JSON, floods before and after hello), the Origin allow-list,
trusted hosts, security headers, the name rules, and /metrics and /docs on an internal port."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from cluster.procs import free_port
from gateway.names import check_name
from tests.cluster.client import table_with
from tests.conftest import Gateway, Stack

WAIT_S = 15.0
DEEP = "[" * 30_000 + "]" * 30_000  # under the 64 KiB frame limit, past Python's recursion


async def http_head(port: int, head: bytes, body: bytes) -> bytes:
    """Send a request head and part of its body on a raw socket; the response's head, which a
    server must send without waiting for the rest of the body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head + body)
        await writer.drain()
        async with asyncio.timeout(WAIT_S):
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = await reader.read(4096)
                if not chunk:
                    break
                data += chunk
        return data
    finally:
        writer.close()


async def test_request_bodies_over_16_kib_get_413_before_the_rest_is_read(stack: Stack) -> None:
    # Content-Length says 80 MB: refused before any of it is read (only 1 KiB is ever sent).
    head = (
        b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 80000000\r\n\r\n"
    )
    answer = await http_head(stack.a.port, head, b'{"name": "' + b"x" * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # Chunked, no length: refused once the bytes received pass the limit; the body never ends.
    head = (
        b"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"x" * 4096
    answer = await http_head(stack.a.port, head, (b"1000\r\n" + chunk + b"\r\n") * 8)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        r = await c.post("/api/sessions", content=b'{"name": "' + b"x" * 20_000 + b'"}')
        assert r.status_code == 413
        assert r.json()["error"]["code"] == "too_large"
        assert (await c.post("/api/sessions", json={"name": "Small"})).status_code == 201


async def raw_socket(url: str) -> ClientConnection:
    return await websockets.connect(url, max_size=None)


async def next_answer(ws: ClientConnection) -> dict[str, object]:
    async with asyncio.timeout(WAIT_S):
        frame: dict[str, object] = json.loads(await ws.recv())
    return frame


async def test_deep_json_is_a_bad_message_before_and_after_hello(stack: Stack) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1)
    await host.close()
    async with await raw_socket(stack.b.ws) as ws:
        await ws.send(DEEP)
        assert (await next_answer(ws))["code"] == "bad_message"
        nested = json.loads("[" * 200 + "]" * 200)
        await ws.send(json.dumps({"type": "ping", "id": "p", "junk": nested}))
        assert (await next_answer(ws))["code"] == "wrong_phase"  # still alive, still no hello
        await ws.send(json.dumps({"type": "hello", "id": "hi", "token": host.token, "table": code}))
        assert (await next_answer(ws))["type"] == "welcome"
    await host.connect(code)
    await host.send_raw(DEEP)
    await host.send_raw('{"type": "ping", "id": "deep", "x": ' + "[" * 20_000 + "]" * 20_000 + "}")
    await host.until(lambda: len(host.unsolicited) >= 2)
    assert [f["code"] for f in host.unsolicited] == ["bad_message", "bad_message"]
    assert (await host.request("ping"))["type"] == "pong"
    assert host.close_code is None
    await host.close()


async def drain(ws: ClientConnection) -> int:
    """Read until the server closes (within a deadline); how many frames came."""
    answered = 0
    async with asyncio.timeout(WAIT_S):
        try:
            while True:
                await ws.recv()
                answered += 1
        except websockets.ConnectionClosed:
            return answered


async def test_a_flood_is_closed_1008_not_answered_frame_by_frame(stack: Stack) -> None:
    # Before hello: malformed frames count too.
    async with await raw_socket(stack.a.ws) as ws:
        for _ in range(1000):
            await ws.send("not json")
        answered = await drain(ws)
        assert ws.close_code == 1008
        assert ws.close_reason == "flooding"
        assert answered < 300
    # After hello.
    _code, (host,) = await table_with(stack.b.url, 4, 1)
    for _ in range(1000):
        await host.send_raw("{}")
    assert await host.wait_closed() == 1008
    assert len(host.unsolicited) < 300


async def test_ws_origin_allow_list(stack: Stack) -> None:
    for bad in ("https://evil.example", "null", "http://127.0.0.1.evil.example"):
        with pytest.raises(websockets.InvalidStatus) as refused:
            await websockets.connect(stack.a.ws, origin=bad)  # type: ignore[arg-type]
        assert refused.value.response.status_code == 403
    own = f"http://127.0.0.1:{stack.a.port}"
    origins: list[str | None] = [own, "http://localhost:5173", None]
    for origin in origins:
        async with websockets.connect(stack.a.ws, origin=origin) as ws:  # type: ignore[arg-type]
            await ws.send(json.dumps({"type": "ping", "id": "o"}))
            assert (await next_answer(ws))["code"] == "wrong_phase"  # accepted: no hello yet


async def test_trusted_hosts_and_security_headers(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        r = await c.get("/", headers={"Host": "evil.example"})
        assert r.status_code == 400
        assert (await c.get("/healthz", headers={"Host": "10.1.2.3:8000"})).status_code == 200
        page = await c.get("/")
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        # The import map as served: it names each module's version (gateway/client_page.py).
        importmap = re.search(rb'<script type="importmap">(.*?)</script>', page.content, re.DOTALL)
        assert importmap is not None
        digest = base64.b64encode(hashlib.sha256(importmap.group(1)).digest()).decode()
        assert f"'sha256-{digest}'" in csp
        for r in (page, await c.get("/api/emojis"), await c.get("/static/css/base.css")):
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["referrer-policy"] == "strict-origin-when-cross-origin"
            assert r.headers["x-frame-options"] == "DENY"


async def test_names_refuse_fillers_marks_bidi_and_bot_lookalikes(stack: Stack) -> None:
    refused = [
        "\u3164",
        "Ana\u3164",
        "\u2800\u2800",
        "\u115f\u1160",
        "\uffa0",
        "a\u180eb",
        "a\u2063b",
        "x\u0301\u0301\u0301",
        "\u202eAna",
        "Ana\u0007",
        "Bot",
        "bot 3",
        "BOT3",
        "B0t 7",
        "Bоt 2",  # Cyrillic o
        "Ｂｏｔ ５",  # fullwidth
        "bot_4",
        "a\u200db",
    ]
    allowed = ["Ana 👩‍💻", "❤️ Lu", "Zoë", "Botanist", "Robot", "José", "Bo", *JOINED_EMOJI]
    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        for name in refused:
            r = await c.post("/api/sessions", json={"name": name})
            assert r.status_code == 422, name
            assert r.json()["error"]["code"] == "bad_message"
        for name in allowed:
            r = await c.post("/api/sessions", json={"name": name})
            assert r.status_code == 201, name
            assert r.json()["name"] == name


# Joined emoji as phones type them: ZWJ sequences with VS16 and skin tones, an arrow joined
# (head shaking), a subdivision flag spelt with tag characters, a keycap.
JOINED_EMOJI = [
    "Ana 👩🏽\u200d💻",
    "👨\u200d👩\u200d👧\u200d👦",
    "🏳\ufe0f\u200d🌈 Lu",
    "❤\ufe0f\u200d🔥",
    "🙂\u200d↔\ufe0f Zoë",
    "🧑🏿\u200d🤝\u200d🧑🏻",
    "🏴\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f Rhys",
    "#\ufe0f\u20e3 Nico",
    # 24 as a reader counts them: 22 letters and two flags of two regional indicators each.
    "Famille Jean-Baptiste \U0001f1ed\U0001f1f9\U0001f1eb\U0001f1f7",
    # 24 characters as a reader counts them (22 + two families), 34 code points.
    "Famille Jean-Baptiste 👨\u200d👩\u200d👧\u200d👦👨\u200d👩\u200d👧",
]

# What still reads as nothing, or turns the text around: fillers, a joiner that joins no emoji,
# stray tags, bidi controls.
STILL_REFUSED = [
    "\u3164",
    "Ana\u115f",
    "\u2800",
    "a\u200db",
    "👩\u200d",
    "\u200d👩",
    "Ana\u200b",
    "Ana\U000e0067\U000e007f",
    "🏴\U000e0067\U000e0062",
    "Ana\u202e",
    "\u2067Ana\u2069",
    "\u200f",
    "A" * 25,
    "\U0001f1ed\U0001f1f9" * 25,
    "👨\u200d👩\u200d👧\u200d👦" * 10,
]


@pytest.mark.parametrize("name", JOINED_EMOJI)
def test_joined_emoji_are_names(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize("name", STILL_REFUSED)
def test_fillers_stray_joiners_tags_and_bidi_stay_refused(name: str) -> None:
    with pytest.raises(ValueError, match=r"name|joiner|tag|characters"):
        check_name(name)


@pytest.fixture(scope="module")
def private(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway with its metrics off the public port and on an internal one, with the docs."""
    logs: Path = tmp_path_factory.mktemp("private")
    internal = free_port()
    gw = stack.gateway(
        logs,
        QUATRO_PUBLIC_METRICS="0",
        QUATRO_DOCS="1",
        QUATRO_INTERNAL_PORT=str(internal),
        QUATRO_POOL_SIZE="0",
    )
    gw.env["INTERNAL_URL"] = f"http://127.0.0.1:{internal}"
    try:
        gw.wait_ready()
        yield gw
    finally:
        gw.stop()


async def test_metrics_and_docs_on_the_internal_port_only(private: Gateway) -> None:
    async with httpx.AsyncClient(base_url=private.url) as c:
        for path in ("/metrics", "/docs", "/openapi.json"):
            assert (await c.get(path)).status_code == 404, path
        assert (await c.get("/api/emojis")).status_code == 200
    async with httpx.AsyncClient(base_url=private.env["INTERNAL_URL"]) as c:
        r = await c.get("/metrics")
        assert r.status_code == 200
        assert "quatro_" in r.text
        assert (await c.get("/docs")).status_code == 200
        assert "/api/sessions" in (await c.get("/openapi.json")).json()["paths"]


async def test_metrics_and_docs_stay_public_by_default(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        for path in ("/metrics", "/docs", "/openapi.json"):
            assert (await c.get(path)).status_code == 200, path


async def test_a_player_still_plays_after_refusals(stack: Stack) -> None:
    code, people = await table_with(stack.a.url, 4, 2)
    assert (await people[0].rest("POST", f"/api/tables/{code}/start")).is_success
    for p in people:
        await p.wait_event(lambda e: e["type"] == "signing")
        await p.send_raw(DEEP)
        await p.ok("ready")
    for p in people:
        assert not p.problems
        await p.close()
