"""Quick play (issue 13, part 4): POST /api/quickplay seats players first come first served at
public tables, across both gateways (the queue lives in Redis), opens new tables as they fill,
and the engine fills what is left with bots at the fill deadline (QUATRO_QUICK_FILL_S=8 here)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import httpx

from tests.cluster.client import Player
from tests.conftest import Stack

FILL_S = 8.0  # tests/conftest.py
RETRIED: Counter[int] = Counter()  # answers waited out, by status: printed with the figures
STARTED = ("signing", "playing", "pause", "over")
# 200 players: 24 full tables of 8 and one with 3 players (5 bots), one table of 6 with 5 players
# (one bot): 26 tables of the head's 112 slots, which the rest of the session needs too.
CROWD = {8: 195, 6: 5}


async def call(
    client: httpx.AsyncClient, method: str, path: str, limit: float = 60.0, **kw: Any
) -> httpx.Response:
    """One REST call, waiting out a 429's Retry-After (the shared per-IP buckets) or a 503
    until `limit`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        r = await client.request(method, path, **kw)
        if r.status_code not in (429, 503) or loop.time() > deadline:
            return r
        RETRIED[r.status_code] += 1
        await asyncio.sleep(min(float(r.headers.get("Retry-After", "1")), 2.0))


async def register(client: httpx.AsyncClient, name: str) -> dict[str, str]:
    r = await call(client, "POST", "/api/sessions", json={"name": name})
    assert r.status_code == 201, r.text
    body = r.json()
    return {"name": name, "player_id": body["player_id"], "token": body["token"]}


def bearer(p: dict[str, str]) -> dict[str, str]:
    return {"Authorization": f"Bearer {p['token']}"}


