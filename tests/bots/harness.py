"""Tables where some seats are bots and the test plays the others by hand, on a simulated clock.

The bots are run by `engine.tournament.Runner`, which feeds each bot only the events addressed
to its seat: the same path the tournament and the table actor use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine import AddBot, Command, Connect, DealSpec, StartMatch, Table, TableConfig, TakeSeat
from engine.bots import make_bot
from engine.events import Outbound
from engine.legal import SeatView
from engine.settings import DEFAULT_BOT_LEVEL
from engine.tournament import Listener, Runner


@dataclass
class Log:
    """What happened, in order: commands the bots sent and every event, with times."""

    sent: list[tuple[int, int, Command, str | None]] = field(default_factory=list)
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def commands_of(self, seat: int, kind: type[Command]) -> list[tuple[int, Command]]:
        return [(at, c) for at, s, c, _ in self.sent if s == seat and isinstance(c, kind)]

    def of_type(self, kind: str) -> list[tuple[int, dict[str, Any]]]:
        return [(at, e) for at, e in self.events if e["type"] == kind]


def deal(hands: Sequence[str], center: str) -> DealSpec:
    """A rigged deal written as space-separated ranks: deal(["K K Q J", …], "K K Q 10")."""
    return DealSpec(hands=tuple(tuple(h.split()) for h in hands), center=tuple(center.split()))


def table_with(
    players: int,
    bots: Mapping[int, str],
    *,
    deals: Iterable[DealSpec] = (),
    seed: int = 0,
    speed: float = 1.0,
    connected: Iterable[int] = (),
    bot_level: str = DEFAULT_BOT_LEVEL,
    listeners: Sequence[Listener] = (),
) -> tuple[Runner, Log]:
    """Bots in the given seats, placeholder humans (disconnected unless listed) elsewhere; the
    match is started at t=0, with `listeners` told every event from the start."""
    table = Table(TableConfig(players=players, seed=seed, deals=tuple(deals)))
    for s in range(players):
        if s == 0 or s not in bots:
            table.apply(TakeSeat(seat=s, player_id=f"p{s}", name=f"P{s}"), 0)
    for s in bots:
        if s != 0:
            table.apply(AddBot(seat=0, target=s), 0)
    for s in connected:
        table.apply(Connect(seat=s), 0)
    log = Log()
    runner = Runner(
        table,
        {
            s: make_bot(kind, s, players, seed=seed * 100 + s, speed=speed, bot_level=bot_level)
            for s, kind in bots.items()
        },
        seed=seed,
        on_command=lambda s, c, code, at: log.sent.append((at, s, c, code)),
    )

    def listen(o: Outbound, wire: dict[str, Any]) -> None:
        log.events.append((o.at, wire))

    runner.listeners.append(listen)
    runner.listeners.extend(listeners)
    runner.act(0, StartMatch(seat=0))
    return runner, log


def seen_by(table: Table, seat: int) -> SeatView:
    """The seat's view, typed."""
    return SeatView.parse(table.view(seat), seat)


def card_ids(table: Table, seat: int, rank: str, where: str = "hand") -> list[str]:
    """Ids of the cards of `rank` in a seat's hand (or, with where="center", in the centre)."""
    sv = seen_by(table, seat)
    cards = sv.hand if where == "hand" else sv.center
    return [c.id for c in cards if c.rank == rank]


def slot_of(table: Table, card_id: str) -> int:
    return next(i for i, c in enumerate(seen_by(table, 0).center) if c.id == card_id)
