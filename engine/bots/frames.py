"""A bot's command as the client frame PROTOCOL.md names, so a bot can play over the WebSocket
(the Locust users) with the same policy the table actor runs in-process.

Only the commands a seated player sends over `/ws` have a frame; lobby commands go through REST.
"""

from __future__ import annotations

from engine.commands import (
    CallContre,
    CallQuatro,
    CastVote,
    ChooseSign,
    Command,
    Emit,
    NextRound,
    Ready,
    RequestVote,
    SetFloor,
    Swap,
)

Frame = dict[str, str | int | bool]

_BARE: dict[type[Command], str] = {
    Ready: "ready",
    CallQuatro: "quatro",
    RequestVote: "vote_request",
    NextRound: "next_round",
}


def client_frame(command: Command) -> Frame:
    """The `/ws` frame for a play command (without `id`). Raises ValueError for lobby ones."""
    if isinstance(command, Swap):
        return {
            "type": "swap",
            "card": command.card,
            "slot": command.slot,
            "expect": command.expect,
        }
    if isinstance(command, SetFloor):
        return {"type": "floor", "open": command.open}
    if isinstance(command, Emit):
        return {"type": "emit", "emoji": command.emoji}
    if isinstance(command, ChooseSign):
        return {"type": "sign", "emoji": command.emoji}
    if isinstance(command, CallContre):
        return (
            {"type": "contre"} if command.team is None else {"type": "contre", "team": command.team}
        )
    if isinstance(command, CastVote):
        return {"type": "vote", "accept": command.accept}
    name = _BARE.get(type(command))
    if name is None:
        raise ValueError(f"{type(command).__name__} has no WebSocket frame")
    return {"type": name}
