"""The gateway's ordering and privacy, on real hub and connection objects (no network): events
from replies and from the stream are delivered once, in seq order, each only to the seats its
audience includes (R30), with each connection's own gapless numbering."""

from __future__ import annotations

import json
from typing import Any, cast

from actors.directory import Directory
from actors.feed import Feed
from actors.protocol import Entry, entry_from_json
from engine.events import Scope
from gateway.connection import Close, Connection
from gateway.hub import TableHub
from gateway.table_link import Link


def entry(
    seq: int,
    scope: Scope,
    index: int,
    kind: str,
    holders: tuple[str, ...] | None = None,
    **fields: Any,
) -> Entry:
    """An entry as a 4-seat table makes it: private events are stamped with the players of
    `hub_with` (seat s is player ps) unless `holders` says otherwise."""
    if holders is None:
        seats = {"all": [], "seat": [index], "team": [index, index + 2]}[scope]
        holders = tuple(f"p{s}" for s in seats)
    return Entry(seq, scope, index, {"type": kind, **fields}, 1000 + seq, "", holders)


def frames(conn: Connection) -> list[dict[str, Any]]:
    out = []
    while not conn.queue.empty():
        item = conn.queue.get_nowait()
        out.append({"close": item.code} if isinstance(item, Close) else json.loads(item))
    return out


def hub_with(*seats: int) -> tuple[TableHub, list[Connection]]:
    hub = TableHub("ABCDEF", cast(Directory, None), cast(Link, None))
    hub.delivered = 0
    conns = []
    for seat in seats:
        conn = Connection(f"gw-test/{seat}", f"p{seat}", 64)
        conn.welcomed(seat, 4, 0)
        hub.conns[conn.conn_id] = conn
        conns.append(conn)
    return hub, conns


async def test_out_of_order_and_duplicate_events_are_delivered_once_in_order() -> None:
    hub, (c0, c1) = hub_with(0, 1)
    hub.feed([entry(2, "all", -1, "floor", seat=1, open=True)])
    assert frames(c0) == []  # seq 1 is missing: hold seq 2
    hub.feed(
        [entry(1, "all", -1, "ready", seat=0), entry(2, "all", -1, "floor", seat=1, open=True)]
    )
    hub.feed([entry(1, "all", -1, "ready", seat=0)])  # a duplicate from the other source
    got = frames(c0)
    assert [(f["seq"], f["type"]) for f in got] == [(1, "ready"), (2, "floor")]
    assert got[1]["at"] == 1002
    assert [f["type"] for f in frames(c1)] == ["ready", "floor"]
    assert hub.delivered == 2
    assert hub._gap_timer is not None  # armed while seq 1 was missing
    hub._gap_timer.cancel()


async def test_r30_private_events_reach_only_their_audience() -> None:
    hub, conns = hub_with(0, 1, 2, 3)
    hub.feed(
        [
            entry(1, "team", 0, "sign", emoji="🍍", by=0),
            entry(2, "seat", 3, "round", hand=["secret"]),
            entry(3, "all", -1, "swapped", seat=3),
        ]
    )
    seen = {c.seat: [f["type"] for f in frames(c)] for c in conns}
    assert seen == {
        0: ["sign", "swapped"],
        1: ["swapped"],
        2: ["sign", "swapped"],
        3: ["round", "swapped"],
    }


async def test_r30_a_connection_whose_player_left_the_seat_gets_nothing_private() -> None:
    hub, (c0, stale) = hub_with(0, 3)
    # Seat 3 and team 1 now belong to other players (p3 moved away, a bot or p9 took over):
    # the old connection still says seat 3, but its player is not among the holders.
    hub.feed(
        [
            entry(1, "seat", 3, "round", holders=("p9",), hand=["secret"]),
            entry(2, "team", 1, "sign", holders=("p1", "p9"), emoji="🚀", by=1),
            entry(3, "seat", 3, "round", holders=(), hand=["a bot's"]),
            entry(4, "all", -1, "ready", seat=1),
        ]
    )
    assert [f["type"] for f in frames(stale)] == ["ready"]
    assert [f["type"] for f in frames(c0)] == ["ready"]


async def test_r30_entries_of_an_older_actor_without_holders_reveal_nothing() -> None:
    hub, (c0, c3) = hub_with(0, 3)
    # A log saved by a release before holders existed: six fields, read back with none.
    saved = [1, "seat", 3, {"type": "round", "hand": []}, 1001, ""]
    hub.feed([entry_from_json(saved), entry(2, "all", -1, "x")])
    assert [f["type"] for f in frames(c3)] == ["x"]
    assert [f["type"] for f in frames(c0)] == ["x"]


async def test_a_seat_changing_hands_closes_its_connection_with_4410() -> None:
    hub, (moved, other) = hub_with(0, 1)
    hub.feed([entry(1, "all", -1, "_close", conn=moved.conn_id, code=4410)])
    assert frames(moved) == [{"close": 4410}]
    assert frames(other) == []


async def test_each_connection_numbers_its_own_frames_without_gaps() -> None:
    hub, (c0, c3) = hub_with(0, 3)
    hub.feed([entry(1, "seat", 3, "round"), entry(2, "all", -1, "ready", seat=1)])
    assert [f["seq"] for f in frames(c0)] == [1]
    assert [f["seq"] for f in frames(c3)] == [1, 2]


async def test_events_before_the_snapshot_are_dropped_and_after_it_kept() -> None:
    hub, _ = hub_with()
    late = Connection("gw-test/late", "p2", 64)
    hub.conns[late.conn_id] = late
    hub.feed([entry(1, "all", -1, "ready", seat=0), entry(2, "all", -1, "ready", seat=1)])
    assert frames(late) == []  # no welcome yet: buffered
    late.event({"type": "welcome"}, 5)
    late.welcomed(2, 4, 1)  # the snapshot stands at seq 1
    assert [(f["type"], f.get("seat")) for f in frames(late)] == [("welcome", None), ("ready", 1)]


async def test_a_kick_closes_the_older_connection_with_4409_and_is_never_forwarded() -> None:
    hub, (old, other) = hub_with(0, 1)
    hub.feed([entry(1, "seat", 0, "_kick", conn=old.conn_id)])
    assert frames(old) == [{"close": 4409}]
    assert frames(other) == []


async def test_a_slow_client_is_closed_not_waited_for() -> None:
    hub, (slow, fast) = hub_with(0, 1)
    slow.queue = type(slow.queue)(3)
    hub.feed([entry(s, "all", -1, "floor", seat=1, open=s % 2 == 1) for s in range(1, 6)])
    assert frames(slow) == [{"close": 1013}]
    assert len(frames(fast)) == 5


def test_the_feed_replays_after_a_seq_and_leaves_out_a_gateways_own_events() -> None:
    feed = Feed()
    feed.append("all", -1, {"type": "ready", "seat": 0}, 1, "gw-a")
    feed.append("all", -1, {"type": "ready", "seat": 1}, 2, "gw-b")
    feed.append("all", -1, {"type": "ready", "seat": 2}, 3, "")
    assert [e[0] for e in feed.since(0, 3)] == [1, 2, 3]
    assert [e[0] for e in feed.since(1, 3, skip_origin="gw-b")] == [3]
    assert [e[0] for e in feed.since(0, 2)] == [1, 2]
    assert feed.covers(0)
    assert feed.covers(3)
