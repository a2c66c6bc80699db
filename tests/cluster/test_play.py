"""Whole rounds over real WebSockets at 4, 6 and 8 players, on rigged deals: seats, signs (R5),
ready (R6), swaps with their cooldown and stale refusals (R9–R11), a right Quatro! (R15), the
reveal (R18) and the pause (R23) — and nothing private in any frame before the reveal (R30)."""

from __future__ import annotations

import asyncio

import pytest

from engine import EMOJIS
from engine.seating import team_of
from tests.cluster.client import Frame, Player, table_with
from tests.conftest import Stack


async def swap_until_ack(p: Player, card: str, slot: int, expect: str) -> Frame:
    """Swap, honouring `cooldown` answers (their retry_in says when), within a deadline."""
    async with asyncio.timeout(10):
        while True:
            answer = await p.request("swap", card=card, slot=slot, expect=expect)
            if answer["type"] == "ack":
                return answer
            assert answer["code"] == "cooldown", answer
            await asyncio.sleep(answer["retry_in"] / 1000)


def card_of(cards: list[Frame], rank: str) -> Frame:
    return next(c for c in cards if c["rank"] == rank)


@pytest.mark.parametrize("players", [4, 6, 8])
async def test_rigged_round_scores_a_right_quatro(stack: Stack, players: int) -> None:
    # Half-speed clocks: a 1 s cooldown stays measurable on a busy machine.
    code, people = await table_with(stack.a.url, players, players, deals=1, time_scale=0.5)
    n = players
    host, partner = people[0], people[n // 2]
    for p in people[1::2]:  # half the table plays through the other gateway
        await p.connect(code, stack.b.url)
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    for p in people:
        await p.wait_event(lambda e: e["type"] == "signing")
    # R5: the first partner to pick fixes the team's sign; the other is told, nobody else.
    await host.ok("sign", emoji=EMOJIS[0])
    late = await partner.request("sign", emoji=EMOJIS[1])
    assert late["code"] == "sign_taken"
    await people[1].ok("sign", emoji=EMOJIS[2])
    told = await partner.wait_event(lambda e: e["type"] == "sign")
    assert told["emoji"] == EMOJIS[0]
    assert told["by"] == 0
    for p in people:
        await p.ok("ready")
    rounds = {p.seat: await p.wait_event(lambda e: e["type"] == "round") for p in people}
    assert {tuple(sorted(c["rank"] for c in r["hand"])) for r in rounds.values()} >= {
        ("A", "A", "K", "K")
    }
    mine = rounds[n // 2]
    centre = mine["center"]
    # R11: a swap naming the wrong expected card is stale and costs nothing.
    king = card_of(mine["hand"], "K")
    ace_slot = next(i for i, c in enumerate(centre) if c["rank"] == "A")
    stale = await partner.request("swap", card=king["id"], slot=ace_slot, expect="c999")
    assert stale["code"] == "stale"
    await partner.ok("swap", card=king["id"], slot=ace_slot, expect=centre[ace_slot]["id"])
    # R10: the next swap waits for the cooldown.
    hand = [c for c in mine["hand"] if c["id"] != king["id"]] + [centre[ace_slot]]
    king2 = card_of(hand, "K")
    slot2 = next(i for i, c in enumerate(centre) if c["rank"] == "A" and i != ace_slot)
    early = await partner.request("swap", card=king2["id"], slot=slot2, expect=centre[slot2]["id"])
    assert early["code"] == "cooldown"
    assert 0 < early["retry_in"] <= 1000
    await swap_until_ack(partner, king2["id"], slot2, centre[slot2]["id"])
    for p in people:
        seen = await p.wait_event(lambda e: e["type"] == "swapped" and e["slot"] == slot2)
        assert seen["seat"] == n // 2
        assert seen["placed"]["rank"] == "K"
    # R15: Quatro! looks at the partner's hand: a carré of aces.
    await host.ok("quatro")
    for p in people:
        reveal = await p.wait_event(lambda e: e["type"] == "reveal")
        assert reveal["reason"] == "quatro"
        assert reveal["by"] == 0
        assert reveal["correct"] is True
        assert reveal["target_team"] == 0
        assert reveal["scored"] == [0]
        assert reveal["scores"] == [1] + [0] * (n // 2 - 1)
        assert reveal["carres"] == [n // 2]
        assert [c["rank"] for c in reveal["hands"][n // 2]] == ["A"] * 4
        assert reveal["signs"][0] == EMOJIS[0]
        assert reveal["signs"][1] == EMOJIS[2]
        await p.wait_event(lambda e: e["type"] == "pause")
    late_call = await people[1].request("contre", team=0)
    assert late_call["code"] == "wrong_phase"
    # R30: before the reveal, each player saw only their own hand and their own team's sign.
    reveal_signs = reveal["signs"]
    for p in people:
        assert not p.problems
        before = [e for e in p.events if e["seq"] < p.latest("reveal")["seq"]]  # type: ignore[index]
        for e in before:
            assert "hands" not in e, e
            assert "signs" not in e, e
            if e["type"] == "sign":
                assert e["emoji"] == reveal_signs[team_of(p.seat, n)]
            if e["type"] in ("round", "reshuffled"):
                assert e["hand"] == rounds[p.seat]["hand"]
    for p in people:
        await p.close()


async def test_r25_snapshot_during_signing_shows_own_sign_only(stack: Stack) -> None:
    code, people = await table_with(stack.a.url, 4, 4, time_scale=0.5)
    assert (await people[0].rest("POST", f"/api/tables/{code}/start")).is_success
    await people[0].wait_event(lambda e: e["type"] == "signing")
    await people[1].ok("sign", emoji=EMOJIS[5])
    await people[3].wait_event(lambda e: e["type"] == "sign")
    views = {}
    for p in people:
        views[p.seat] = (await p.connect(code, stack.b.url))["table"]
    assert views[1]["sign"] == EMOJIS[5]
    assert views[3]["sign"] == EMOJIS[5]
    assert views[0]["sign"] is None
    assert views[2]["sign"] is None
    assert all(v["phase"] == "signing" and v["hand"] == [] for v in views.values())
    for p in people:
        await p.close()


async def test_floor_emissions_vote_reshuffle_and_contre_at_six(stack: Stack) -> None:
    """R12–R14 (floor, emissions on the table's clock), R19–R21 (a vote that passes, then
    the one-reshuffle limit) and R17 (Contre! naming a team at 6 players)."""
    code, people = await table_with(stack.a.url, 6, 6, deals=2, time_scale=0.5)
    for p in people[3:]:
        await p.connect(code, stack.b.url)
    assert (await people[0].rest("POST", f"/api/tables/{code}/start")).is_success
    for p in people:
        await p.wait_event(lambda e: e["type"] == "signing")
        await p.ok("ready")
    for p in people:
        await p.wait_event(lambda e: e["type"] == "round")
    host, other = people[0], people[4]
    # R12, R14: the floor is public; changing it again waits for its cooldown.
    await host.ok("floor", open=True)
    shut = await host.request("floor", open=False)
    assert shut["code"] == "floor_cooldown"
    assert 0 < shut["retry_in"] <= 1000
    assert (await other.request("emit", emoji=EMOJIS[3]))["code"] == "no_floor"
    # R13: the first choice emits at once, then every 5 s (2.5 s here) on the table's clock.
    await host.ok("emit", emoji=EMOJIS[3])
    first = await other.wait_event(lambda e: e["type"] == "emission")
    again = await other.wait_event(lambda e: e["type"] == "emission", after=first["seq"])
    assert (first["seat"], first["emoji"]) == (0, EMOJIS[3])
    assert (again["seat"], again["emoji"]) == (0, EMOJIS[3])
    assert again["at"] - first["at"] >= 2500
    # R19: every other connected human must accept; the requester is no voter.
    await people[1].ok("vote_request")
    vote = await other.wait_event(lambda e: e["type"] == "vote")
    assert vote["by"] == 1
    assert vote["voters"] == [0, 2, 3, 4, 5]
    assert (await people[1].request("vote", accept=True))["code"] == "not_voter"
    for p in people:
        if p.seat != 1:
            await p.ok("vote", accept=True)
    result = await other.wait_event(lambda e: e["type"] == "vote_result")
    assert result["passed"] is True
    for p in people:
        fresh = await p.wait_event(lambda e: e["type"] == "reshuffled")
        assert len(fresh["hand"]) == 4
        assert len(fresh["center"]) == 4
    # R20: one reshuffle per round.
    refused = await people[2].request("vote_request")
    assert refused["code"] == "vote_refused"
    assert refused["reason"] == "already_reshuffled"
    # R17: at 6 players Contre! names an opposing team.
    assert (await host.request("contre"))["code"] == "bad_team"
    assert (await host.request("contre", team=0))["code"] == "bad_team"
    await host.ok("contre", team=2)
    reveal = await other.wait_event(lambda e: e["type"] == "reveal")
    assert reveal["reason"] == "contre"
    assert reveal["by"] == 0
    assert reveal["target_team"] == 2
    assert reveal["scored"] == ([0] if reveal["correct"] else [2])
    for p in people:
        assert not p.problems
        await p.close()
