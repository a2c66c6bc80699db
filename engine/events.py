"""Events: what the table tells, and to whom.

Each event is a frozen value whose fields are exactly the payload PROTOCOL.md names; `to_wire()`
is the one place it becomes JSON-ready. An `Outbound` pairs an event with its audience — the whole
table, one team, or one seat — and the time it happened. Private data (a hand, a team's sign) is
only ever put into events addressed to its owner, or into the reveal.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, Literal

from engine.cards import Card
from engine.seating import team_of

# "watch": whoever watches without a seat (spectators, a replay's public view). It reaches no
# seat: players get the same moment through their own events, with their hand.
Scope = Literal["all", "team", "seat", "watch"]


@dataclass(frozen=True, slots=True)
class Audience:
    scope: Scope
    index: int = -1

    @staticmethod
    def team(k: int) -> Audience:
        return Audience("team", k)

    @staticmethod
    def seat(s: int) -> Audience:
        return Audience("seat", s)

    @property
    def public(self) -> bool:
        """Whether anyone may see it: the whole table, or the watchers (who see what is public
        and nothing else)."""
        return self.scope in ("all", "watch")

    def includes(self, seat: int, players: int) -> bool:
        if self.scope == "all":
            return True
        if self.scope == "seat":
            return self.index == seat
        if self.scope == "watch":
            return False
        return team_of(seat, players) == self.index


ALL = Audience("all")
WATCHERS = Audience("watch")

Wire = None | bool | int | str | list["Wire"] | dict[str, "Wire"]


def _wire(value: object) -> Wire:
    if isinstance(value, Card):
        return value.to_wire()  # type: ignore[return-value]
    if isinstance(value, tuple | list):
        return [_wire(v) for v in value]
    if isinstance(value, Event):
        return value.to_wire()
    assert value is None or isinstance(value, bool | int | str), value
    return value


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


@dataclass(frozen=True, slots=True)
class Event:
    type: ClassVar[str] = ""

    def to_wire(self) -> dict[str, Wire]:
        out: dict[str, Wire] = {"type": self.type}
        for name in _field_names(type(self)):
            out[name] = _wire(getattr(self, name))
        return out


@dataclass(frozen=True, slots=True)
class Outbound:
    to: Audience
    event: Event
    at: int
    # The players the audience reached when the event happened, stamped by the table as each
    # step ends (a seat may change hands later in the same batch: engine.latejoin). None: not
    # stamped, the caller asks `Table.holders` (the seats did not change since).
    holders: tuple[str, ...] | None = None


# Lobby and presence
@dataclass(frozen=True, slots=True)
class SeatChanged(Event):
    type: ClassVar[str] = "seat"
    seat: int
    name: str | None
    kind: str | None
    connected: bool


@dataclass(frozen=True, slots=True)
class SettingsChanged(Event):
    """The host changed the table's settings (engine.settings; an extension): the bot level,
    hints and late joining in the lobby, whether people may watch at any time."""

    type: ClassVar[str] = "settings"
    bot_level: str
    hints: bool
    late_join: str = "ask"
    watchers: bool = True


@dataclass(frozen=True, slots=True)
class ClaimChanged(Event):
    """Someone without a seat asked for a bot's seat during the match (engine.latejoin), the
    host granted it, or the request ended (`name` None: withdrawn, refused, or the seat became
    theirs, which its `seat` event tells)."""

    type: ClassVar[str] = "claim"
    seat: int
    name: str | None
    approved: bool


# Signing
@dataclass(frozen=True, slots=True)
class SigningBegan(Event):
    type: ClassVar[str] = "signing"
    round: int
    deadline: int | None  # None: no clock (a tutorial, engine.tutorial)


@dataclass(frozen=True, slots=True)
class ReadySaid(Event):
    type: ClassVar[str] = "ready"
    seat: int


@dataclass(frozen=True, slots=True)
class SignFixed(Event):
    """To one team only (R5)."""

    type: ClassVar[str] = "sign"
    emoji: str
    by: int | None


@dataclass(frozen=True, slots=True)
class RoundOpened(Event):
    """To one seat only: it carries that seat's hand. Watchers get one with no hand."""

    type: ClassVar[str] = "round"
    round: int
    hand: tuple[Card, ...]
    center: tuple[Card, ...]
    deadline: int | None  # None: no clock (a tutorial)
    redeals: int


# Play
@dataclass(frozen=True, slots=True)
class Swapped(Event):
    type: ClassVar[str] = "swapped"
    seat: int
    slot: int
    placed: Card
    taken: Card


@dataclass(frozen=True, slots=True)
class FloorChanged(Event):
    type: ClassVar[str] = "floor"
    seat: int
    open: bool


@dataclass(frozen=True, slots=True)
class Emitted(Event):
    type: ClassVar[str] = "emission"
    seat: int
    emoji: str


# Vote
@dataclass(frozen=True, slots=True)
class VoteStarted(Event):
    type: ClassVar[str] = "vote"
    by: int
    voters: tuple[int, ...]
    deadline: int


@dataclass(frozen=True, slots=True)
class VoteCast(Event):
    type: ClassVar[str] = "voted"
    seat: int
    accept: bool


@dataclass(frozen=True, slots=True)
class VoteEnded(Event):
    type: ClassVar[str] = "vote_result"
    passed: bool


@dataclass(frozen=True, slots=True)
class Reshuffled(Event):
    """To one seat only: it carries that seat's new hand."""

    type: ClassVar[str] = "reshuffled"
    hand: tuple[Card, ...]
    center: tuple[Card, ...]
    redeals: int


# End of round and match
@dataclass(frozen=True, slots=True)
class Reveal(Event):
    type: ClassVar[str] = "reveal"
    reason: Literal["quatro", "contre", "timeout"]
    by: int | None
    target_team: int | None
    correct: bool | None
    scored: tuple[int, ...]
    scores: tuple[int, ...]
    hands: tuple[tuple[Card, ...], ...]
    carres: tuple[int, ...]
    signs: tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class PauseBegan(Event):
    type: ClassVar[str] = "pause"
    deadline: int | None  # None: no clock (a tutorial)


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    type: ClassVar[str] = "over"
    winners: tuple[int, ...]
    scores: tuple[int, ...]


# Faults (an extension: docs/rules.md, R22's decision)
@dataclass(frozen=True, slots=True)
class Resumed(Event):
    """The table stood still `shift` ms (a fault: its process frozen, restarted, or moved) and
    every clock of the table moved on by as much: the new `deadline` of the phase, of the vote,
    and when the next vote may start. Anything else a client counts down (its cooldowns) moves
    by `shift` too."""

    type: ClassVar[str] = "resumed"
    shift: int
    deadline: int | None
    vote_deadline: int | None
    vote_ready_at: int | None


# The guided round (an extension: engine.tutorial, engine.coach)
@dataclass(frozen=True, slots=True)
class Coached(Event):
    """The learner's next instruction at a tutorial table, to the learner's seat only, and
    worked out from that seat's own view: `card` is a card of their own hand, `slot` a centre
    slot, `emoji` their team's sign or an emoji a floor showed to everyone, `seat` a seat to
    watch. None where the step points at nothing of that kind."""

    type: ClassVar[str] = "tutorial"
    lesson: int
    lessons: int
    step: str
    card: str | None = None
    slot: int | None = None
    emoji: str | None = None
    seat: int | None = None
