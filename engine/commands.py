"""Commands: what a seat asks of the table. Small frozen values; `seat` is always who asks.

Lobby commands that act on another seat name it `target`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Command:
    seat: int


# Lobby (R29) and presence (R24, R25)
@dataclass(frozen=True, slots=True)
class TakeSeat(Command):
    player_id: str
    name: str


@dataclass(frozen=True, slots=True)
class LeaveSeat(Command):
    target: int


@dataclass(frozen=True, slots=True)
class AddBot(Command):
    target: int


@dataclass(frozen=True, slots=True)
class RemoveBot(Command):
    target: int


@dataclass(frozen=True, slots=True)
class FillBots(Command):
    """The host puts a bot in every seat still empty, in one go."""


@dataclass(frozen=True, slots=True)
class ChangeSettings(Command):
    """The host sets the table's bot level, hints and watchers (engine.settings); None keeps a
    value."""

    bot_level: str | None = None
    hints: bool | None = None
    watchers: bool | None = None
    late_join: str | None = None


# Joining late (an extension of R29): `seat` is the bot's seat asked for, as in TakeSeat; the
# one who asks holds no seat, so they are named by `player_id`.
@dataclass(frozen=True, slots=True)
class ClaimSeat(Command):
    """`watching`: whether the one who asks watches the table where the seat can reach them
    (the table actor knows; a request nobody is there to take up would seat an empty chair)."""

    player_id: str
    name: str
    watching: bool = True


@dataclass(frozen=True, slots=True)
class CancelClaim(Command):
    player_id: str


@dataclass(frozen=True, slots=True)
class AnswerClaim(Command):
    """The host grants (or refuses) the request for seat `target`."""

    target: int
    accept: bool


@dataclass(frozen=True, slots=True)
class StartMatch(Command):
    pass


@dataclass(frozen=True, slots=True)
class Rematch(Command):
    """After the match is over, the host starts a new one with the same seats."""


@dataclass(frozen=True, slots=True)
class Connect(Command):
    pass


@dataclass(frozen=True, slots=True)
class Disconnect(Command):
    pass


# Signing (R5, R6)
@dataclass(frozen=True, slots=True)
class Ready(Command):
    pass


@dataclass(frozen=True, slots=True)
class ChooseSign(Command):
    emoji: str


# Play (R9–R14)
@dataclass(frozen=True, slots=True)
class Swap(Command):
    card: str
    slot: int
    expect: str


@dataclass(frozen=True, slots=True)
class SetFloor(Command):
    open: bool


@dataclass(frozen=True, slots=True)
class Emit(Command):
    emoji: str


# Calls (R15–R18)
@dataclass(frozen=True, slots=True)
class CallQuatro(Command):
    pass


@dataclass(frozen=True, slots=True)
class CallContre(Command):
    team: int | None = None


# Reshuffle vote (R19–R21)
@dataclass(frozen=True, slots=True)
class RequestVote(Command):
    pass


@dataclass(frozen=True, slots=True)
class CastVote(Command):
    accept: bool


# Pause (R23)
@dataclass(frozen=True, slots=True)
class NextRound(Command):
    pass


# The guided round (engine.coach)
@dataclass(frozen=True, slots=True)
class EndTutorial(Command):
    """The learner leaves their tutorial before its end: the match is over, nobody won."""


# Commands of someone who may hold no seat at the table: their `seat` is the seat asked for (or
# none, -1), and the asker is named by `player_id`. Every other command is played from `seat`.
SEATLESS: tuple[type[Command], ...] = (TakeSeat, ClaimSeat, CancelClaim)
