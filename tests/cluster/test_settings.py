"""Extension: the host's table settings over REST — the bot level and hints, judged by the
engine, public in the table's summary and in every player's snapshot."""

from __future__ import annotations

import redis

from actors import keys
from tests.cluster.client import Player
from tests.conftest import Stack


async def test_the_host_sets_the_bot_level_and_hints_in_the_lobby_only(stack: Stack) -> None:
    host = await Player(stack.a.url, "Host").register()
    guest = await Player(stack.b.url, "Guest").register()
    code = (await host.rest("POST", "/api/tables", json={"players": 4})).json()["code"]
    summary = (await guest.rest("GET", f"/api/tables/{code}")).json()
    assert summary["settings"] == {
        "bot_level": "relaxed",  # a newcomer's table (issue 46)
        "hints": True,
        "late_join": "ask",
        "watchers": True,
    }
    assert (await guest.rest("POST", f"/api/tables/{code}/seats/1")).status_code == 200

    url = f"/api/tables/{code}/settings"
    r = await host.rest("PATCH", url, json={"bot_level": "normal"})
    assert r.status_code == 200, r.text
    r = await host.rest("PATCH", url, json={"hints": False})
    assert r.status_code == 200, r.text
    summary = (await guest.rest("GET", f"/api/tables/{code}")).json()
    assert summary["settings"] == {
        "bot_level": "normal",
        "hints": False,
        "late_join": "ask",
        "watchers": True,
    }

    r = await guest.rest("PATCH", url, json={"bot_level": "sharp"})
    assert (r.status_code, r.json()["error"]["code"]) == (403, "not_host")
    for bad in ({"bot_level": "brutal"}, {"hints": "no"}, {"bot_level": 2}):
        r = await host.rest("PATCH", url, json=bad)
        assert (r.status_code, r.json()["error"]["code"]) == (422, "bad_message"), bad

    for seat in (2, 3):
        assert (await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})).is_success
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    r = await host.rest("PATCH", url, json={"bot_level": "sharp"})
    assert (r.status_code, r.json()["error"]["code"]) == (409, "wrong_phase")


async def test_a_new_table_starts_relaxed_until_its_creator_has_won_three_matches(
    stack: Stack,
) -> None:
    """Issue 46: a newcomer's tables start their bots at relaxed, a level named in the creation
    wins, and three wins (finished matches', as a table counts them) make the next table start
    at normal; a bad level is refused."""
    new = await Player(stack.a.url, "Newcomer").register()
    other = await Player(stack.b.url, "Other").register()

    async def level(who: Player, body: dict[str, object]) -> str:
        made = await who.rest("POST", "/api/tables", json=body)
        assert made.status_code == 201, made.text
        summary = (await who.rest("GET", f"/api/tables/{made.json()['code']}")).json()
        return str(summary["settings"]["bot_level"])

    assert await level(new, {"players": 6}) == "relaxed"
    assert await level(other, {"players": 4, "bot_level": "sharp"}) == "sharp"
    for bad in ("brutal", 2, True):
        r = await other.rest("POST", "/api/tables", json={"players": 4, "bot_level": bad})
        assert (r.status_code, r.json()["error"]["code"]) == (422, "bad_message"), bad
    assert (await new.rest("GET", "/api/profiles/me")).json()["wins"] == 0
    store = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    try:
        # As actors/match_records.py counts them: the ids of the matches won.
        store.sadd(keys.wins(new.player_id), "t-1.1", "t-2.1")
        assert await level(new, {"players": 4}) == "relaxed"
        store.sadd(keys.wins(new.player_id), "t-3.1")
    finally:
        store.close()
    assert (await new.rest("GET", "/api/profiles/me")).json()["wins"] == 3
    assert await level(new, {"players": 4}) == "normal"
