"""The frames as every player of the kit reads and writes them (loadtests/frames.py)."""

from __future__ import annotations

import json

from loadtests.frames import Order, encode, hello, kind_of, ws_url


def test_the_websocket_of_a_gateway() -> None:
    assert ws_url("http://127.0.0.1:8000") == "ws://127.0.0.1:8000/ws"
    assert ws_url("http://127.0.0.1:8000/") == "ws://127.0.0.1:8000/ws"
    assert ws_url("https://quatro.example") == "wss://quatro.example/ws"
    # Only the scheme changes: a host named after HTTP keeps its name.
    assert ws_url("http://http-gw:80") == "ws://http-gw:80/ws"


def test_hello() -> None:
    assert hello("tok", "ABCD") == {"type": "hello", "token": "tok", "table": "ABCD"}
    assert hello("tok", "ABCD", "hi", watch=True, claimant=True) == {
        "type": "hello",
        "token": "tok",
        "table": "ABCD",
        "id": "hi",
        "watch": True,
        "claimant": True,
    }
    assert json.loads(encode(hello("tök", "ABCD"))) == hello("tök", "ABCD")
    assert "tök" in encode(hello("tök", "ABCD"))


def test_three_kinds_of_frames() -> None:
    assert kind_of({"type": "welcome", "seq": 1}) == "event"
    assert kind_of({"type": "ack", "id": "s1"}) == "answer"
    assert kind_of({"type": "error", "id": None, "code": "bad_message"}) == "unsolicited"
    assert kind_of({"type": "error", "code": "table_lost"}) == "unsolicited"


def test_events_come_one_after_another_and_a_gap_is_named() -> None:
    order = Order()
    assert [order.take({"seq": n}) for n in (1, 2, 3)] == [None, None, None]
    assert order.take({"type": "ack", "id": "x"}) is None  # answers carry no seq
    assert order.take({"seq": 5}) == "seq 5 after 3"
    assert order.take({"seq": 6}) is None  # counted again from the one that came
    assert Order().take({"seq": 2}) == "seq 2 after 0"  # a connection's first event is 1
