"""The tests' player: the kit's WebSocket player (loadtests/player.py), a player as an outside
client would write one from PROTOCOL.md, with its helpers for tables of humans and bots."""

from __future__ import annotations

from loadtests.frames import Frame
from loadtests.player import REST_TIMEOUT_S, WAIT_S, Player, Refused, rigged_deal, table_with

__all__ = ["REST_TIMEOUT_S", "WAIT_S", "Frame", "Player", "Refused", "rigged_deal", "table_with"]
