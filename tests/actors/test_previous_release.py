"""The previous release's answers read as this release's types, and its actors told apart by
name (actors/previous_release.py; remove with it). On a real Ray:
tests/cluster/test_previous_release.py."""

from __future__ import annotations

from typing import Any

import pytest

from actors.previous_release import PREVIOUS_NAME, decoded
from actors.protocol import (
    Address,
    Endpoint,
    HandedOver,
    HandOver,
    Open,
    Outcome,
    Overview,
    Probe,
    Renew,
    Seated,
    SeatOf,
    Status,
    Summary,
    TableCall,
    Unsubscribe,
)
from actors.ray_names import new_name
from engine.errors import ErrorBody

OPEN = Open("ABC234", {"players": 4}, "p-1", "Ana", (60.0, 60.0, 60.0), 60)
SUMMARY = {"code": "ABC234", "players": 4, "phase": "lobby", "watching": 0}

# Each answer as the previous release's table actor gave it (its actors/table_core.py and
# actors/table_actor.py at 72e36a3), and as this release reads it.
CASES: list[tuple[TableCall[Any], object, object]] = [
    (
        Probe(),
        {
            "pid": 7,
            "node": "n",
            "code": "",
            "seq": 0,
            "incarnation": "i",
            "links_refused": 0,
            "nice": 15,
        },
        Status(7, "n", "", 0, "i", 0, 15),
    ),
    (
        Endpoint(),
        {"host": "10.0.0.2", "port": 20001, "incarnation": "i"},
        Address("10.0.0.2", 20001, "i"),
    ),
    (Endpoint(), None, None),
    (Summary(), SUMMARY, Overview(4, "lobby", SUMMARY)),
    (SeatOf("p-1"), {"seat": 2, "players": 4, "phase": "playing"}, Seated(2, 4, "playing")),
    (SeatOf("p-1"), None, None),
    (OPEN, {"ok": True, "summary": SUMMARY}, Outcome(True)),
    (
        OPEN,
        {"ok": False, "error": {"code": "not_allowed", "message": "already open"}},
        Outcome(False, ErrorBody("not_allowed", "already open")),
    ),
    (HandOver(), {"code": "ABC234", "saved": False}, HandedOver("ABC234", False)),
    (Renew("gw"), True, True),
    (Unsubscribe("gw"), None, None),
]


@pytest.mark.parametrize(("call", "raw", "expected"), CASES)
def test_each_answer_of_the_previous_release_reads_as_this_releases_type(
    call: TableCall[Any], raw: object, expected: object
) -> None:
    assert decoded(call, raw) == expected


@pytest.mark.parametrize(
    ("call", "raw"),
    [
        (Probe(), {"pid": 7}),  # a key missing
        (Endpoint(), {"host": "h", "port": "not a port", "incarnation": "i"}),
        (OPEN, {"ok": False, "error": "refused"}),
        (HandOver(), ["ABC234", True]),
        (Renew("gw"), {"ok": True}),
    ],
)
def test_anything_else_is_a_type_error(call: TableCall[Any], raw: object) -> None:
    with pytest.raises(TypeError):
        decoded(call, raw)


def test_the_names_of_the_previous_release_and_of_this_one_are_told_apart() -> None:
    assert PREVIOUS_NAME.fullmatch("table-0123456789ab")  # uuid4().hex[:12], as it made them
    assert not PREVIOUS_NAME.fullmatch(new_name())
    assert not PREVIOUS_NAME.fullmatch("table-0123456789abcdef")
