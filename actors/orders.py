"""Orders a table gives its gateways, typed, and the one place they are written and read.

An order is not an event of the game: it tells the gateways what to do with their connections —
`Close` one connection with a code (only the gateway holding it acts), or `Unwatch`: the host
closed the table to watchers. It travels in the table's feed, among the events and sequenced
like them, so that it takes effect exactly between the events before and after it (R30: a seat
that changed hands loses its old connection before that seat's next private event).

On the wire and in the stored log an order is still the event-like dict it always was, with
a `type` starting with "_": `{"type": "_close", "conn", "code"}`, `{"type": "_unwatch"}`, and
the `_kick` of tables saved before `_close` existed, which means `_close` 4409. `order_wire`
writes exactly those dicts and `order_of` reads them, so gateways and table actors of different
versions meet in a rolling upgrade without a handshake, and replays saved by either filter the
same way (`is_order`). Taking orders out of the feed would change the wire and need a version
handshake: an old gateway that missed a `Close` would go on sending a freed seat's private
events to the connection that held it (issue 22).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The WebSocket close codes a table asks a gateway to use on one connection (the gateway's own
# codes are in gateway/errors.py, which names these too).
CLOSE_REPLACED = 4409  # a newer connection of the same player took the seat
CLOSE_SEAT_CHANGED = 4410  # the seat changed hands (freed, kicked, a bot, another player)
CLOSE_SEAT_GIVEN = 4411  # (ext) a watcher's request for a bot's seat came true: hello, seated
# The codes a gateway carries out; a `_close` with any other code is an order it ignores.
CLOSE_CODES = (CLOSE_REPLACED, CLOSE_SEAT_CHANGED, CLOSE_SEAT_GIVEN)


@dataclass(frozen=True, slots=True)
class Close:
    """Close connection `conn` with `code`."""

    conn: str
    code: int


@dataclass(frozen=True, slots=True)
class Unwatch:
    """The host closed the table to watchers: every watching connection goes (4412), and a
    public view from before this order is void."""


Order = Close | Unwatch


def order_wire(order: Order) -> dict[str, Any]:
    """The order as the feed carries it: the same dicts every version writes and reads."""
    if isinstance(order, Close):
        return {"type": "_close", "conn": order.conn, "code": order.code}
    return {"type": "_unwatch"}


def is_order(event: dict[str, Any]) -> bool:
    """Whether a feed entry's wire is an order (any `type` starting with "_", also one of a
    later version this one does not know): never forwarded to a client, never in a replay."""
    kind = event.get("type")
    return isinstance(kind, str) and kind.startswith("_")


def order_of(event: dict[str, Any]) -> Order | None:
    """The order this version carries out, or None: for an event, and for an order it does not
    know or a `_close` with a code it does not honour (`is_order` still keeps those from
    clients). The legacy `_kick` is `Close` 4409."""
    kind = event.get("type")
    if kind in ("_close", "_kick"):
        code = event.get("code", CLOSE_REPLACED)
        if code not in CLOSE_CODES:
            return None
        return Close(str(event.get("conn")), int(code))
    if kind == "_unwatch":
        return Unwatch()
    return None
