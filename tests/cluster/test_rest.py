"""The REST half of PROTOCOL.md against a real gateway: sessions, tables, the lobby (R29), the
test hooks, health and metrics."""

from __future__ import annotations

import httpx

from engine import EMOJIS
from tests.cluster.client import Player, rigged_deal
from tests.conftest import Stack


async def test_sessions_tokens_and_names(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        r = await c.post("/api/sessions", json={"name": "  Ana  "})
        assert r.status_code == 201
        body = r.json()
        assert body["name"] == "Ana"
        assert body["player_id"]
        assert len(body["token"]) >= 22  # at least 128 random bits, URL-safe
        for bad in ({"name": ""}, {"name": "x" * 25}, {"name": 5}, {}, {"name": "a\u0000b"}):
            r = await c.post("/api/sessions", json=bad)
            assert r.status_code == 422, bad
            assert r.json()["error"]["code"] == "bad_message"
        r = await c.post("/api/tables", json={"players": 4})
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "bad_token"
        r = await c.post(
            "/api/tables", json={"players": 4}, headers={"Authorization": "Bearer nope"}
        )
        assert r.status_code == 401


async def test_r29_lobby_seats_bots_and_start(stack: Stack) -> None:
    host = await Player(stack.a.url, "Host").register()
    guest = await Player(stack.b.url, "Guest").register()
    r = await host.rest("POST", "/api/tables", json={"players": 6})
    assert r.status_code == 201
    created = r.json()
    code = created["code"]
    assert created["players"] == 6
    assert created["host"] == 0
    assert len(code) == 6
    summary = (await guest.rest("GET", f"/api/tables/{code.lower()}")).json()
    assert summary["phase"] == "lobby"
    assert summary["host"] == 0
    assert summary["seats"][0] == {
        "seat": 0,
        "team": 0,
        "name": "Host",
        "kind": "human",
        "connected": False,
    }
    assert (await guest.rest("POST", f"/api/tables/{code}/seats/0")).status_code == 409
    r = await guest.rest("POST", f"/api/tables/{code}/seats/4")
    assert r.status_code == 200
    assert r.json() == {"seat": 4, "team": 1}
    r = await guest.rest("POST", f"/api/tables/{code}/seats/5")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "already_seated"
    r = await guest.rest("POST", f"/api/tables/{code}/seats/9")
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "bad_seat"
    r = await guest.rest("POST", f"/api/tables/{code}/bots", json={"seat": 1})
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "not_host"
    r = await host.rest("POST", f"/api/tables/{code}/start")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "table_not_full"
    for seat in (1, 2, 3, 5):
        assert (await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})).is_success
    r = await host.rest("DELETE", f"/api/tables/{code}/bots/4")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "not_a_bot"
    assert (await host.rest("DELETE", f"/api/tables/{code}/bots/5")).is_success
    assert (await guest.rest("DELETE", f"/api/tables/{code}/seats/4")).is_success
    kinds = [s["kind"] for s in (await host.rest("GET", f"/api/tables/{code}")).json()["seats"]]
    assert kinds == ["human", "bot", "bot", "bot", None, None]
    for seat in (4, 5):
        await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    r = await host.rest("POST", f"/api/tables/{code}/bots/4")
    assert r.status_code == 405
    r = await host.rest("DELETE", f"/api/tables/{code}/bots/4")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "wrong_phase"
    summary = (await host.rest("GET", f"/api/tables/{code}")).json()
    assert summary["phase"] in ("signing", "playing")
    assert (await host.rest("GET", "/api/tables/ZZZZZZ")).status_code == 404


