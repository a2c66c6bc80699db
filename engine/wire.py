"""Commands to and from the wire: the one place where a client frame (or a REST lobby call)
becomes an engine command, and where a command becomes its frame again (bots over `/ws`).

Each kind names its command class and how the frame's fields map onto the command's; `seat` is
never read from a frame — it is always the seat of the player who asked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.commands import (
    AddBot,
    AnswerClaim,
    CallContre,
    CallQuatro,
    CastVote,
    ChangeSettings,
    ChooseSign,
    Command,
    Emit,
    LeaveSeat,
    NextRound,
    Ready,
    Rematch,
    RemoveBot,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
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
}
_KINDS = {**_SOCKET_KINDS, **_LOBBY_KINDS}
_OPTIONAL = frozenset(
    {
        ("contre", "team"),
        ("settings", "bot_level"),
        ("settings", "hints"),
        ("settings", "watchers"),
        ("settings", "late_join"),
    }
)
_KIND_OF: dict[type[Command], str] = {cls: kind for kind, (cls, _) in _SOCKET_KINDS.items()}

SOCKET_KINDS: frozenset[str] = frozenset(_SOCKET_KINDS)
LOBBY_KINDS: frozenset[str] = frozenset(_LOBBY_KINDS)


def fields_of(kind: str) -> frozenset[str]:
    """The frame fields of a command kind (besides `type` and `id`); KeyError for no kind."""
    return frozenset(_KINDS[kind][1])


def command_from_frame(kind: str, seat: int, fields: Mapping[str, Any]) -> Command:
    """The command that `seat` asks for. Raises Refusal (`unknown_type`, `bad_message`) for a
    kind that does not exist or a field that is missing; the rules judge the values."""
    spec = _KINDS.get(kind)
    if spec is None:
        raise Refusal(ErrorCode.UNKNOWN_TYPE, f"no such command: {kind!r}")
    cls, mapping = spec
    args: dict[str, Any] = {}
    for wire_name, field in mapping.items():
        if wire_name in fields:
            args[field] = fields[wire_name]
        elif (kind, wire_name) not in _OPTIONAL:
            raise Refusal(ErrorCode.BAD_MESSAGE, f"`{kind}` needs `{wire_name}`")
    return cls(seat=seat, **args)


def client_frame(command: Command) -> Frame:
    """The `/ws` frame for a play command (without `id`). Raises ValueError for lobby ones."""
    kind = _KIND_OF.get(type(command))
    if kind is None:
        raise ValueError(f"{type(command).__name__} has no WebSocket frame")
    frame: Frame = {"type": kind}
    for wire_name, field in _SOCKET_KINDS[kind][1].items():
        value = getattr(command, field)
        if value is not None:
            frame[wire_name] = value
    return frame
