"""A table with a hand-cranked clock, for tests that read like the rules.

`Game` seats players, starts the match and keeps the time; every event the table sends is kept
in `log`, so a test can ask what a seat was told. Nothing here sleeps: `game.wait(ms)` moves the
injected clock and fires what fell due.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from engine import (
    AddBot,
    Command,
    Connect,
    DealSpec,
    Event,
    Outbound,
    Phase,
    Ready,
    Refusal,
    StartMatch,
    Swap,
    Table,
    TableConfig,
    TakeSeat,
    deck_for,
    team_seats,
)

Wire = dict[str, Any]

SIGNING = 30_000
SWAP_COOLDOWN = 2_000
EMISSION_PERIOD = 5_000
FLOOR_COOLDOWN = 2_000
VOTE = 20_000
VOTE_GAP = 30_000
ROUND = 180_000
PAUSE = 30_000


def ranks(players: int) -> list[str]:
    return list(dict.fromkeys(card.rank for card in deck_for(players)))


def deal(players: int, carres: dict[int, str] | None = None) -> DealSpec:
    """A rigged deal (R4 forbids dealing a carré) where each seat named in `carres` holds two of
    the given rank and the other two lie in the centre, so two swaps make the carré
    (`Game.make_carre`). At most two such seats; no hand gets three of a rank."""
    carres = carres or {}
    assert len(carres) <= 2
    pool = [r for r in ranks(players) for _ in range(4)]
    for rank in carres.values():
        for _ in range(4):
            pool.remove(rank)
    holders: list[int | str] = [*range(players), "center"]
    filled: dict[int | str, list[str]] = {h: [] for h in holders}
    for seat, rank in carres.items():
        filled[seat] += [rank, rank]
        filled["center"] += [rank, rank]
    turn = 0
    for rank in pool:
        for _ in range(len(holders)):
            holder = holders[turn % len(holders)]
            turn += 1
            cards = filled[holder]
            if len(cards) < 4 and (holder == "center" or cards.count(rank) < 2):
                cards.append(rank)
                break
        else:
            raise AssertionError("no room for a card")
    return DealSpec(
        hands=tuple(tuple(filled[s]) for s in range(players)), center=tuple(filled["center"])
    )


def wire(outbound: Outbound) -> str:
    return json.dumps(
        [outbound.to.scope, outbound.to.index, outbound.event.to_wire(), outbound.at],
        sort_keys=True,
        ensure_ascii=False,
    )


def state_image(table: Table) -> str:
    return json.dumps(table.to_snapshot(), sort_keys=True)


class Game:
    """One table, its clock and everything it said."""

    def __init__(
        self,
        players: int = 4,
        *,
        humans: Iterable[int] | None = None,
        connected: Iterable[int] | None = None,
        deals: Sequence[DealSpec] = (),
        seed: int = 0,
        time_scale: float = 1.0,
        start: bool = True,
    ) -> None:
        """`humans` are the seats taken by people (default: all), the others get bots;
        `connected` are the humans with a live connection (default: all humans)."""
        self.table = Table(
            TableConfig(players=players, seed=seed, deals=tuple(deals), time_scale=time_scale)
        )
        self.players = players
        self.now = 1_000
        self.log: list[Outbound] = []
        humans = set(range(players) if humans is None else humans) | {0}
        self.humans = sorted(humans)
        for s in self.humans:
            self.do(TakeSeat(seat=s, player_id=f"p{s}", name=f"Player {s}"))
        for s in range(players):
            if s not in humans:
                self.do(AddBot(seat=0, target=s))
        for s in self.humans if connected is None else connected:
            self.do(Connect(seat=s))
        if start:
            self.do(StartMatch(seat=0))

    # -- driving ------------------------------------------------------------------------------
    def do(self, command: Command) -> list[Outbound]:
        out = self.table.apply(command, self.now)
        self.log += out
        return out

    def refuse(self, command: Command) -> Refusal:
        """Apply a command the rules must refuse; check it changed nothing."""
        self.log += self.table.advance(self.now)
        before = state_image(self.table)
        try:
            self.table.apply(command, self.now)
        except Refusal as refusal:
            assert state_image(self.table) == before, "a refused command changed the table"
            return refusal
        raise AssertionError(f"{command} was accepted")

    def wait(self, ms: int) -> list[Outbound]:
        self.now += ms
        out = self.table.advance(self.now)
        self.log += out
        return out

    def wait_until(self, at: int) -> list[Outbound]:
        return self.wait(at - self.now)

    def make_carre(self, seat: int, rank: str) -> None:
        """Swap the centre's cards of `rank` into `seat`'s hand (after `deal(.., {seat: rank})`),
        waiting out the swap cooldown (R10) between swaps."""
        for slot, card in enumerate(self.center()):
            if card["rank"] != rank:
                continue
            give = next(c for c in self.hand(seat) if c["rank"] != rank)
            ready_at = self.view(seat)["swap_ready_at"]
            if ready_at > self.now:
                self.wait_until(ready_at)
            self.do(Swap(seat=seat, card=give["id"], slot=slot, expect=card["id"]))
        assert self.hand_ranks(seat) == [rank] * 4

    def open_round(self) -> list[Outbound]:
        """Every connected human says ready, so the round opens (R6)."""
        assert self.phase() is Phase.SIGNING, self.phase()
        out: list[Outbound] = []
        for s in self.humans:
            if self.table.is_connected(s) and not self.view(s)["seats"][s]["ready"]:
                out += self.do(Ready(seat=s))
        assert self.phase() is Phase.PLAYING
        return out

    # -- reading ------------------------------------------------------------------------------
    def phase(self) -> Phase:
        """A call, not a property, so type checkers re-read it after every command."""
        return self.table.phase

    def view(self, seat: int | None) -> Wire:
        return self.table.view(seat)

    def hand(self, seat: int) -> list[Wire]:
        return list(self.view(seat)["hand"])

    def hand_ranks(self, seat: int) -> list[str]:
        return sorted(card["rank"] for card in self.hand(seat))

    def center(self) -> list[Wire]:
        return list(self.view(None)["center"])

    def since(self, mark: int, type_: str | None = None) -> list[Outbound]:
        return [o for o in self.log[mark:] if type_ is None or o.event.type == type_]

    def told(self, seat: int, type_: str | None = None) -> list[Wire]:
        """What `seat` was sent (the payloads), optionally of one event type."""
        return [
            o.event.to_wire()
            for o in self.log
            if o.to.includes(seat, self.players) and (type_ is None or o.event.type == type_)
        ]

    def last(self, type_: str) -> Event:
        return next(o.event for o in reversed(self.log) if o.event.type == type_)

    def team(self, k: int) -> tuple[int, int]:
        return team_seats(k, self.players)


def types(outbound: Iterable[Outbound]) -> list[str]:
    return [o.event.type for o in outbound]


def payloads(outbound: Iterable[Outbound], type_: str) -> list[Wire]:
    return [o.event.to_wire() for o in outbound if o.event.type == type_]
