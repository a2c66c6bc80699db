"""Quatro's rules, pure: time and a seeded RNG come in, events addressed to seats come out.

Nothing here does I/O, reads a clock or touches global randomness. The public surface:

    >>> from engine import Table, TableConfig, StartMatch, TakeSeat, AddBot
    >>> table = Table(TableConfig(players=4, seed=7))
    >>> _ = table.apply(TakeSeat(seat=0, player_id="p0", name="Ana"), now=0)
    >>> for s in (1, 2, 3):
    ...     _ = table.apply(AddBot(seat=0, target=s), now=0)
    >>> [o.event.type for o in table.apply(StartMatch(seat=0), now=0)][:2]
    ['signing', 'ready']
"""

from engine.cards import RANKS, SUITS, Card, deck_for, has_carre
from engine.commands import (
    AddBot,
    AnswerClaim,
    CallContre,
    CallQuatro,
    CancelClaim,
    CastVote,
    ChangeSettings,
    ChooseSign,
    ClaimSeat,
    Command,
    Connect,
    Disconnect,
    Emit,
    EndTutorial,
    FillBots,
    LeaveSeat,
    NextRound,
    Ready,
    Rematch,
    RemoveBot,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
    TakeSeat,
)
from engine.config import DealSpec, ScenarioError, TableConfig, Timings
from engine.errors import ErrorCode, Refusal
from engine.events import ALL, WATCHERS, Audience, Event, Outbound
from engine.phase import Phase
from engine.seating import partner, team_of, team_seats, teams
from engine.signs import EMOJIS
from engine.table import Table

__all__ = [
    "ALL",
    "EMOJIS",
    "RANKS",
    "SUITS",
    "WATCHERS",
    "AddBot",
    "AnswerClaim",
    "Audience",
    "CallContre",
    "CallQuatro",
    "CancelClaim",
    "Card",
    "CastVote",
    "ChangeSettings",
    "ChooseSign",
    "ClaimSeat",
    "Command",
    "Connect",
    "DealSpec",
    "Disconnect",
    "Emit",
    "EndTutorial",
    "ErrorCode",
    "Event",
    "FillBots",
    "LeaveSeat",
    "NextRound",
    "Outbound",
    "Phase",
    "Ready",
    "Refusal",
    "Rematch",
    "RemoveBot",
    "RequestVote",
    "ScenarioError",
    "SetFloor",
    "StartMatch",
    "Swap",
    "Table",
    "TableConfig",
    "TakeSeat",
    "Timings",
    "deck_for",
    "has_carre",
    "partner",
    "team_of",
    "team_seats",
    "teams",
]
