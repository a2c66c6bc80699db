"""Extension: the host's table settings over REST — the bot level and hints, judged by the
engine, public in the table's summary and in every player's snapshot."""

from __future__ import annotations

from tests.cluster.client import Player
from tests.conftest import Stack


async def test_the_host_sets_the_bot_level_and_hints_in_the_lobby_only(stack: Stack) -> None:
    host = await Player(stack.a.url, "Host").register()
    guest = await Player(stack.b.url, "Guest").register()
    code = (await host.rest("POST", "/api/tables", json={"players": 4})).json()["code"]
    summary = (await guest.rest("GET", f"/api/tables/{code}")).json()
    assert summary["settings"] == {
        "bot_level": "normal",
        "hints": True,
        "late_join": "ask",
        "watchers": True,
    }
    assert (await guest.rest("POST", f"/api/tables/{code}/seats/1")).status_code == 200

    url = f"/api/tables/{code}/settings"
    r = await host.rest("PATCH", url, json={"bot_level": "relaxed"})
    assert r.status_code == 200, r.text
    r = await host.rest("PATCH", url, json={"hints": False})
    assert r.status_code == 200, r.text
    summary = (await guest.rest("GET", f"/api/tables/{code}")).json()
    assert summary["settings"] == {
        "bot_level": "relaxed",
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
