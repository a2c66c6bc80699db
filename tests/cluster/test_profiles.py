"""Profiles and ratings on the real stack (issue 36): a match rates its players exactly once
through a gateway's retried command and a table actor killed while the ratings were owed; the
profile's REST contract (own view, what others see, rename, report, leaderboards, delete).
The suite's gateways take every player to come from an address of their own
(`QUATRO_ADDRESS_TAGS=0`): issue 47's rules of addresses are tests/cluster/test_guests.py's."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from typing import Any

import redis

from actors import keys
from actors.protocol import Act, Outcome, Serve
from actors.ratings import Standing, match_id
from actors.ray_calls import send
from tests.cluster.client import Player, table_with
from tests.cluster.test_resilience import actor_pid
from tests.conftest import Stack


def store(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(stack.redis.url, decode_responses=True)


def standing(stack: Stack, player_id: str, players: int = 4) -> Standing:
    return Standing.read(store(stack).hget(keys.ratings(players), player_id))


def of_standing(r: redis.Redis, player_id: str) -> None:
    """A kept profile four days old with five rated matches (at 8 seats): as time and matches
    against people would leave it, so that its reports count (gateway/reports.py)."""
    four_days_ago = int(time.time() * 1000) - 4 * 24 * 3600 * 1000
    r.hset(keys.profile(player_id), mapping={"lasting": "1", "created": four_days_ago})
    r.persist(keys.profile(player_id))
    r.hset(keys.ratings(8), player_id, json.dumps({"mu": 25.0, "sigma": 7.0, "played": 5}))


async def until(check: Any, limit: float = 60.0) -> Any:
    """`check()` until it is truthy (a deadline, never a fixed sleep)."""
    for _ in range(int(limit * 10)):
        if found := check():
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within {limit} s")


async def to_four_nil(code: str, host: Player, other: Player) -> None:
    """Rounds until team 1 leads 4-0: each round the host calls a wrong Quatro! (its partner
    is an idle bot), so the other team scores."""
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    seen = host.last_seq
    while True:
        e = await host.wait_event(
            lambda e: e["type"] in ("signing", "round", "pause"), after=seen, limit=30
        )
        seen = e["seq"]
        if e["type"] == "signing":
            for p in (host, other):
                await p.request("ready")
        elif e["type"] == "round":
            if e.get("round") == 5:
                return
            await host.request("quatro")
        elif e["type"] == "pause":
            await host.request("next_round")


async def test_a_match_is_rated_once_through_a_retried_call_and_an_actor_killed_owing_it(
    stack: Stack,
) -> None:
    """The last call reaches the table twice with one command id (as a gateway sends it
    again after losing its link); the ratings cannot be applied (their key is broken) and the
    actor is killed while it owes them; the restarted actor applies them once, and its players
    hear the change once."""
    code, (host, other) = await table_with(stack.a.url, 4, 2, time_scale=0.05)
    r = store(stack)
    record = json.loads(r.get(keys.table(code)) or "{}")
    actor, table_id = record["actor"], record["table_id"]
    await to_four_nil(code, host, other)
    # Ratings of 4-seat tables out of reach (a key of the wrong type): the table owes them.
    saved_ratings: dict[Any, Any] = dict(r.hgetall(keys.ratings(4)))
    r.delete(keys.ratings(4))
    r.set(keys.ratings(4), "broken")
    try:
        ray = stack.driver()
        handle = ray.get_actor(actor, namespace=stack.namespace)
        act = Act.of("retried-quatro", "gw-test", host.player_id, "quatro", {})
        first = await asyncio.to_thread(ray.get, send(handle, Serve(act, code)), timeout=30)
        again = await asyncio.to_thread(ray.get, send(handle, Serve(act, code)), timeout=30)
        assert isinstance(first, Outcome)
        assert isinstance(again, Outcome)
        assert first.ok
        assert again.replayed, "the retried call was judged again"
        over = await other.wait_event(lambda e: e["type"] == "over")
        assert over["scores"] == [0, 5]

        def owed() -> bool:
            snap = json.loads(r.get(keys.snapshot(code)) or "{}")
            return bool(snap.get("results", {}).get("owed"))

        await until(owed)
        os.kill(actor_pid(stack, code), signal.SIGKILL)
    finally:
        r.delete(keys.ratings(4))
        if saved_ratings:
            r.hset(keys.ratings(4), mapping=saved_ratings)
    # Ray restarts the actor; it reads what it owes from its snapshot and settles it.
    await until(lambda: standing(stack, other.player_id).played == 1, limit=90)
    winner, loser = standing(stack, other.player_id), standing(stack, host.player_id)
    assert (winner.played, winner.won, winner.version) == (1, 1, 1)
    assert (loser.played, loser.won, loser.version) == (1, 0, 1)
    assert winner.rating.display > 1000 > loser.rating.display
    told = await other.wait_event(lambda e: e["type"] == "ratings", limit=60)
    assert (told["rated"], told["reason"]) == (True, None)
    assert [c["provisional"] for c in told["changes"]] == [True, True]  # a first rated match
    deltas = {c["seat"]: c["delta"] for c in told["changes"]}
    assert deltas == {
        0: loser.rating.display - 1000,
        1: winner.rating.display - 1000,
    }
    await asyncio.sleep(0)
    assert sum(e["type"] == "ratings" for e in other.events) == 1
    mid = match_id(table_id, 1)
    assert r.zrange(keys.history(other.player_id), 0, -1) == [mid]
    assert json.loads(r.get(keys.match(mid)) or "{}")["scores"] == [0, 5]
    # What the players see of it.
    me = (await other.rest("GET", "/api/profiles/me")).json()
    assert me["ratings"]["4"]["rating"] == winner.rating.display
    assert me["ratings"]["4"]["played"] == 1
    assert me["ratings"]["6"] is None
    assert (me["ratings"]["4"]["provisional"], me["ratings"]["4"]["remaining"]) == (True, 9)
    assert me["ratings"]["4"]["rank"] is None, "listed before ten rated matches"
    assert me["wins"] == 1
    (line,) = me["history"]
    assert (line["match"], line["won"], line["table_id"]) == (mid, True, table_id)
    assert (line["delta"], line["rated"], line["reason"]) == (deltas[1], True, None)
    assert line["provisional"] is True
    mine = (await other.rest("GET", "/api/leaderboards/4/me")).json()
    assert (mine["rank"], mine["provisional"], mine["remaining"]) == (None, True, 9)
    welcome = await other.connect(code)
    assert welcome["table"]["ratings"]["changes"] == told["changes"]
    for p in (host, other):
        await p.close()
    # The replay lists the match's players; a profile that shows something is linked.
    assert (await other.rest("PATCH", "/api/profiles/me", json={"history": True})).is_success
    (lineup,) = (await host.rest("GET", f"/api/replays/{table_id}")).json()["lineups"]
    assert [(s["seat"], s["name"], s["profile"]) for s in lineup if s["seat"] < 2] == [
        (0, host.name, None),
        (1, other.name, other.player_id),
    ]
    # Deleted: the replay's list and the other's history keep "deleted player", unlinked.
    assert (await other.rest("DELETE", "/api/profiles/me")).is_success
    (lineup,) = (await host.rest("GET", f"/api/replays/{table_id}")).json()["lineups"]
    assert (lineup[1]["name"], lineup[1]["profile"]) == ("deleted player", None)
    (line,) = (await host.rest("GET", "/api/profiles/me")).json()["history"]
    assert line["seats"][1]["name"] == "deleted player"
    assert r.zscore(keys.board(4), other.player_id) is None


async def test_the_profile_shows_what_its_owner_chooses_and_goes_for_good(stack: Stack) -> None:
    ana = await Player(stack.b.url, "Ana").register()
    bea = await Player(stack.b.url, "Bea").register()
    r = store(stack)
    # Rated at 6 seats, by hand (as matches would leave it): established, so listed.
    for p, mu in ((ana, 40.0), (bea, 10.0)):
        r.hset(keys.ratings(6), p.player_id, json.dumps({"mu": mu, "sigma": 2.0, "played": 13}))
        r.zadd(
            keys.board(6),
            {p.player_id: Standing.read(r.hget(keys.ratings(6), p.player_id)).rating.display},
        )
    me = (await ana.rest("GET", "/api/profiles/me")).json()
    assert (me["name"], me["public"]) == ("Ana", {"ratings": False, "history": False})
    assert me["ratings"]["6"]["played"] == 13
    assert (me["ratings"]["6"]["provisional"], me["ratings"]["6"]["remaining"]) == (False, 0)
    # Nothing shown yet: the profile looks like none.
    seen = await bea.rest("GET", f"/api/profiles/{ana.player_id}")
    assert seen.status_code == 404
    assert seen.json()["error"]["code"] == "unknown_profile"
    assert (await bea.rest("GET", "/api/profiles/p-" + "0" * 32)).status_code == 404
    assert (await bea.rest("GET", "/api/profiles/nobody")).status_code == 404
    got = await bea.rest("GET", "/api/leaderboards/6")
    assert got.status_code == 200, got.text
    board = got.json()
    row = next(x for x in board["rows"] if x["rating"] == me["ratings"]["6"]["rating"])
    assert (row["name"], row["profile"]) == (None, None), "a hidden player named on the board"
    # Shown: the name on the board, the profile's ratings; the history still hidden.
    changed = await ana.rest("PATCH", "/api/profiles/me", json={"ratings": True, "name": "Ana Z"})
    assert changed.status_code == 200, changed.text
    seen = (await bea.rest("GET", f"/api/profiles/{ana.player_id}")).json()
    assert seen["name"] == "Ana Z"
    assert seen["ratings"]["6"]["played"] == 13
    assert seen["history"] is None
    board = (await bea.rest("GET", "/api/leaderboards/6")).json()
    row = next(x for x in board["rows"] if x["profile"] == ana.player_id)
    assert row["name"] == "Ana Z"
    mine = (await bea.rest("GET", "/api/leaderboards/6/me")).json()
    assert mine["me"] is True
    assert mine["rank"] > row["rank"]
    assert (await ana.rest("GET", "/api/leaderboards/8/me")).json() is None
    # A provisional rating (four rated matches): not listed; its own row says how many more.
    r.hset(keys.ratings(8), ana.player_id, json.dumps({"mu": 30.0, "sigma": 6.0, "played": 4}))
    own = (await ana.rest("GET", "/api/leaderboards/8/me")).json()
    assert (own["rank"], own["provisional"], own["remaining"]) == (None, True, 6)
    assert own["rating"] == Standing.read(r.hget(keys.ratings(8), ana.player_id)).rating.display
    board8 = (await bea.rest("GET", "/api/leaderboards/8")).json()
    assert all(x["profile"] != ana.player_id for x in board8["rows"])
    assert (await bea.rest("GET", "/api/leaderboards/5")).status_code == 422
    # A bad name is refused by the rule of names; the session still names the player.
    bad = await ana.rest("PATCH", "/api/profiles/me", json={"name": "B0t 7"})
    assert bad.status_code == 422
    # Reports: from profiles of standing (issue 47), once per reporter, three hide the name.
    assert (await ana.rest("POST", f"/api/profiles/{ana.player_id}/report")).status_code == 403
    reporters = [bea, *[await Player(stack.b.url, f"R{i}").register() for i in range(2)]]
    for p in reporters:
        of_standing(r, p.player_id)
    for i, p in enumerate(reporters):
        for _ in range(2):  # counted once
            assert (await p.rest("POST", f"/api/profiles/{ana.player_id}/report")).is_success
        hidden = (await bea.rest("GET", f"/api/profiles/{ana.player_id}")).json()["name"] is None
        assert hidden == (i == 2)
    board = (await bea.rest("GET", "/api/leaderboards/6")).json()
    assert all(x["profile"] != ana.player_id for x in board["rows"])
    assert (await ana.rest("GET", "/api/profiles/me")).json()["name_hidden"] is True
    # Deleted: the session ends, the board forgets the player.
    assert (await ana.rest("DELETE", "/api/profiles/me")).is_success
    assert (await ana.rest("GET", "/api/profiles/me")).status_code == 401
    assert (await bea.rest("GET", f"/api/profiles/{ana.player_id}")).status_code == 404
    assert r.zscore(keys.board(6), ana.player_id) is None
    assert r.hget(keys.ratings(6), ana.player_id) is None
    assert r.exists(keys.profile(ana.player_id)) == 0


async def test_quick_play_seats_by_level(stack: Stack) -> None:
    """A veteran and two newcomers ask for quick play at once: the newcomers share a table,
    the veteran (1,800 against 1,000) gets one of their own while the newcomers' band is
    narrow. The newcomer who opened theirs has won nothing: its bots start at relaxed; the
    veteran's at normal. Everyone leaves before bots would fill in."""
    r = store(stack)
    r.delete(keys.quick(8))
    vet, new1, new2 = [await Player(stack.a.url, n).register() for n in ("Vet", "New1", "New2")]
    r.hset(keys.ratings(8), vet.player_id, json.dumps({"mu": 45.0, "sigma": 1.5, "v": 1}))
    r.sadd(keys.wins(vet.player_id), "t-1.1", "t-2.1", "t-3.1")
    seats: list[tuple[Player, dict[str, Any]]] = []
    try:
        for p in (new1, vet, new2):
            got = await p.rest("POST", "/api/quickplay", json={"players": 8})
            assert got.status_code == 200, got.text
            seats.append((p, got.json()))
        codes = {p.name: s["code"] for p, s in seats}
        assert codes["New1"] == codes["New2"]
        assert codes["Vet"] != codes["New1"]
        for name, level in (("New1", "relaxed"), ("Vet", "normal")):
            summary = (await vet.rest("GET", f"/api/tables/{codes[name]}")).json()
            assert summary["settings"]["bot_level"] == level, name
    finally:
        for p, s in seats:
            await p.rest("DELETE", f"/api/tables/{s['code']}/seats/{s['seat']}")
        r.delete(keys.quick(8))


async def test_kicks_and_reports_are_rate_limited_per_player(stack: Stack) -> None:
    host = await Player(stack.b.url, "Kicker").register()
    r = await host.rest("POST", "/api/tables", json={"players": 4})
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    answers = [
        (await host.rest("DELETE", f"/api/tables/{code}/seats/3")).status_code for _ in range(11)
    ]
    assert answers[:10] == [404] * 10  # the seat is empty: a token is taken all the same
    assert answers[10] == 429
    target = await Player(stack.b.url, "Target").register()
    got = [
        (await host.rest("POST", f"/api/profiles/{target.player_id}/report")).status_code
        for _ in range(6)
    ]
    assert got == [403] * 5 + [429]  # a new profile's reports count nothing: still limited
    limited = await host.rest("POST", f"/api/profiles/{target.player_id}/report")
    assert int(limited.headers["Retry-After"]) >= 1
