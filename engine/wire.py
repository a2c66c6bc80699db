"""Commands to and from the wire: the one place where a client frame (or a REST lobby call)
becomes an engine command, and where a command becomes its frame again (bots over `/ws`).

Each kind names its command class and how the frame's fields map onto the command's; `seat` is
never read from a frame — it is always the seat of the player who asked. The edge (the gateway)
does not know that seat: it builds the command with `ASKER`, and the table, which knows who sits
where, puts the asker's seat in (`for_seat`). Commands of someone who may hold no seat (taking
one, asking for a bot's) name the seat asked for instead, and their asker by `player_id`.

This module is the one list of command kinds: the gateway's frame models, the data plane's codec
and the load tests' frames are all checked against it or built from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from engine.commands import (
    SEATLESS,
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
from engine.errors import ErrorCode, Refusal

Frame = dict[str, str | int | bool]

# kind → (command class, {frame field: command field}). Fields that may be absent: OPTIONAL.
_SOCKET_KINDS: dict[str, tuple[type[Command], dict[str, str]]] = {
    "ready": (Ready, {}),
    "sign": (ChooseSign, {"emoji": "emoji"}),
    "swap": (Swap, {"card": "card", "slot": "slot", "expect": "expect"}),
    "floor": (SetFloor, {"open": "open"}),
    "emit": (Emit, {"emoji": "emoji"}),
    "quatro": (CallQuatro, {}),
    "contre": (CallContre, {"team": "team"}),
    "vote_request": (RequestVote, {}),
    "vote": (CastVote, {"accept": "accept"}),
    "next_round": (NextRound, {}),
    "rematch": (Rematch, {}),
}
# The lobby travels over REST (R29); a lobby call names the seat it acts on as `seat`.
_LOBBY_KINDS: dict[str, tuple[type[Command], dict[str, str]]] = {
    "leave_seat": (LeaveSeat, {"seat": "target"}),
    "add_bot": (AddBot, {"seat": "target"}),
    "remove_bot": (RemoveBot, {"seat": "target"}),
    "fill_bots": (FillBots, {}),
    "start": (StartMatch, {}),
    "settings": (
        ChangeSettings,
        {
            "bot_level": "bot_level",
            "hints": "hints",
            "late_join": "late_join",
            "watchers": "watchers",
        },
    ),
    # Joining late: the host answers a request for a bot's seat (engine.latejoin).
    "answer_claim": (AnswerClaim, {"seat": "target", "accept": "accept"}),
    # The guided round: its learner leaves it (engine.coach).
    "end_tutorial": (EndTutorial, {}),
}
# Of someone who may hold no seat here: `seat` is the seat asked for, the asker is `player_id`
# (taken from the session, never from a frame). A claim's `watching` is the table's to say.
_SEATLESS_KINDS: dict[str, tuple[type[Command], dict[str, str]]] = {
    "take_seat": (TakeSeat, {"seat": "seat", "name": "name"}),
    "claim_seat": (ClaimSeat, {"seat": "seat", "name": "name"}),
    "cancel_claim": (CancelClaim, {}),
}
_KINDS = {**_SOCKET_KINDS, **_LOBBY_KINDS, **_SEATLESS_KINDS}
_OPTIONAL = frozenset(
    {
        ("contre", "team"),
        ("settings", "bot_level"),
        ("settings", "hints"),
        ("settings", "watchers"),
        ("settings", "late_join"),
    }
)
_KIND_OF: dict[type[Command], str] = {cls: kind for kind, (cls, _) in _KINDS.items()}

SOCKET_KINDS: frozenset[str] = frozenset(_SOCKET_KINDS)
LOBBY_KINDS: frozenset[str] = frozenset(_LOBBY_KINDS)
SEATLESS_KINDS: frozenset[str] = frozenset(_SEATLESS_KINDS)

# The seat of a command built where the asker's seat is not known (the gateway): the table puts
# the asker's seat in before judging it (`for_seat`).
ASKER = -1


def fields_of(kind: str) -> frozenset[str]:
    """The frame fields of a command kind (besides `type` and `id`); KeyError for no kind."""
    return frozenset(_KINDS[kind][1])


def command_from_frame(
    kind: str, seat: int, fields: Mapping[str, Any], player_id: str = ""
) -> Command:
    """The command that `seat` (or, for a seatless kind, `player_id`) asks for. Raises Refusal
    (`unknown_type`, `bad_message`) for a kind that does not exist or a field that is missing;
    the rules judge the values.

    >>> command_from_frame("swap", ASKER, {"card": "AS", "slot": 2, "expect": "KD"})
    Swap(seat=-1, card='AS', slot=2, expect='KD')
    >>> command_from_frame("take_seat", ASKER, {"seat": 3, "name": "Ana"}, "p-1")
    TakeSeat(seat=3, player_id='p-1', name='Ana')
    """
    spec = _KINDS.get(kind)
    if spec is None:
        raise Refusal(ErrorCode.UNKNOWN_TYPE, f"no such command: {kind[:32]!r}")
    cls, mapping = spec
    args: dict[str, Any] = {"seat": seat}
    if issubclass(cls, SEATLESS):
        args["player_id"] = player_id
    for wire_name, field in mapping.items():
        if wire_name in fields:
            args[field] = fields[wire_name]
        elif (kind, wire_name) not in _OPTIONAL:
            raise Refusal(ErrorCode.BAD_MESSAGE, f"`{kind}` needs `{wire_name}`")
    return cls(**args)


def kind_of(command: Command) -> str:
    """The wire name of a command's kind; KeyError for one the wire does not carry (Connect)."""
    return _KIND_OF[type(command)]


def frame_fields(command: Command) -> dict[str, Any]:
    """The frame fields (besides `type`) that `command_from_frame` reads back into `command`,
    its seat and asker aside: what the data plane carries of a command.

    >>> frame_fields(TakeSeat(seat=3, player_id="p-1", name="Ana"))
    {'seat': 3, 'name': 'Ana'}
    """
    return {
        wire: value
        for wire, field in _KINDS[kind_of(command)][1].items()
        if (value := getattr(command, field)) is not None
    }


def asks_from_a_seat(command: Command) -> bool:
    """Whether `command` is played from the asker's seat (its `seat` is theirs), rather than
    asking for one."""
    return not isinstance(command, SEATLESS)


def for_seat(command: Command, seat: int) -> Command:
    """`command` as played from `seat`: how the table binds a command built with `ASKER`."""
    return dataclasses.replace(command, seat=seat)


def client_frame(command: Command) -> Frame:
    """The `/ws` frame for a play command (without `id`). Raises ValueError for lobby ones."""
    kind = _KIND_OF.get(type(command), "")
    if kind not in _SOCKET_KINDS:
        raise ValueError(f"{type(command).__name__} has no WebSocket frame")
    frame: Frame = {"type": kind}
    for wire_name, field in _SOCKET_KINDS[kind][1].items():
        value = getattr(command, field)
        if value is not None:
            frame[wire_name] = value
    return frame
