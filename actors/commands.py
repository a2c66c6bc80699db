"""The one table of command kinds a table actor accepts, shared by the WebSocket frames and the
REST lobby calls. The gateway never builds engine commands itself: it sends a kind and its
fields, the actor adds the seat of the player who asked."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engine import (
    AddBot,
    CallContre,
    CallQuatro,
    CastVote,
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

Build = Callable[[int, Mapping[str, Any]], Command]

BUILDERS: dict[str, Build] = {
    # WebSocket frames (PROTOCOL.md)
    "ready": lambda s, a: Ready(seat=s),
    "sign": lambda s, a: ChooseSign(seat=s, emoji=a["emoji"]),
    "swap": lambda s, a: Swap(seat=s, card=a["card"], slot=a["slot"], expect=a["expect"]),
    "floor": lambda s, a: SetFloor(seat=s, open=a["open"]),
    "emit": lambda s, a: Emit(seat=s, emoji=a["emoji"]),
    "quatro": lambda s, a: CallQuatro(seat=s),
    "contre": lambda s, a: CallContre(seat=s, team=a.get("team")),
    "vote_request": lambda s, a: RequestVote(seat=s),
    "vote": lambda s, a: CastVote(seat=s, accept=a["accept"]),
    "next_round": lambda s, a: NextRound(seat=s),
    "rematch": lambda s, a: Rematch(seat=s),
    # Lobby (REST, R29)
    "leave_seat": lambda s, a: LeaveSeat(seat=s, target=a["seat"]),
    "add_bot": lambda s, a: AddBot(seat=s, target=a["seat"]),
    "remove_bot": lambda s, a: RemoveBot(seat=s, target=a["seat"]),
    "start": lambda s, a: StartMatch(seat=s),
}
