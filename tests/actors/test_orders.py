"""Orders to gateways are written and read in one place, as the same dicts every version of
gateway and table actor has sent (a rolling upgrade mixes them): these pin those bytes."""

from __future__ import annotations

import json

from actors.orders import (
    CLOSE_REPLACED,
    CLOSE_SEAT_CHANGED,
    CLOSE_SEAT_GIVEN,
    Close,
    Unwatch,
    is_order,
    order_of,
    order_wire,
)
from actors.protocol import Entry
from actors.replay import visible


def test_orders_are_written_as_the_dicts_older_gateways_read() -> None:
    close = json.dumps(order_wire(Close("gw-1/abc", CLOSE_SEAT_CHANGED)))
    assert close == '{"type": "_close", "conn": "gw-1/abc", "code": 4410}'
    assert json.dumps(order_wire(Unwatch())) == '{"type": "_unwatch"}'


def test_what_is_written_reads_back_as_the_same_order() -> None:
    for order in (Close("gw-2/x", code) for code in (4409, 4410, 4411)):
        assert order_of(order_wire(order)) == order
    assert order_of(order_wire(Unwatch())) == Unwatch()
    assert (CLOSE_REPLACED, CLOSE_SEAT_CHANGED, CLOSE_SEAT_GIVEN) == (4409, 4410, 4411)


def test_the_legacy_kick_is_a_close_4409() -> None:
    assert order_of({"type": "_kick", "conn": "gw-1/old"}) == Close("gw-1/old", 4409)
    assert order_of({"type": "_close", "conn": "gw-1/old"}) == Close("gw-1/old", 4409)


def test_an_order_this_version_does_not_carry_out_is_still_kept_from_clients() -> None:
    for unknown in ({"type": "_close", "conn": "c", "code": 1000}, {"type": "_later", "x": 1}):
        assert is_order(unknown)
        assert order_of(unknown) is None
        assert not visible(Entry(3, "all", -1, unknown, 0, ""), None)


def test_events_are_not_orders() -> None:
    for event in ({"type": "play", "seat": 0}, {"seat": 1}, {"type": 5}):
        assert not is_order(event)
        assert order_of(event) is None
