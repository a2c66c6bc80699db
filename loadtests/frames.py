"""The WebSocket frames as a client reads and writes them (docs/protocol.md), apart from any
socket: the kit's one player (loadtests/player.py, asyncio) and the Locust users
(loadtests/users/, gevent) both go through here. Standard library only: the image ships it for
the chart's load test.

What a client receives is one of three kinds: an event (it has a `seq`, one more than the last
event of the same connection: a gap is a lost event), an answer to a frame the client sent (it
carries that frame's `id`: ack, error or pong), or an answer without an id (an error about a
frame that had none, or a notice such as `table_lost`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

Frame = dict[str, Any]
Kind = Literal["event", "answer", "unsolicited"]


def ws_url(base: str) -> str:
    """The gateway's WebSocket for its HTTP base URL."""
    base = base.rstrip("/")
    if base.startswith("https://"):
        return "wss://" + base.removeprefix("https://") + "/ws"
    return "ws://" + base.removeprefix("http://") + "/ws"


def hello(
    token: str,
    table: str,
    frame_id: str | None = None,
    *,
    watch: bool = False,
    claimant: bool = False,
) -> Frame:
    """The first frame of a connection: this session, at (or watching) this table."""
    frame: Frame = {"type": "hello", "token": token, "table": table}
    if frame_id is not None:
        frame["id"] = frame_id
    if watch:
        frame["watch"] = True
    if claimant:
        frame["claimant"] = True
    return frame


def encode(frame: Frame) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def kind_of(frame: Frame) -> Kind:
    if "seq" in frame:
        return "event"
    return "answer" if frame.get("id") is not None else "unsolicited"


@dataclass
class Order:
    """One connection's events in order: `take` says what is wrong with the next one, if
    anything (the first event of a connection has seq 1)."""

    last_seq: int = 0

    def take(self, frame: Frame) -> str | None:
        if "seq" not in frame:
            return None
        seq = int(frame["seq"])
        problem = None if seq == self.last_seq + 1 else f"seq {seq} after {self.last_seq}"
        self.last_seq = seq
        return problem