async def summaries_once_started(
    client: httpx.AsyncClient, codes: set[str], limit: float
) -> dict[str, dict[str, Any]]:
    """Every table's public summary once it has left its lobby; AssertionError naming the
    tables still waiting at `limit`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    done: dict[str, dict[str, Any]] = {}
    while True:
        for code in sorted(codes - set(done)):
            r = await call(client, "GET", f"/api/tables/{code}")
            assert r.status_code == 200, r.text
            if r.json()["phase"] in STARTED:
                done[code] = r.json()
        if len(done) == len(codes):
            return done
        assert loop.time() < deadline, f"never started: {sorted(codes - set(done))}"
        await asyncio.sleep(1.0)


async def test_200_players_play_now_over_two_gateways(stack: Stack) -> None:
    limits = httpx.Limits(max_connections=100)
    async with (
        httpx.AsyncClient(base_url=stack.a.url, timeout=180, limits=limits) as a,
        httpx.AsyncClient(base_url=stack.b.url, timeout=180, limits=limits) as b,
    ):
        sizes = [size for size, n in CROWD.items() for _ in range(n)]
        gateways = [a if i % 2 == 0 else b for i in range(len(sizes))]
        players = await asyncio.gather(*(register(gw, f"Q{i}") for i, gw in enumerate(gateways)))
        latencies: list[float] = []

        async def play_now(i: int) -> dict[str, Any]:
            start = time.monotonic()
            r = await call(
                gateways[i],
                "POST",
                "/api/quickplay",
                json={"players": sizes[i]},
                headers=bearer(players[i]),
            )
            latencies.append(time.monotonic() - start)
            assert r.status_code == 200, r.text
            body: dict[str, Any] = r.json()
            return body

        began = time.monotonic()
        seats = await asyncio.gather(*(play_now(i) for i in range(len(sizes))))
        seated_in = time.monotonic() - began

        # Every one of the 200 got exactly one seat, at a table of the size asked, and no seat
        # was given twice.
        assert len(seats) == sum(CROWD.values())
        pairs = [(s["code"], s["seat"]) for s in seats]
        assert len(set(pairs)) == len(pairs), Counter(pairs).most_common(3)
        for size, s in zip(sizes, seats, strict=True):
            assert s["players"] == size
            assert 0 <= s["seat"] < size
            assert s["table_id"]
        humans: dict[str, dict[int, str]] = {}
        for p, s in zip(players, seats, strict=True):
            humans.setdefault(s["code"], {})[s["seat"]] = p["name"]

        # Every table started: the full ones at once, the others when bots filled them.
        tables = await summaries_once_started(a, set(humans), limit=FILL_S + 60)
        bots = 0
        for code, summary in tables.items():
            assert summary["public"] is True
            assert summary["host"] is None
            for row in summary["seats"]:
                mine = humans[code].get(row["seat"])
                if mine is not None:  # the player given this seat sits in it
                    assert (row["kind"], row["name"]) == ("human", mine), (code, row)
                else:  # bots took only the seats nobody was given
                    assert row["kind"] == "bot", (code, row)
                    bots += 1
        by_size = Counter(summary["players"] for summary in tables.values())
        # Bounded: full tables plus, per size, a few opened while others were still filling.
        for size, n in CROWD.items():
            assert by_size[size] <= -(-n // size) + 3, by_size
        latencies.sort()
        p50, p95 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.95)]
        print(
            f"\nquick play: {len(seats)} players seated in {seated_in:.1f}s over 2 gateways, "
            f"{len(tables)} tables ({dict(by_size)}), {bots} bot seats, answers waited out "
            f"{dict(RETRIED)}; latency p50 {p50:.2f}s p95 {p95:.2f}s"
        )


async def test_asking_again_returns_the_same_seat(stack: Stack) -> None:
    ana = await Player(stack.a.url, "Ana").register()
    first, again = await asyncio.gather(
        ana.rest("POST", "/api/quickplay", json={"players": 4}),
        ana.rest("POST", "/api/quickplay", json={"players": 4}),
    )
    assert first.status_code == again.status_code == 200, (first.text, again.text)
    assert first.json() == again.json()
    # From the other gateway, another size: still the seat already held, never a second one.
    ana.base = stack.b.url
    other = await ana.rest("POST", "/api/quickplay", json={"players": 8})
    assert other.status_code == 200
    assert other.json() == first.json()
    code, seat = first.json()["code"], first.json()["seat"]
    # Reconnecting finds it: the session knows the seat.
    mine = (await ana.rest("GET", "/api/sessions/tables")).json()["tables"]
    assert {"code": code, "seat": seat} in [{"code": t["code"], "seat": t["seat"]} for t in mine]
    welcome = await ana.connect(code)
    try:
        assert welcome["you"]["seat"] == seat
        assert welcome["you"]["host"] is False
        assert welcome["table"]["public"] is True
        # Nobody hosts a public table: no bots by hand, no start, no freeing another's seat.
        for method, path, body in (
            ("POST", f"/api/tables/{code}/bots", {"seat": (seat + 1) % 4}),
            ("POST", f"/api/tables/{code}/start", None),
        ):
            r = await ana.rest(method, path, json=body)
            assert r.status_code == 403, r.text
            assert r.json()["error"]["code"] == "not_allowed"
        # Left alone, the table fills with bots at its deadline and starts.
        await ana.wait_event(lambda e: e["type"] == "signing", limit=FILL_S + 15)
        summary = (await ana.rest("GET", f"/api/tables/{code}")).json()
        kinds = {row["seat"]: row["kind"] for row in summary["seats"]}
        assert kinds == {s: "human" if s == seat else "bot" for s in range(4)}
    finally:
        await ana.close()
    # Once the match is on, asking again still returns that seat (the match is not over).
    again = await ana.rest("POST", "/api/quickplay", json={"players": 4})
    assert again.json() == first.json()


async def test_bad_requests_get_clear_errors(stack: Stack) -> None:
    bo = await Player(stack.a.url, "Bo").register()
    # 4.0 is the integer 4 to JSON (gateway/models.py's WholeInt) and is taken; 4.5 is not.
    bads: list[object] = [{"players": 5}, {"players": "4"}, {"players": 4.5}, {"players": None}]
    bads += [{"players": True}]
    for bad in [*bads, {"players": 2}, {}, []]:
        r = await bo.rest("POST", "/api/quickplay", json=bad)
        assert r.status_code == 422, (bad, r.text)
        assert r.json()["error"]["code"] == "bad_message"
    async with httpx.AsyncClient(base_url=stack.a.url) as c:
        r = await c.post("/api/quickplay", json={"players": 4})
        assert r.status_code == 401
        assert r.json()["error"]["code"] == "bad_token"
