"""Random play for the property and determinism tests.

A game is a list of steps; each step is three small integers (drawn by hypothesis, so failures
shrink) that pick what happens: the clock moves, someone connects or leaves, a malformed or
out-of-place command arrives, or a seat sends one of the commands its own view allows
(`engine.legal`). Every command is recorded with its time, so a game can be replayed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from engine import (
    EMOJIS,
    AddBot,
    CallContre,
    CallQuatro,
    CastVote,
    ChooseSign,
    Command,
    Connect,
    Disconnect,
    Emit,
    LeaveSeat,
    NextRound,
    Outbound,
    Ready,
    Refusal,
    Rematch,
    RemoveBot,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.legal import legal_commands

Step = tuple[int, int, int]


class Advance:
    """The log's mark for "the clock moved"; distinct from any command, even a junk one."""


ADVANCE = Advance()
LogEntry = tuple[int, Command | Advance]
DURATIONS = (0, 1, 250, 999, 1_000, 2_000, 4_999, 5_000, 20_000, 30_000, 180_000)

# Values of every wrong type, and right types with wrong values.
JUNK: tuple[Any, ...] = (
    None,
    True,
    False,
    -1,
    4,
    99,
    2**70,
    1.5,
    float("nan"),
    "",
    " ",
    "c0",
    "c999",
    "0",
    "🙂",
    EMOJIS[0],
    EMOJIS[0] * 2,
    [],
    ["c0"],
    {},
    {"id": "c0"},
    ("c0",),
    b"c0",
    object(),
)

COMMAND_FIELDS: tuple[tuple[type[Command], tuple[str, ...]], ...] = (
    (TakeSeat, ("player_id", "name")),
    (LeaveSeat, ("target",)),
    (AddBot, ("target",)),
    (RemoveBot, ("target",)),
    (StartMatch, ()),
    (Rematch, ()),
    (Connect, ()),
    (Disconnect, ()),
    (Ready, ()),
    (ChooseSign, ("emoji",)),
    (Swap, ("card", "slot", "expect")),
    (SetFloor, ("open",)),
    (Emit, ("emoji",)),
    (CallQuatro, ()),
    (CallContre, ("team",)),
    (RequestVote, ()),
    (CastVote, ("accept",)),
    (NextRound, ()),
)


def steps_from(raw: bytes) -> list[Step]:
    """Five bytes a step: cheap for hypothesis to draw and to shrink."""
    return [
        (raw[i], raw[i + 1] | raw[i + 2] << 8, raw[i + 3] | raw[i + 4] << 8)
        for i in range(0, len(raw) - 4, 5)
    ]


def junk_command(a: int, b: int) -> Any:
    """A command of any kind whose seat and fields come from JUNK (or a plausible seat); every
    combination of wrong types is reachable."""
    if a % 17 == 0:
        return JUNK[b % len(JUNK)]  # not a command at all
    cls, names = COMMAND_FIELDS[a % len(COMMAND_FIELDS)]
    values = [b % 9 - 1 if (b >> 4) % 2 else JUNK[(b >> 5) % len(JUNK)]]
    values += [JUNK[(b >> (7 + 3 * i)) % len(JUNK)] for i in range(len(names))]
    return cls(**dict(zip(("seat", *names), values, strict=True)))


def wire(o: Outbound) -> str:
    return json.dumps(
        [o.to.scope, o.to.index, o.event.to_wire(), o.at], sort_keys=True, ensure_ascii=False
    )


@dataclass
class Record:
    """What one call to the table produced: its events, or the refusal and its events."""

    action: str  # "advance" or the command's repr
    now: int
    out: list[Outbound]
    refusal: Refusal | None = None

    def image(self) -> list[str]:
        lines = [self.action, str(self.now), *(wire(o) for o in self.out)]
        if self.refusal is not None:
            lines.append(json.dumps(self.refusal.to_wire(), sort_keys=True))
        return lines


@dataclass
class RandomGame:
    """A table plus everything needed to drive and replay it."""

    players: int
    seed: int
    humans: frozenset[int]
    table: Table = field(init=False)
    now: int = 1_000
    log: list[LogEntry] = field(default_factory=list)
    stale: list[Command] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.table = Table(TableConfig(players=self.players, seed=self.seed))

    # -- recording ----------------------------------------------------------------------------
    def send(self, command: Command) -> Record:
        self.log.append((self.now, command))
        return apply(self.table, command, self.now)

    def advance(self) -> Record:
        self.log.append((self.now, ADVANCE))
        return Record("advance", self.now, self.table.advance(self.now))

    def setup(self) -> Iterator[Record]:
        for s in sorted(self.humans | {0}):
            yield self.send(TakeSeat(seat=s, player_id=f"p{s}", name=f"P{s}"))
            yield self.send(Connect(seat=s))
        for s in range(self.players):
            if s not in self.humans | {0}:
                yield self.send(AddBot(seat=0, target=s))
        yield self.send(StartMatch(seat=0))

    def play(self, step: Step) -> Iterator[Record]:
        a, b, c = step
        n = self.players
        seat = b % n
        self.now += c % 700
        kind = a % 16
        if kind <= 2:
            self.now += DURATIONS[c % len(DURATIONS)]
            yield self.advance()
        elif kind == 3:
            yield self.send(
                Disconnect(seat=seat) if self.table.is_connected(seat) else Connect(seat)
            )
        elif kind == 4:
            yield self.send(junk_command(a // 16, b))
        elif kind == 5 and self.stale:
            # a command that was allowed a while ago: races, cooldowns, a second answer
            yield self.send(self.stale[(c // 7) % len(self.stale)])
        else:
            options = self.options(seat)
            if kind <= 8:  # the first option: ready, a swap, the next round, a rematch
                options = options[:1]
            elif kind <= 10:  # a call, so rounds end and matches finish
                options = [o for o in options if isinstance(o, CallQuatro | CallContre)]
            if options:
                self.stale = options
                yield self.send(options[(c // 7) % len(options)])
            else:
                self.now += DURATIONS[c % len(DURATIONS)]
                yield self.advance()

    def options(self, seat: int) -> list[Command]:
        if self.table.seat_kind(seat) is None:
            return []
        view = self.table.view(seat)
        return legal_commands(view, seat, self.now)


def apply(table: Table, command: Command, now: int) -> Record:
    try:
        return Record(repr(command), now, table.apply(command, now))
    except Refusal as refusal:
        return Record(repr(command), now, refusal.events, refusal)


def replay(table: Table, log: list[LogEntry], each: Callable[[Record], None]) -> None:
    """Drive `table` through a recorded log, handing every record to `each`."""
    for now, command in log:
        if isinstance(command, Advance):
            each(Record("advance", now, table.advance(now)))
        else:
            each(apply(table, command, now))
