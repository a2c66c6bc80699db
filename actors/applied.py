"""What one command did to a table (`TableCore.apply`), as the core's rooms read it."""

from __future__ import annotations

from typing import NamedTuple

from actors.protocol import Entry, ErrorBody


class Applied(NamedTuple):
    """The entries it published (its events, and the orders it caused: a seat's connection
    closed), and its refusal when the rules said no (then only the clock's events were
    committed: the command changed nothing)."""

    entries: list[Entry]
    refused: ErrorBody | None = None
