"""Watching a table without a seat (issue 13, part 1): the public view and the events meant for
everyone or for watchers, never a hand or a sign before the reveal (R30), audited over every
frame a spectator receives in whole bot matches at 4, 6 and 8 seats."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.client import Player, table_with
from tests.cluster.test_match import play_match
from tests.conftest import Stack

# The events that name a card: outside a reveal, a card is public only where everyone saw it.
PUBLIC_CARDS = {"swapped": ("placed", "taken")}


def audit(frames: list[dict[str, Any]], players: int) -> dict[str, int]:
    """Every frame a watcher got: no hand, no sign; cards only the centre's, the swaps' and the
    reveals'. Returns counts by type."""
    counts: dict[str, int] = {}
    for f in frames:
        kind = f["type"]
        counts[kind] = counts.get(kind, 0) + 1
        assert kind != "sign", f  # a team's sign travels to that team only
        if kind == "welcome":
            table = f["table"]
            assert table["hand"] == []
            assert table["sign"] is None
            assert table["choice"] is None
            assert f["you"]["seat"] is None
            assert f["you"]["watching"] is True
        if kind in ("round", "reshuffled"):
            assert f["hand"] == [], f
            assert len(f["center"]) == 4
        if kind == "reveal":
            assert len(f["hands"]) == players  # shown to all at the reveal (R23)
    return counts


@pytest.mark.parametrize("players", [4, 6, 8])
async def test_r30_a_spectator_sees_a_whole_match_and_never_a_hand_or_a_sign(
    stack: Stack, players: int
) -> None:
    code, (host, partner) = await table_with(
        stack.a.url, players, 2, time_scale=0.02, bot_policy="smart"
    )
    watcher = await Player(stack.b.url, "Watcher").register()  # on the other gateway
    try:
        welcome = await watcher.connect(code, watch=True)
        assert welcome["table"]["phase"] == "lobby"
        summary = (await host.rest("GET", f"/api/tables/{code}")).json()
        assert summary["watching"] == 1
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        over = await play_match(host, partner)
        seen = await watcher.wait_event(lambda e: e["type"] == "over")
        assert seen["scores"] == over["scores"]
        counts = audit(watcher.events, players)
        # The watcher saw the match as it went: each deal's centre, the swaps, every reveal.
        reveals = [e["scores"] for e in host.events if e["type"] == "reveal"]
        assert [e["scores"] for e in watcher.events if e["type"] == "reveal"] == reveals
        assert counts.get("round", 0) >= len(reveals)
        assert counts.get("swapped", 0) > 0
        # Watching plays for nobody.
        answer = await watcher.request("ready")
        assert answer["type"] == "error"
        assert answer["code"] == "no_seat"
        assert not watcher.problems
    finally:
        for p in (host, partner, watcher):
            await p.close()


async def test_a_spectator_watches_while_the_seated_never_get_the_watchers_copy(
    stack: Stack,
) -> None:
    code, (host, partner) = await table_with(stack.a.url, 4, 2, time_scale=0.05)
    watcher = await Player(stack.a.url, "Watcher").register()
    try:
        await watcher.connect(code, watch=True)
        assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
        for p in (host, partner):
            await p.wait_event(lambda e: e["type"] == "signing")
            assert (await p.request("ready"))["type"] == "ack"
        dealt = await watcher.wait_event(lambda e: e["type"] == "round")
        assert dealt["hand"] == []
        mine = await host.wait_event(lambda e: e["type"] == "round")
        assert len(mine["hand"]) == 4
        assert mine["center"] == dealt["center"]
        # Exactly one `round` reached each seated player: their own. The watchers' copy comes
        # after the seats' in the table's order, and a pong after every event queued before it.
        for p in (host, partner):
            await p.ok("ping")
        assert [e for e in host.events if e["type"] == "round"] == [mine]
        assert all(len(e["hand"]) == 4 for e in partner.events if e["type"] == "round")
    finally:
        for p in (host, partner, watcher):
            await p.close()
