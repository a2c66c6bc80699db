"""A finished table's replay, read back from its log in Redis (`keys.replay`), cut to what one
audience may see (R30). Pure: the gateway reads the list and calls these.

- The public view holds the events sent to everyone and those sent to watchers: what a
  spectator saw live — every reveal with the hands it showed, never a hand or a sign before.
- A player's own view holds the public events (not the watchers' copies) and the private ones
  that reached them live: those whose `holders` name them (their seat's deals, their team's
  sign), exactly what `gateway.connection.Connection.sees` lets through.
- Only finished matches are served: the log is cut after its last `over`, so the match under
  way (a rematch) stays unseen until it ends, in either view.
- A table its host closed to watchers, at any moment up to that cut, has no public view: what
  nobody could watch live is not shown to everyone afterwards. Its players keep their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from actors.orders import is_order
from actors.protocol import Entry, entry_from_json


class NotFinished(Exception):
    """No match of this table has ended yet."""


class NeverSeated(Exception):
    """The player asked for their own view of a table where nothing private ever reached them."""


class ClosedToWatchers(Exception):
    """The public view of a table whose host closed it to watchers was asked for."""


@dataclass(frozen=True)
class Replay:
    view: str  # "public" or "own"
    seat: int | None  # the own view's seat (the last one dealt to), None for the public view
    events: list[dict[str, Any]]  # wire events with `at`, in the table's order
    matches: list[tuple[int, int]]  # each finished match: indexes of its first and last event


def read(raw: Iterable[str]) -> list[Entry]:
    return [entry_from_json(json.loads(x)) for x in raw]


def finished(entries: list[Entry]) -> list[Entry]:
    """The entries up to the last `over` (NotFinished when there is none)."""
    last = max((i for i, e in enumerate(entries) if e.wire.get("type") == "over"), default=None)
    if last is None:
        raise NotFinished
    return entries[: last + 1]


def visible(entry: Entry, player_id: str | None) -> bool:
    """Whether the public view (player_id None) or a player's own view holds this entry. The
    table's orders to gateways (actors/orders.py: they name connections) are nobody's."""
    if is_order(entry.wire) or entry.wire.get("type") == "ratings":
        # A match's rating changes are told at the table after it (actors/results.py): the
        # replay plays the match; its lineups (gateway/routes/replays.py) name who played it.
        return False
    if entry.scope == "all":
        return True
    if player_id is None:
        return entry.scope == "watch"
    return entry.scope != "watch" and player_id in entry.holders


def closes_to_watchers(entry: Entry) -> bool:
    """A table starts open to watchers; only its host's `settings` change closes it."""
    return entry.wire.get("type") == "settings" and entry.wire.get("watchers") is False


def build(entries: list[Entry], player_id: str | None = None) -> Replay:
    """The replay of the finished matches in `entries`, for the public (player_id None) or
    for that player. NotFinished before the first `over`; NeverSeated for an own view that
    would hold nothing private; ClosedToWatchers for the public view of a table closed to
    watchers at any moment of it."""
    served = finished(entries)
    if player_id is None and any(closes_to_watchers(e) for e in served):
        raise ClosedToWatchers
    kept = [e for e in served if visible(e, player_id)]
    seat = None
    if player_id is not None:
        dealt = [e.scope_index for e in kept if e.scope == "seat"]
        if not dealt:
            raise NeverSeated
        seat = dealt[-1]
    events = [{**e.wire, "at": e.at} for e in kept]
    matches: list[tuple[int, int]] = []
    first = 0
    for i, ev in enumerate(events):
        if ev.get("type") == "over":
            matches.append((first, i))
            first = i + 1
    return Replay("public" if player_id is None else "own", seat, events, matches)
