"""One player's WebSocket, seen from the table's side: what it may see, its own `seq` numbering,
a bounded send queue, and its flood guard.

Nothing here awaits the network: frames are queued and the socket's writer task sends them, so a
slow client only ever fills its own queue. A full queue closes the connection (1013): the player
reconnects and gets a fresh snapshot, and nobody else waits.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from actors.protocol import Entry
from engine.events import Audience, Scope
from gateway import metrics
from gateway.errors import CLOSE_TRY_AGAIN


class Close:
    """Queued after the last frame: the writer closes the socket with this code."""

    def __init__(self, code: int, reason: str = "") -> None:
        self.code = code
        self.reason = reason


Outgoing = str | Close


class Connection:
    def __init__(self, conn_id: str, player_id: str, queue_size: int) -> None:
        self.conn_id = conn_id
        self.player_id = player_id
        self.seat = -1
        self.players = 0
        self.after: int | None = None  # seq of the snapshot sent; None until `welcome`
        self.early: list[Entry] = []  # events seen before the snapshot, filtered at `welcome`
        self.out_seq = 0
        self.queue: asyncio.Queue[Outgoing] = asyncio.Queue(queue_size)
        self.closing = False
        # Known to the table by itself (a seat's connection, or a watcher who may take a bot's
        # seat), rather than served from its gateway's shared public view.
        self.registered = True
        self.gone = asyncio.Event()  # set once the socket's writer has ended (its close sent)

    @property
    def watching(self) -> bool:
        """Welcomed without a seat: it watches."""
        return self.after is not None and self.seat < 0

    # -- sending ------------------------------------------------------------------------------
    def _put(self, item: Outgoing) -> None:
        if self.closing:
            return
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            metrics.SLOW_CLOSES.inc()
            self.close(CLOSE_TRY_AGAIN, "too slow: reconnect for a fresh snapshot")

    def close(self, code: int, reason: str = "") -> None:
        """Close after what is queued; when the queue is full, drop it: the client resyncs."""
        if self.closing:
            return
        self.closing = True
        if self.queue.full():
            while not self.queue.empty():
                self.queue.get_nowait()
        self.queue.put_nowait(Close(code, reason))

    def answer(self, frame: dict[str, Any]) -> None:
        """ack / error / pong: no seq."""
        self._put(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))

    def event(self, event: dict[str, Any], at: int) -> None:
        """An event frame of this connection's own numbering (welcome included)."""
        self.out_seq += 1
        frame = {**event, "seq": self.out_seq, "at": at}
        self._put(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))

    def event_body(self, body: str, at: int) -> None:
        """The same, from an event already serialised once for every connection (`body` is the
        JSON object's inside, without braces)."""
        self.out_seq += 1
        self._put(f'{{{body},"seq":{self.out_seq},"at":{at}}}')

    # -- what this seat may see (R30) ---------------------------------------------------------
    def sees(self, scope: Scope, index: int, holders: tuple[str, ...]) -> bool:
        """The engine's own audience rule, checked against the player too: a private event
        reaches this connection only if its player held the seat when the event happened
        (R30), so a connection left over from a seat that changed hands gets nothing. A
        connection without a seat (-1: it watches) sees only `all` and `watch`; a seated one never
        sees `watch` (its own events carry the same moment, with its hand)."""
        if scope == "all":
            return True
        if scope == "watch":
            return self.seat < 0
        if self.seat < 0 or self.player_id not in holders:
            return False
        return Audience(scope, index).includes(self.seat, self.players)

    def deliver(self, entry: Entry, body: str) -> None:
        if self.after is None:
            self.early.append(entry)
            return
        if entry.seq > self.after and self.sees(entry.scope, entry.scope_index, entry.holders):
            self.event_body(body, entry.at)

    def welcomed(self, seat: int, players: int, after: int) -> None:
        """The snapshot at `after` is queued: now send the events seen meanwhile that follow it."""
        self.seat, self.players, self.after = seat, players, after
        early, self.early = self.early, []
        for entry in early:
            self.deliver(entry, body_of(entry.wire))


def body_of(wire: dict[str, Any]) -> str:
    """An event's JSON without its braces, so `seq` and `at` can be added per connection."""
    return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))[1:-1]


class FloodGuard:
    """A token bucket: `rate` frames a second, bursts of `burst`. Refused frames fill a second
    bucket that leaks at `rate`: past `strikes` of them the connection is `flooding` and is
    closed (1008) rather than answered frame by frame. A client a little over the rate is
    only refused; one sending thousands a second is gone after `strikes` refusals."""

    def __init__(self, rate: float, burst: float, strikes: float = 100) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.strikes = strikes
        self.refused = 0.0
        self.at = time.monotonic()

    @property
    def flooding(self) -> bool:
        return self.refused > self.strikes

    def allow(self) -> bool:
        now = time.monotonic()
        elapsed = now - self.at
        self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
        self.refused = max(0.0, self.refused - elapsed * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        return False
