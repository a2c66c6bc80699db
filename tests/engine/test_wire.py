"""Frames and commands meet in one place (engine.wire): every socket kind survives the round trip,
and a frame missing a field, or of no known kind, is refused before the rules are asked."""

from __future__ import annotations

from typing import Any

import pytest

from engine import AddBot, CallContre, FillBots, LeaveSeat, Refusal, StartMatch, Swap
from engine.errors import ErrorCode
from engine.wire import LOBBY_KINDS, SOCKET_KINDS, client_frame, command_from_frame

FRAMES: list[dict[str, Any]] = [
    {"type": "ready"},
    {"type": "sign", "emoji": "🐝"},
    {"type": "swap", "card": "c3", "slot": 2, "expect": "c9"},
    {"type": "floor", "open": True},
    {"type": "emit", "emoji": "🦉"},
    {"type": "quatro"},
    {"type": "contre", "team": 2},
    {"type": "contre"},
    {"type": "vote_request"},
    {"type": "vote", "accept": False},
    {"type": "next_round"},
    {"type": "rematch"},
]


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f"{f['type']}-{len(f)}")
def test_every_socket_frame_round_trips(frame: dict[str, Any]) -> None:
    command = command_from_frame(frame["type"], 3, frame)
    assert command.seat == 3
    assert client_frame(command) == frame


def test_every_socket_kind_is_covered_above() -> None:
    assert {f["type"] for f in FRAMES} == SOCKET_KINDS


def test_the_seat_comes_from_the_caller_never_from_the_frame() -> None:
    command = command_from_frame("swap", 1, {"card": "c0", "slot": 0, "expect": "c4", "seat": 5})
    assert command == Swap(seat=1, card="c0", slot=0, expect="c4")


def test_lobby_calls_name_their_target_as_seat() -> None:
    assert command_from_frame("add_bot", 0, {"seat": 2}) == AddBot(seat=0, target=2)
    assert command_from_frame("leave_seat", 1, {"seat": 1}) == LeaveSeat(seat=1, target=1)
    assert command_from_frame("start", 0, {}) == StartMatch(seat=0)
    assert command_from_frame("fill_bots", 0, {}) == FillBots(seat=0)
    kinds = {
        "leave_seat",
        "add_bot",
        "remove_bot",
        "fill_bots",
        "start",
        "settings",
        "answer_claim",
        "end_tutorial",
    }
    assert kinds == LOBBY_KINDS
    with pytest.raises(ValueError, match="AddBot"):
        client_frame(AddBot(seat=0, target=1))


def test_contre_without_a_team_is_left_to_the_rules() -> None:
    assert command_from_frame("contre", 0, {}) == CallContre(seat=0, team=None)


def test_unknown_kind_and_missing_field_are_refused() -> None:
    with pytest.raises(Refusal) as unknown:
        command_from_frame("teleport", 0, {})
    assert unknown.value.code is ErrorCode.UNKNOWN_TYPE
    with pytest.raises(Refusal) as missing:
        command_from_frame("swap", 0, {"card": "c1", "slot": 0})
    assert missing.value.code is ErrorCode.BAD_MESSAGE
    assert "expect" in missing.value.message
