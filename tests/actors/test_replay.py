"""What a replay holds, entry by entry (actors/replay.py): the public view, a player's own, and
never the table's orders to its gateways."""

from __future__ import annotations

import pytest

from actors.protocol import Entry
from actors.replay import ClosedToWatchers, build, visible


def entry(seq: int, scope: str, wire: dict[str, object], holders: tuple[str, ...] = ()) -> Entry:
    return Entry(seq, scope, 0, wire, 1000 + seq, "", holders)  # type: ignore[arg-type]


def test_orders_to_gateways_are_in_no_view() -> None:
    close = entry(1, "all", {"type": "_close", "conn": "gw-1/abc", "code": 4409})
    unwatch = entry(2, "all", {"type": "_unwatch"})
    for e in (close, unwatch):
        assert not visible(e, None)
        assert not visible(e, "p1")


def test_public_and_own_views() -> None:
    public = entry(1, "all", {"type": "swapped"})
    mine = entry(2, "seat", {"type": "round", "hand": ["x"]}, ("p1",))
    theirs = entry(3, "seat", {"type": "round", "hand": ["y"]}, ("p2",))
    watchers = entry(4, "watch", {"type": "round", "hand": []})
    over = entry(5, "all", {"type": "over"})
    log = [public, mine, theirs, watchers, entry(6, "all", {"type": "_unwatch"}), over]
    assert [e["type"] for e in build(log).events] == ["swapped", "round", "over"]
    own = build(log, "p1")
    assert [e.get("hand") for e in own.events] == [None, ["x"], None]


def test_a_table_closed_to_watchers_has_no_public_view() -> None:
    closed = entry(2, "all", {"type": "settings", "bot_level": "smart", "watchers": False})
    reopened = entry(3, "all", {"type": "settings", "bot_level": "smart", "watchers": True})
    mine = entry(4, "seat", {"type": "round", "hand": ["x"]}, ("p1",))
    over = entry(5, "all", {"type": "over"})
    open_all_along = [entry(1, "all", {"type": "swapped"}), reopened, mine, over]
    assert len(build(open_all_along).events) == 3
    # Closed for a moment, even if opened again before the end: nobody could watch it all.
    for log in ([closed, mine, over], [closed, reopened, mine, over]):
        with pytest.raises(ClosedToWatchers):
            build(log)
        # Its players keep their own view, the host's settings included.
        assert [e["type"] for e in build(log, "p1").events] == [e.wire["type"] for e in log]
    # Closed only in the rematch under way (after the last `over`): not in what is served.
    assert len(build([*open_all_along, closed]).events) == 3
