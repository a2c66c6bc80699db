"""The hub carries out the table's orders as `actors/orders.py` reads them, and never forwards
one: on a real hub and real connections (no network; the fan-out touches neither the link nor
the directory, as in tests/cluster/test_fanout.py). The orders are written with the same
`order_wire` the table core uses, and the legacy and unknown ones as old or later tables
write them."""

from __future__ import annotations

import json
from typing import Any, cast

from actors.directory import Directory
from actors.orders import Close, Unwatch, order_wire
from actors.protocol import WATCHING, Entry
from gateway.connection import Close as Closing
from gateway.connection import Connection
from gateway.hub import TableHub
from gateway.table_link import Link


def sent(conn: Connection) -> list[Any]:
    out: list[Any] = []
    while not conn.queue.empty():
        item = conn.queue.get_nowait()
        out.append(("close", item.code) if isinstance(item, Closing) else json.loads(item)["type"])
    return out


def hub_of(*seats: int) -> tuple[TableHub, list[Connection]]:
    hub = TableHub("ORDERS", cast(Directory, None), cast(Link, None))
    hub.delivered = 0
    conns = []
    for n, seat in enumerate(seats):
        conn = Connection(f"gw-t/{n}", f"p{n}", 64)
        conn.welcomed(seat, 4, 0)
        hub.conns[conn.conn_id] = conn
        conns.append(conn)
    return hub, conns


def at(seq: int, wire: dict[str, Any]) -> Entry:
    return Entry(seq, "all", -1, wire, 1000 + seq, "")


async def test_a_close_reaches_only_its_connection_and_no_client_sees_an_order() -> None:
    hub, (seated, other, watcher) = hub_of(0, 1, WATCHING)
    hub.feed(
        [
            at(1, order_wire(Close(seated.conn_id, 4410))),
            at(2, {"type": "_kick", "conn": other.conn_id}),  # a table saved before `_close`
            at(3, {"type": "_close", "conn": watcher.conn_id, "code": 1000}),  # not honoured
            at(4, {"type": "_later", "conn": watcher.conn_id}),  # an order of a later version
            at(5, {"type": "ready", "seat": 2}),
        ]
    )
    assert sent(seated) == [("close", 4410)]
    assert sent(other) == [("close", 4409)]
    assert sent(watcher) == ["ready"]
    assert list(hub.recent) == [at(5, {"type": "ready", "seat": 2})]


async def test_unwatch_closes_the_watchers_and_voids_an_older_public_view() -> None:
    hub, (seated, watcher) = hub_of(0, WATCHING)
    hub.feed([at(1, order_wire(Unwatch()))])
    assert sent(watcher) == [("close", 4412)]
    assert sent(seated) == []
    assert hub.unwatched == 1
    assert hub.public is None
