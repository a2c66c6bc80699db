"""The phases a table moves through."""

from enum import StrEnum


class Phase(StrEnum):
    LOBBY = "lobby"
    SIGNING = "signing"
    PLAYING = "playing"
    PAUSE = "pause"
    OVER = "over"
