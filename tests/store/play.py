"""A point scored over real WebSockets, on a rigged deal: what the store's tests need of a table
(a save that scores, then a failover, an upgrade or a crash, and the point still there)."""

from __future__ import annotations

from engine import EMOJIS
from tests.cluster.client import Frame, Player, table_with
from tests.cluster.test_play import card_of, swap_until_ack

PLAYERS = 4
PARTNER = PLAYERS // 2  # seat 0's partner: the rigged deal gives them A A K K
PAUSE_WAIT_S = 60.0  # the pause after a reveal (R23: 30 s, times the table's time scale)


async def rigged_table(base: str, time_scale: float = 0.2) -> tuple[str, list[Player]]:
    """Four seats: three people (seats 0, 1 and 2: seat 0 hosts, 2 is its partner) and an idle
    bot, a rigged deal for each round, the match not started."""
    return await table_with(base, PLAYERS, PARTNER + 1, deals=5, time_scale=time_scale)


async def start(people: list[Player], code: str) -> None:
    host = people[0]
    assert (await host.rest("POST", f"/api/tables/{code}/start")).is_success
    for p in people:
        await p.wait_event(lambda e: e["type"] == "signing")
    await host.ok("sign", emoji=EMOJIS[0])
    await people[1].ok("sign", emoji=EMOJIS[2])


async def ready(people: list[Player]) -> Frame:
    """Once the pause after the last reveal is over (a `signing` past it, on each player's own
    numbering), everyone says ready; the round as the partner was dealt it."""
    after = {}
    for p in people:
        last = p.latest("reveal")
        after[p.seat] = int(last["seq"]) if last else 0
        table = (p.welcome or {}).get("table", {})
        if not (table.get("phase") == "signing" and not p.events[1:]):
            await p.wait_event(lambda e: e["type"] == "signing", PAUSE_WAIT_S, after[p.seat])
    for p in people:
        await p.ok("ready")
    partner = people[PARTNER]
    return await partner.wait_event(lambda e: e["type"] == "round", after=after[partner.seat])


async def quatro(people: list[Player], hand: list[Frame], centre: list[Frame]) -> Frame:
    """The partner's carré from `hand` and `centre` (two swaps, K for A), the host's Quatro!;
    the reveal, as the host saw it."""
    host, partner = people[0], people[PARTNER]
    last = host.latest("reveal")
    after = int(last["seq"]) if last else 0
    hand, centre = list(hand), list(centre)
    while sum(c["rank"] == "A" for c in hand) < 4:
        king = card_of(hand, "K")
        slot = next(i for i, c in enumerate(centre) if c["rank"] == "A")
        await swap_until_ack(partner, king["id"], slot, centre[slot]["id"])
        hand = [c for c in hand if c["id"] != king["id"]] + [centre[slot]]
        centre = [king if i == slot else c for i, c in enumerate(centre)]
    await host.ok("quatro")
    return await host.wait_event(lambda e: e["type"] == "reveal", after=after)


async def score(people: list[Player]) -> Frame:
    """A round from `ready` to the reveal: a point to seat 0's team."""
    dealt = await ready(people)
    return await quatro(people, dealt["hand"], dealt["center"])