async def test_r29_the_host_fills_every_empty_seat_in_one_call(stack: Stack) -> None:
    host = await Player(stack.a.url, "Host").register()
    guest = await Player(stack.b.url, "Guest").register()
    code = (await host.rest("POST", "/api/tables", json={"players": 6})).json()["code"]
    assert (await guest.rest("POST", f"/api/tables/{code}/seats/3")).status_code == 200
    assert (await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": 1})).is_success
    r = await guest.rest("POST", f"/api/tables/{code}/fill")
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "not_host"

    r = await host.rest("POST", f"/api/tables/{code}/fill")
    assert r.status_code == 200
    assert r.json() == {"seats": [2, 4, 5]}
    seats = (await guest.rest("GET", f"/api/tables/{code}")).json()["seats"]
    assert [(s["kind"], s["name"]) for s in seats] == [
        ("human", "Host"),
        ("bot", "Bot 2"),
        ("bot", "Bot 3"),
        ("human", "Guest"),
        ("bot", "Bot 5"),
        ("bot", "Bot 6"),
    ]
    # Full: nothing to do, and nothing done; then the start, after which the lobby is closed.
    assert (await host.rest("POST", f"/api/tables/{code}/fill")).json() == {"seats": []}
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    r = await host.rest("POST", f"/api/tables/{code}/fill")
    assert r.status_code == 409
    assert r.json()["error"]["code"] == "wrong_phase"
    r = await host.rest("POST", "/api/tables/ZZZZZZ/fill")
    assert r.status_code == 404

    # The answer is a model of its own in the OpenAPI document.
    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        openapi = (await c.get("/openapi.json")).json()
    post = openapi["paths"]["/api/tables/{code}/fill"]["post"]
    schema = post["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/BotsFilled"}
    filled = openapi["components"]["schemas"]["BotsFilled"]
    assert filled["properties"]["seats"]["items"] == {"type": "integer"}


async def test_scenarios_are_checked(stack: Stack) -> None:
    host = await Player(stack.a.url, "Rig").register()
    good = rigged_deal(4)
    r = await host.rest(
        "POST", "/api/tables", json={"players": 4, "scenario": {"deals": [good], "seed": 1}}
    )
    assert r.status_code == 201
    three = {"hands": [["A", "A", "A", "K"], *good["hands"][1:]], "center": good["center"]}
    wrong_cards = {"hands": good["hands"], "center": ["A", "A", "A", "A"]}
    for deal in (three, wrong_cards):
        r = await host.rest(
            "POST", "/api/tables", json={"players": 4, "scenario": {"deals": [deal]}}
        )
        assert r.status_code == 422, r.text
        assert r.json()["error"]["code"] == "bad_scenario"
    r = await host.rest("POST", "/api/tables", json={"players": 5})
    assert r.status_code == 422


async def test_meta_health_metrics_and_pages(stack: Stack) -> None:
    async with httpx.AsyncClient(base_url=stack.b.url) as c:
        assert (await c.get("/api/emojis")).json() == {"emojis": list(EMOJIS)}
        assert (await c.get("/api/config")).json() == {"test_hooks": True}
        assert (await c.get("/healthz")).json() == {"status": "ok"}
        ready = (await c.get("/readyz")).json()
        assert ready == {"ready": True, "redis": "ok", "ray": "ok", "tables": "ok"}
        metrics = (await c.get("/metrics")).text
        assert "quatro_players_connected" in metrics
        assert "quatro_command_seconds" in metrics
        openapi = (await c.get("/openapi.json")).json()
        for path in ("/api/sessions", "/api/tables", "/api/tables/{code}/seats/{seat}"):
            assert path in openapi["paths"]
        index = await c.get("/")
        if index.status_code == 200:  # the web client is another engineer's; served if present
            assert index.headers["content-type"].startswith("text/html")
            assert (await c.get("/t/ABCDEF")).text == index.text


async def test_my_tables_lists_only_the_callers_live_seats(stack: Stack) -> None:
    """GET /api/sessions/tables: the seats the caller holds, asked of the tables themselves (a
    seat freed by the host is gone at once), and nothing about anyone else."""
    host = await Player(stack.a.url, "Host").register()
    guest = await Player(stack.b.url, "Guest").register()
    stranger = await Player(stack.a.url, "Stranger").register()
    code = (await host.rest("POST", "/api/tables", json={"players": 4})).json()["code"]
    assert (await guest.rest("POST", f"/api/tables/{code}/seats/3")).status_code == 200

    mine = (await host.rest("GET", "/api/sessions/tables")).json()
    assert mine == {"tables": [{"code": code, "seat": 0, "players": 4, "phase": "lobby"}]}
    theirs = (await guest.rest("GET", "/api/sessions/tables")).json()
    assert theirs == {"tables": [{"code": code, "seat": 3, "players": 4, "phase": "lobby"}]}
    assert (await stranger.rest("GET", "/api/sessions/tables")).json() == {"tables": []}

    # The host frees the guest's seat: the guest's list forgets the table.
    assert (await host.rest("DELETE", f"/api/tables/{code}/seats/3")).status_code == 200
    assert (await guest.rest("GET", "/api/sessions/tables")).json() == {"tables": []}

    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        assert (await c.get("/api/sessions/tables")).status_code == 401
