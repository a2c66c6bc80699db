"""Joining late (issue 13 part 2, an extension of R29), over the real stack: a watcher asks for
a bot's seat mid-match, the host grants it, and at the next round's signing the seat is theirs:
their watching socket closes 4411, they say hello again and sit with the team's score; the bot is
gone for good. Nothing of the seat reached them before (R30)."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cluster.client import WAIT_S, Player, table_with
from tests.cluster.test_spectators import audit
from tests.conftest import Stack

CLOSE_SEAT_GIVEN = 4411


async def watching(player: Player, code: str) -> dict[str, Any]:
    summary: dict[str, Any] = (await player.rest("GET", f"/api/tables/{code}")).json()
    return summary


async def test_a_watcher_takes_a_bots_seat_at_the_next_signing_with_the_team_score(
    stack: Stack,
) -> None:
    code, (host,) = await table_with(stack.a.url, 4, 1, time_scale=0.05, bot_policy="smart")
    newcomer = await Player(stack.b.url, "Zoé").register()  # on the other gateway
    try:
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        await host.wait_event(lambda e: e["type"] == "signing")
        await host.ok("ready")
        await host.wait_event(lambda e: e["type"] == "round")
        welcome = await newcomer.connect(code, watch=True, claimant=True)
        assert welcome["table"]["my_claim"] is None
        r = await newcomer.rest("POST", f"/api/tables/{code}/claims/1")
        assert r.status_code == 200, r.text
        assert r.json() == {"seat": 1, "team": 1, "approved": False}
        asked = await host.wait_event(lambda e: e["type"] == "claim")
        assert asked["seat"] == 1
        assert asked["name"] == "Zoé"
        assert asked["approved"] is False
        summary = (await host.rest("GET", f"/api/tables/{code}")).json()
        assert summary["claims"] == [{"seat": 1, "name": "Zoé", "approved": False}]
        r = await host.rest("PATCH", f"/api/tables/{code}/claims/1", json={"accept": True})
        assert r.status_code == 200, r.text
        await newcomer.wait_event(lambda e: e["type"] == "claim" and e["approved"])
        # The round plays on with the bot in seat 1 until it ends; the host skips the pause.
        await host.wait_event(lambda e: e["type"] == "pause", limit=30)
        assert (await host.rest("GET", f"/api/tables/{code}")).json()["seats"][1]["kind"] == "bot"
        scores = (await host.wait_event(lambda e: e["type"] == "reveal"))["scores"]
        await host.ok("next_round")
        assert await newcomer.wait_closed() == CLOSE_SEAT_GIVEN
        watched = list(newcomer.events)
        # R30 over everything the watcher received, up to the close: no hand, no sign.
        audit(watched, 4)
        assert any(e["type"] == "seat" and e["seat"] == 1 and e["kind"] == "human" for e in watched)
        seated = await newcomer.connect(code)
        assert seated["you"]["seat"] == 1
        assert seated["you"]["team"] == 1
        assert seated["you"]["watching"] is False
        table: dict[str, Any] = seated["table"]
        assert table["scores"] == scores  # the team's score is theirs too
        assert table["seats"][1] == {**table["seats"][1], "name": "Zoé", "kind": "human"}
        assert table["claims"] == []
        assert table["phase"] == "signing"
        assert table["hand"] == []
        # Their own hand once the round opens; the bot never acts for the seat again.
        await newcomer.ok("ready")
        await host.ok("ready")
        dealt = await newcomer.wait_event(lambda e: e["type"] == "round")
        assert len(dealt["hand"]) == 4
        mine = await newcomer.wait_event(lambda e: e["type"] in ("reveal", "over"), limit=30)
        given = await host.wait_event(lambda e: e["type"] == "seat" and e["kind"] == "human")
        played = [e for e in host.events if e["type"] == "swapped" and e["seat"] == 1]
        assert played, "the bot played seat 1 before (or this proves nothing)"
        assert all(e["seq"] < given["seq"] for e in played), "the bot played on in a lost seat"
        assert mine["hands"][1] == dealt["hand"]
        # Reconnecting finds the seat: the session knows it.
        listed = (await newcomer.rest("GET", "/api/sessions/tables")).json()["tables"]
        assert [(t["code"], t["seat"]) for t in listed] == [(code, 1)]
        assert not newcomer.problems
    finally:
        for p in (host, newcomer):
            await p.close()


async def test_requests_are_refused_clearly_and_end_when_the_watcher_leaves(
    stack: Stack,
) -> None:
    code, (host, guest) = await table_with(stack.a.url, 4, 2, time_scale=0.05)
    late = await Player(stack.a.url, "Late").register()
    other = await Player(stack.b.url, "Other").register()
    tab = Player(stack.b.url, "Late")
    try:
        r = await late.rest("POST", f"/api/tables/{code}/claims/2")
        assert (r.status_code, r.json()["error"]["code"]) == (409, "wrong_phase")  # lobby
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        r = await late.rest("POST", f"/api/tables/{code}/claims/1")
        assert (r.status_code, r.json()["error"]["code"]) == (409, "not_a_bot")
        r = await guest.rest("POST", f"/api/tables/{code}/claims/2")
        assert (r.status_code, r.json()["error"]["code"]) == (409, "already_seated")
        r = await late.rest("DELETE", f"/api/tables/{code}/claims/mine")
        assert (r.status_code, r.json()["error"]["code"]) == (404, "no_claim")
        # Watching from its gateway's shared view, the table cannot hand it a seat: the request
        # needs a watcher the table knows (`claimant`), or nobody might be there to sit.
        await late.connect(code, watch=True)
        r = await late.rest("POST", f"/api/tables/{code}/claims/2")
        assert (r.status_code, r.json()["error"]["code"]) == (409, "not_watching")
        await late.connect(code, watch=True, claimant=True)
        assert (await late.rest("POST", f"/api/tables/{code}/claims/2")).status_code == 200
        r = await late.rest("POST", f"/api/tables/{code}/claims/3")
        assert (r.status_code, r.json()["error"]["code"]) == (409, "already_claimed")
        r = await other.rest("POST", f"/api/tables/{code}/claims/2")
        assert (r.status_code, r.json()["error"]["code"]) == (409, "seat_taken")
        r = await guest.rest("PATCH", f"/api/tables/{code}/claims/2", json={"accept": True})
        assert (r.status_code, r.json()["error"]["code"]) == (403, "not_host")
        r = await host.rest("PATCH", f"/api/tables/{code}/claims/2", json={"accept": "yes"})
        assert (r.status_code, r.json()["error"]["code"]) == (422, "bad_message")
        # A second tab of the same player sees the request; it ends with their last watching
        # connection (nobody would be there to take the seat).
        tab = Player(stack.b.url, "Late")
        tab.token, tab.player_id = late.token, late.player_id
        again = await tab.connect(code, watch=True, claimant=True)
        assert again["table"]["my_claim"] == 2
        await late.close()
        async with asyncio.timeout(WAIT_S):  # the first tab's leave has reached the table
            while (summary := await watching(host, code))["watching"] != 1:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        assert summary["claims"] == [{"seat": 2, "name": "Late", "approved": False}]
        await tab.close()
        dropped = await host.wait_event(lambda e: e["type"] == "claim" and e["name"] is None)
        assert dropped["seat"] == 2
        assert (await host.rest("GET", f"/api/tables/{code}")).json()["claims"] == []
        # The host refuses a request: it ends, and the seat may be asked for again.
        await other.connect(code, watch=True, claimant=True)
        assert (await other.rest("POST", f"/api/tables/{code}/claims/2")).status_code == 200
        r = await host.rest("PATCH", f"/api/tables/{code}/claims/2", json={"accept": False})
        assert r.status_code == 200
        await other.wait_event(lambda e: e["type"] == "claim" and e["name"] is None)
    finally:
        for p in (host, guest, late, tab, other):
            await p.close()


async def test_a_request_outlives_a_reload_but_not_a_departure(stack: Stack) -> None:
    # time_scale 0.25: the claimant has CLAIM_GRACE_S (20 s) x 0.25 = 5 s to come back.
    code, (host,) = await table_with(stack.a.url, 4, 1, time_scale=0.25)
    late = await Player(stack.b.url, "Late").register()
    tab = late
    try:
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        await late.connect(code, watch=True, claimant=True)
        assert (await late.rest("POST", f"/api/tables/{code}/claims/2")).status_code == 200
        # The page reloads: its socket closes, the table sees nobody watching, and the request
        # stands ...
        await late.close()
        async with asyncio.timeout(WAIT_S):
            while (summary := await watching(host, code))["watching"] != 0:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        assert summary["claims"] == [{"seat": 2, "name": "Late", "approved": False}]
        # ... for the new page to find it.
        tab = Player(stack.b.url, "Late")
        tab.token, tab.player_id = late.token, late.player_id
        back = await tab.connect(code, watch=True, claimant=True)
        assert back["table"]["my_claim"] == 2
        # Gone for good: the request ends once the grace is over, and everyone is told.
        await tab.close()
        dropped = await host.wait_event(lambda e: e["type"] == "claim" and e["name"] is None)
        assert dropped["seat"] == 2
        assert (await host.rest("GET", f"/api/tables/{code}")).json()["claims"] == []
    finally:
        for p in (host, late, tab):
            await p.close()


async def test_a_table_set_to_never_refuses_every_request(stack: Stack) -> None:
    code, (host,) = await table_with(stack.b.url, 4, 1, time_scale=0.05)
    late = await Player(stack.b.url, "Late").register()
    try:
        url = f"/api/tables/{code}/settings"
        assert (await host.rest("PATCH", url, json={"late_join": "never"})).is_success
        r = await host.rest("PATCH", url, json={"late_join": "maybe"})
        assert r.status_code == 422
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        r = await late.rest("POST", f"/api/tables/{code}/claims/1")
        assert (r.status_code, r.json()["error"]["code"]) == (403, "not_allowed")
    finally:
        for p in (host, late):
            await p.close()
