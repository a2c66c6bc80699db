"""Bots' commands become the client frames PROTOCOL.md names."""

from __future__ import annotations

import pytest

from engine import (
    AddBot,
    CallContre,
    CallQuatro,
    CastVote,
    ChooseSign,
    Emit,
    NextRound,
    Ready,
    RequestVote,
    SetFloor,
    Swap,
)
from engine.wire import client_frame


def test_every_play_command_has_its_protocol_frame() -> None:
    assert client_frame(Swap(seat=1, card="c3", slot=2, expect="c9")) == {
        "type": "swap",
        "card": "c3",
        "slot": 2,
        "expect": "c9",
    }
    assert client_frame(SetFloor(seat=1, open=False)) == {"type": "floor", "open": False}
    assert client_frame(Emit(seat=1, emoji="🐝")) == {"type": "emit", "emoji": "🐝"}
    assert client_frame(ChooseSign(seat=1, emoji="🐝")) == {"type": "sign", "emoji": "🐝"}
    assert client_frame(CallContre(seat=1, team=2)) == {"type": "contre", "team": 2}
    assert client_frame(CallContre(seat=1)) == {"type": "contre"}
    assert client_frame(CallQuatro(seat=1)) == {"type": "quatro"}
    assert client_frame(Ready(seat=1)) == {"type": "ready"}
    assert client_frame(RequestVote(seat=1)) == {"type": "vote_request"}
    assert client_frame(CastVote(seat=1, accept=True)) == {"type": "vote", "accept": True}
    assert client_frame(NextRound(seat=0)) == {"type": "next_round"}


def test_lobby_commands_have_no_frame() -> None:
    with pytest.raises(ValueError, match="AddBot"):
        client_frame(AddBot(seat=0, target=1))
