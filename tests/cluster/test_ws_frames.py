"""The WebSocket's edges: hello refusals and their close codes, malformed frames answered
without losing the connection, the 64 KiB limit, one answer per frame."""

from __future__ import annotations

import json
import time

import pytest
import websockets

from tests.cluster.client import Player, table_with
from tests.cluster.test_resilience import open_round
from tests.conftest import Stack


async def hello_refused(url: str, hello: object) -> tuple[dict[str, object], int | None]:
    async with websockets.connect(url) as ws:
        await ws.send(json.dumps(hello))
        frame = json.loads(await ws.recv())
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
        return frame, ws.close_code


async def test_hello_refusals_close_with_their_codes(stack: Stack) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1)
    stranger = await Player(stack.a.url, "Stranger").register()
    cases = [
        ({"type": "hello", "id": "1", "token": "forged", "table": code}, "bad_token", 4401),
        (
            {"type": "hello", "id": "2", "token": host.token, "table": "NOPE42"},
            "unknown_table",
            4404,
        ),
        ({"type": "hello", "id": "3", "token": stranger.token, "table": code}, "no_seat", 4403),
    ]
    for hello, error, close in cases:
        frame, got = await hello_refused(stack.b.ws, hello)
        assert frame["type"] == "error"
        assert frame["code"] == error
        assert frame["id"] == hello["id"]
        assert got == close
    await host.close()


async def test_malformed_frames_get_errors_and_the_connection_stays(stack: Stack) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1)
    welcome = host.welcome
    assert welcome is not None
    assert welcome["seq"] == 1
    assert welcome["id"] == "hi"
    assert welcome["you"] == {
        "player_id": host.player_id,
        "seat": 0,
        "team": 0,
        "host": True,
        "watching": False,
    }
    table = welcome["table"]
    for key in (
        "code",
        "players",
        "phase",
        "round",
        "seats",
        "scores",
        "hand",
        "center",
        "sign",
        "deadline",
        "swap_ready_at",
        "floor_ready_at",
        "vote",
        "reshuffled",
        "last_reveal",
        "winners",
        "emojis",
    ):
        assert key in table, key
    for raw in ("not json", "[1, 2]", '{"type": 7}', '"ready"', "{}"):
        await host.send_raw(raw)
    await host.until(lambda: len(host.unsolicited) >= 5)
    assert {f["code"] for f in host.unsolicited} == {"bad_message"}
    answer = await host.request("teleport")
    assert answer["code"] == "unknown_type"
    assert answer["id"].startswith("teleport")
    answer = await host.request("swap", card="c1", slot="0", expect="c2")
    assert answer["code"] == "bad_message"
    answer = await host.request("floor", open="yes")
    assert answer["code"] == "bad_message"
    answer = await host.request("swap", card="c1", slot=0, expect="c2")
    assert answer["code"] == "wrong_phase"
    answer = await host.request("hello", token=host.token, table=code)
    assert answer["type"] == "error"
    assert (await host.request("ping"))["type"] == "pong"
    assert host.close_code is None
    assert not host.problems
    # Over 64 KiB: closed with 1009.
    await host.send_raw(json.dumps({"type": "ping", "pad": "x" * 70_000}))
    assert await host.wait_closed() == 1009


async def test_every_frame_is_answered_before_its_events(stack: Stack) -> None:
    code, people = await table_with(stack.a.url, 4, 2)
    host = people[0]
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    await host.wait_event(lambda e: e["type"] == "signing")
    await host.ok("ready")
    await host.wait_event(lambda e: e["type"] == "ready" and e["seat"] == 0)
    # The ack for `ready` is in the stream before the `ready` event it caused.
    ack_at = next(i for i, f in enumerate(host.order) if f.get("id") == "ready-1")
    mine = next(
        i for i, f in enumerate(host.order) if f.get("type") == "ready" and f.get("seat") == 0
    )
    assert ack_at < mine
    for p in people:
        await p.close()


async def test_floods_are_refused_rate_limited(stack: Stack) -> None:
    _code, (host,) = await table_with(stack.b.url, 4, 1)
    for i in range(150):
        await host.send_raw(json.dumps({"type": "ping", "id": f"f{i}"}))
    await host.until(lambda: len(host.answers) >= 150)
    codes = [host.answers[f"f{i}"].get("code") for i in range(150)]
    assert "rate_limited" in codes
    assert codes[0] is None  # the first ones were answered with pong
    assert host.close_code is None
    await host.close()


async def test_a_command_judged_after_its_expiry_is_refused_and_changes_nothing(
    stack: Stack,
) -> None:
    code, people = await table_with(stack.a.url, 4, 2, deals=1, time_scale=0.2)
    rounds = await open_round(code, people)
    _, other = people
    mine = rounds[1]
    swap = {"card": mine["hand"][0]["id"], "slot": 0, "expect": mine["center"][0]["id"]}
    now = int(time.time() * 1000)
    late = await other.request("swap", **swap, expires=now - 1)
    assert late["type"] == "error"
    assert late["code"] == "expired"
    assert (await other.request("swap", **swap, expires="soon"))["code"] == "bad_message"
    assert (await other.request("swap", **swap, expires=-5))["code"] == "bad_message"
    # Nothing moved: the same swap, in time, is still possible and acknowledged.
    assert (await other.request("swap", **swap, expires=now + 60_000))["type"] == "ack"
    seen = await people[0].wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 1)
    assert seen["placed"]["id"] == swap["card"]
    for p in people:
        assert not p.problems
        await p.close()
