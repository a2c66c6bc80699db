"""A table's published events and the gateways that follow them.

Every event the engine produces gets the table's next `seq` and is kept in a bounded log. Each
gateway follows a table through one subscription (on its data-plane connection, or a Ray
streaming generator): it is woken when events are published, takes everything past what it was
last sent, and sends one batch. Events
that a gateway's own command caused travel back in that command's reply instead, so they are left
out of its stream (`origin`); a fresh subscription replays everything after the seq it names.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from actors.protocol import Entry
from engine.events import Scope

LOG_LENGTH = 1024
# A Ray subscription not renewed for this long ends, and a gateway whose data-plane connection
# broke is given this long to come back: then its gateway is taken for gone.
LEASE_S = 30.0


@dataclass
class Subscriber:
    gateway: str
    sent: int
    lease_until: float = field(default_factory=lambda: time.monotonic() + LEASE_S)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False  # replaced by a newer subscription, or cancelled

    def renew(self) -> None:
        self.lease_until = time.monotonic() + LEASE_S


class Feed:
    def __init__(self, seq: int = 0, log: Iterable[Entry] = ()) -> None:
        self.seq = seq  # last seq assigned
        self.published = seq  # last seq whose state is persisted (or given up on) and visible
        self.log: deque[Entry] = deque(log, maxlen=LOG_LENGTH)
        self.subs: dict[str, Subscriber] = {}

    def append(
        self,
        scope: Scope,
        index: int,
        wire: dict[str, Any],
        at: int,
        origin: str,
        holders: tuple[str, ...] = (),
    ) -> Entry:
        self.seq += 1
        entry = Entry(self.seq, scope, index, wire, at, origin, holders)
        self.log.append(entry)
        return entry

    def publish(self, upto: int) -> None:
        if upto <= self.published:
            return
        self.published = upto
        for sub in self.subs.values():
            sub.wake.set()

    def since(self, after: int, upto: int, skip_origin: str | None = None) -> list[Entry]:
        out: list[Entry] = []
        for e in reversed(self.log):
            if e.seq <= after:
                break
            if e.seq <= upto and (skip_origin is None or e.origin != skip_origin):
                out.append(e)
        out.reverse()
        return out

    def covers(self, after: int) -> bool:
        """Whether the log still holds every event after `after`."""
        return after >= self.seq or (bool(self.log) and self.log[0].seq <= after + 1)

    def subscribe(self, gateway: str, after: int) -> Subscriber:
        old = self.subs.get(gateway)
        if old is not None:
            old.ended = True
            old.wake.set()
        sub = Subscriber(gateway=gateway, sent=after)
        self.subs[gateway] = sub
        return sub

    def drop(self, sub: Subscriber) -> bool:
        """Forget `sub`; True when it was still the gateway's current subscription."""
        if self.subs.get(sub.gateway) is sub:
            del self.subs[sub.gateway]
            return True
        return False
